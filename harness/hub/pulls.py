"""Reading the board's pull requests from the hub: which are open, where each started, what it
changes, its files' bytes, and who owns an entry on main.

- A pull request's changes are relative to where it started (the parent of its first commit,
  which the hub records in the commit event), never to main's current head: an entry merged since
  is not "deleted" by an older pull request.
- Changes are found by walking the two trees folder by folder, descending only into folders whose
  git oid differs, so a pull request that adds one file costs a few listings whatever the repo
  holds, and one that adds thousands stops at `MAX_CHANGES`.
- Sizes come from the hub's own listing before any download; a file over the cap is never
  fetched.
- The owner of an entry is the hub account whose pull request intake merged with it: read back
  from intake's markers on merged pull requests, newest first, only as far as needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlbench.hub import Hub, HubFailure, status_of
from vlbench.hub.markers import READY, Marker, own_markers

MAX_CHANGES = 50
OPEN = ("open", "draft")


@dataclass(frozen=True)
class Change:
    path: str
    kind: str  # added, modified, deleted
    size: int  # bytes at the head (0 for a deletion)
    oid: str = ""  # the git oid the hub lists at the head ("" for a deletion)


class TooManyChanges(Exception):
    pass


@dataclass
class PullState:
    num: int
    title: str
    author: str
    status: str  # open or draft
    head: str | None  # None: no commit yet
    base: str | None  # the commit the pull request started from
    conflicts: list[str] | bool
    markers: list[Marker] = field(default_factory=list)

    def marker_for(self, head: str) -> Marker | None:
        """The last verdict intake posted for this head revision, if any."""
        mine = [m for m in self.markers if m.head == head]
        return mine[-1] if mine else None


def open_pulls(hub: Hub) -> list[Any]:
    """Every open pull request, collected before anything is changed: the hub pages the listing
    lazily by offset, so closing or merging while iterating would skip some."""
    return hub.call("listing the open pull requests", lambda **kw: list(hub.api.get_repo_discussions(
        hub.repo_id, discussion_type="pull_request", discussion_status="open", **kw)))


def pull_heads(hub: Hub) -> dict[int, str]:
    refs = hub.call("listing the pull requests' refs", hub.api.list_repo_refs, hub.repo_id, include_pull_requests=True)
    heads = {}
    for ref in refs.pull_requests or []:
        tail = ref.ref.rsplit("/", 1)[-1]
        if ref.ref.startswith("refs/pr/") and tail.isdigit():
            heads[int(tail)] = ref.target_commit
    return heads


def main_head(hub: Hub) -> str:
    info = hub.call("reading the repo's main branch", hub.api.repo_info, hub.repo_id, revision="main")
    return str(info.sha)


def read_pull(hub: Hub, num: int, heads: dict[int, str]) -> PullState:
    details = hub.call(f"reading pull request #{num}", hub.api.get_discussion_details, hub.repo_id, num)
    commits = [getattr(e, "_event", {}) for e in details.events if e.type == "commit"]
    parents = ((commits[0].get("data") or {}).get("parents") or [None]) if commits else [None]
    last = (commits[-1].get("data") or {}).get("oid") if commits else None
    head = heads.get(num) or last
    return PullState(num, details.title, details.author, details.status, head if commits else None, parents[0],
                     details.conflicting_files or [], own_markers(details.events, hub.user))


class Trees:
    """Folder listings by (revision, folder), kept for the run: many pull requests start from the
    same main commit."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.cache: dict[tuple[str, str], dict[str, Any]] = {}

    def listing(self, revision: str, folder: str) -> dict[str, Any]:
        key = (revision, folder)
        if key not in self.cache:
            self.cache[key] = {e.path: e for e in self._entries(revision, folder, recursive=False)}
        return self.cache[key]

    def _entries(self, revision: str, folder: str, recursive: bool) -> Iterator[Any]:
        try:
            yield from self.hub.api.list_repo_tree(self.hub.repo_id, path_in_repo=folder or None, revision=revision,
                                                   recursive=recursive, repo_type=self.hub.repo_type)
        except Exception as exc:
            if status_of(exc) == 404 and folder:
                return  # the folder does not exist at this revision
            raise HubFailure(f"listing {folder or 'the repo'} at {revision[:12]} failed: {exc}") from exc

    def files_under(self, revision: str, folder: str, limit: int) -> Iterator[Any]:
        """The files under `folder` (all levels), stopping after `limit + 1`."""
        count = 0
        for entry in self._entries(revision, folder, recursive=True):
            if is_folder(entry):
                continue
            count += 1
            yield entry
            if count > limit:
                return

    def changes(self, base: str, head: str, limit: int = MAX_CHANGES) -> list[Change]:
        """What `head` changes relative to `base`; TooManyChanges past `limit` files."""
        changes: list[Change] = []

        def add(change: Change) -> None:
            changes.append(change)
            if len(changes) > limit:
                raise TooManyChanges

        folders = [""]
        while folders:
            folder = folders.pop()
            old, new = self.listing(base, folder), self.listing(head, folder)
            for path in sorted(set(old) | set(new)):
                a, b = old.get(path), new.get(path)
                if a is not None and b is not None and is_folder(a) == is_folder(b) and oid(a) and oid(a) == oid(b):
                    continue
                if a is not None and b is not None and is_folder(a) and is_folder(b):
                    folders.append(path)
                    continue
                if a is not None and is_folder(a):
                    for gone in self.files_under(base, path, limit):
                        add(Change(gone.path, "deleted", 0))
                elif a is not None and (b is None or is_folder(b)):
                    add(Change(path, "deleted", 0))
                if b is not None and is_folder(b):
                    for made in self.files_under(head, path, limit):
                        add(Change(made.path, "added", size_of(made), oid(made) or ""))
                elif b is not None:
                    add(Change(path, "modified" if a is not None and not is_folder(a) else "added", size_of(b),
                                      oid(b) or ""))
        return sorted(changes, key=lambda c: c.path)


def is_folder(entry: Any) -> bool:
    return not hasattr(entry, "blob_id")


def oid(entry: Any) -> str | None:
    return getattr(entry, "blob_id", None) or getattr(entry, "tree_id", None)


def size_of(entry: Any) -> int:
    lfs = getattr(entry, "lfs", None)
    return int(lfs.size if lfs is not None else entry.size)


def download(hub: Hub, path: str, revision: str, into: Path) -> Path:
    """The file's bytes at `revision` (a commit id), in the run's temporary folder."""
    try:
        return Path(hub.api.hf_hub_download(hub.repo_id, path, revision=revision, repo_type=hub.repo_type,
                                            cache_dir=str(into)))
    except Exception as exc:
        raise HubFailure(f"downloading {path} at {revision[:12]} failed: {exc}") from exc


class Owners:
    """Who submitted each entry intake merged: path -> hub account, read from intake's own markers
    on merged pull requests (newest first) as far as a question needs, plus this run's merges."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.known: dict[str, str] = {}
        self.recent: dict[str, str] = {}  # merged in this run: newer than anything read
        self._scan: Iterator[None] | None = None

    def record(self, paths: tuple[str, ...], author: str) -> None:
        for path in paths:
            self.recent[path] = author

    def owner(self, path: str) -> str | None:
        if path in self.recent:
            return self.recent[path]
        if self._scan is None:
            self._scan = self._read()
        while path not in self.known:
            if next(self._scan, StopIteration) is StopIteration:
                return None
        return self.known[path]

    def _read(self) -> Iterator[None]:
        listed = self.hub.call("listing merged pull requests", lambda **kw: list(self.hub.api.get_repo_discussions(
            self.hub.repo_id, discussion_type="pull_request", discussion_status="all", **kw)))
        for item in sorted((d for d in listed if d.status == "merged"), key=lambda d: -d.num):
            details = self.hub.call(f"reading pull request #{item.num}", self.hub.api.get_discussion_details,
                                    self.hub.repo_id, item.num)
            ready = [m for m in own_markers(details.events, self.hub.user) if m.verdict == READY]
            if ready:
                for path in ready[-1].entries:
                    self.known.setdefault(path, ready[-1].author)
            yield None
