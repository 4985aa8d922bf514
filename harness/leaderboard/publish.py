"""Writing the leaderboard folder safely, and pushing it to the Hugging Face hub.

A build writes everything into a temporary folder next to the target, then swaps it in (old
folder renamed away, new one renamed in, old one removed), so a crash at any point before the
swap leaves the published leaderboard as it was. Only a folder a build wrote itself is replaced
(`ownership`: the marker file, the refusals). A lock file next to the target (flock, released by
the kernel if the process dies, removed when the build ends) keeps two builds from interleaving.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_bytes, atomic_write_json, new_folder_beside
from vlbench.errors import UsageError
from vlbench.leaderboard.build import BuildReport
from vlbench.leaderboard.ownership import (
    MARKER,
    board_label,
    check_out,
    marker_document,
    refuse_drops,
)
from vlbench.leaderboard.page import to_html
from vlbench.leaderboard.plot import render_svg
from vlbench.leaderboard.render import to_csv, to_json, to_markdown

CACHE_FOLDER = "cache"
PLOT_FILE = "plot.svg"
OLD_PLOT_FILE = "plot.png"  # what earlier builds published: a push deletes it from the repo


def lock_path(out: Path) -> Path:
    out = Path(os.path.abspath(out))
    return out.parent / f".{out.name}.lock"


@contextlib.contextmanager
def build_lock(out: Path) -> Iterator[None]:
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise UsageError(f"another leaderboard build is writing {out} (lock {path} is held); "
                                 "wait for it to finish") from None
            raise
        # The build before us removes the file before releasing it: if we opened that file just
        # before its removal, our lock is on a file no one else can find; open the current one.
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        os.close(fd)  # closing releases the lock


def published_metrics(out: Path) -> dict[str, set[str]]:
    """Metrics with a value per benchmark in the current leaderboard.json (what a build must keep)."""
    try:
        doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
        return {b["benchmark"]: {k for e in b["entries"] for k, v in e["scores"].items() if v is not None}
                for b in doc["boards"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def render_files(report: BuildReport) -> dict[str, bytes]:
    """Every published file, by name, as bytes."""
    svg = render_svg(report)
    files = {
        "README.md": to_markdown(report, PLOT_FILE if svg else None).encode("utf-8"),
        "index.html": to_html(report, svg).encode("utf-8"),
        "leaderboard.csv": to_csv(report).encode("utf-8"),
        "leaderboard.json": to_json(report).encode("utf-8"),
    }
    if svg:
        files[PLOT_FILE] = svg.encode("utf-8")
    return files


def board_rows(report: BuildReport) -> dict[str, list[str]]:
    """What a build publishes, as the marker records it: board label -> rows."""
    return {board_label(b.benchmark.id, b.benchmark.version):
            [e.path for e in b.entries] + [f"{r.source_file}: {r.method}" for r in b.reported]
            for b in report.boards}


def write_folder(report: BuildReport, folder: Path) -> list[Path]:
    written = []
    for name, data in render_files(report).items():
        atomic_write_bytes(folder / name, data)
        written.append(folder / name)
    written += report.cache.write_used(folder / CACHE_FOLDER)
    marker = marker_document(board_rows(report), (p.relative_to(folder).as_posix() for p in written))
    atomic_write_json(folder / MARKER, marker)
    return [*written, folder / MARKER]


def swap_in(new: Path, out: Path) -> None:
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        if old is not None:
            os.rename(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def publish(report: BuildReport, out: str | os.PathLike, *,
            protect: Sequence[tuple[str, str | os.PathLike | None]] = (), allow_drop: bool = False) -> list[Path]:
    """Write the report into a fresh folder and swap it in as `out`; returns the files, under `out`.

    Refuses (UsageError, nothing written) an `out` that a build did not write, one that is or
    holds a `protect` folder, and, unless `allow_drop`, a report that lacks boards or rows that
    `out` published."""
    previous = check_out(out, protect)
    refuse_drops(previous, board_rows(report), allow_drop)
    out = Path(os.path.abspath(out))
    made = missing_folders(out.parent)
    staging = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = new_folder_beside(out, f".{out.name}.new-")
        written = write_folder(report, staging)
        swap_in(staging, out)
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        remove_empty(made)
        raise
    return [out / p.relative_to(staging) for p in written]


def missing_folders(folder: Path) -> list[Path]:
    """`folder` and its ancestors that do not exist yet, deepest first."""
    missing = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Undo `mkdir -p` after a failure: remove the folders we made, if still empty."""
    for path in folders:
        try:
            os.rmdir(path)
        except OSError:
            return


# Every name a vlbench build publishes (render_files); a push may delete these from the repo when
# the new build no longer has them, and cache entries and the marker that older pushes uploaded.
PUBLISHED_NAMES = frozenset({"README.md", "index.html", "leaderboard.csv", "leaderboard.json", PLOT_FILE,
                             OLD_PLOT_FILE})
DEFAULT_TITLE = "vlbench leaderboard"


def upload_plan(folder: Path) -> list[tuple[str, int]]:
    """The files a push publishes, with their sizes: the built folder without its score cache and
    build marker (a reader of the published board needs neither; the cache is what lets the next
    local build reuse scores)."""
    if not (folder / "index.html").is_file():
        raise UsageError(f"{folder} is not a built leaderboard (no index.html); run: vlbench leaderboard build")
    plan = []
    for p in folder.rglob("*"):
        name = p.relative_to(folder).as_posix()
        if p.is_file() and not _build_state(name):
            plan.append((name, p.stat().st_size))
    return sorted(plan)


def _build_state(name: str) -> bool:
    return name in (MARKER, CACHE_FOLDER) or name.startswith(CACHE_FOLDER + "/")


def written_by_vlbench(name: str) -> bool:
    """Whether a file in a hub repo is one a vlbench push uploads (now or in an earlier version)."""
    return name in PUBLISHED_NAMES or _build_state(name)


def front_matter(repo_type: str, title: str) -> str:
    """The YAML block a hub repo reads its settings from (the README's front matter): a Space
    serves index.html as a static page; a dataset repo's viewer shows leaderboard.csv."""
    quoted = json.dumps(title)  # a JSON string is a valid YAML scalar, whatever the title holds
    if repo_type == "space":
        return f"---\ntitle: {quoted}\nsdk: static\napp_file: index.html\npinned: false\n---\n"
    return (f"---\npretty_name: {quoted}\nconfigs:\n- config_name: default\n  data_files:\n"
            "  - split: leaderboard\n    path: leaderboard.csv\n---\n")


def readme_for_hub(readme: str, repo_type: str, title: str) -> str:
    """The built README with the repo's front matter in front (replacing any it had)."""
    if readme.startswith("---\n"):
        end = readme.find("\n---\n", 4)
        if end != -1:
            readme = readme[end + len("\n---\n"):]
    return front_matter(repo_type, title) + "\n" + readme.lstrip("\n")


@dataclass
class PushReport:
    """What a push sent: the files uploaded, the stale files it deleted from the repo, and the
    files it left there because vlbench did not write them."""

    uploaded: list[tuple[str, int]]
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    created: bool = False


def push(folder: str | os.PathLike, repo_id: str, repo_type: str = "dataset", dry_run: bool = False,
         token: str | None = None, title: str = DEFAULT_TITLE) -> PushReport:
    """Make hub repo `repo_id` hold the built folder: create the repo when missing (a Space is a
    static one), upload the published files (README.md with the repo's front matter), and delete
    in the same commit the files an earlier push uploaded that this build no longer has. Files
    vlbench never writes are left in the repo (listed in the report). The token is the argument,
    else huggingface_hub's own lookup ($HF_TOKEN, or the token `hf auth login` saved)."""
    folder = Path(folder)
    plan = upload_plan(folder)
    if dry_run:
        return PushReport(plan)
    try:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
    except ImportError:
        raise UsageError("pushing needs huggingface_hub 0.25 or newer: pip install 'vlbench[hub]'") from None
    token = token or get_token()
    if not token:
        raise UsageError(f"no Hugging Face token: set HF_TOKEN or run `hf auth login` (a write token for {repo_id})")
    api = HfApi(token=token)
    try:
        # One plain request first: without a network or with a bad token it fails at once, where
        # the upload's own requests retry with backoff (about 25 s) before giving up.
        api.whoami()
    except Exception as exc:
        raise UsageError(f"cannot reach the Hugging Face hub with this token: {_first_line(exc)}") from None
    report = PushReport(plan)
    try:
        report.created = not api.repo_exists(repo_id, repo_type=repo_type)
        if report.created:
            api.create_repo(repo_id, repo_type=repo_type, exist_ok=True,
                            space_sdk="static" if repo_type == "space" else None)
        remote = api.list_repo_files(repo_id, repo_type=repo_type)
        published = {name for name, _ in plan}
        report.deleted = sorted(n for n in remote if n not in published and written_by_vlbench(n))
        report.kept = sorted(n for n in remote if n not in published and not written_by_vlbench(n)
                             and n != ".gitattributes")
        operations: list[Any] = []
        for name, _ in plan:
            data = (folder / name).read_bytes()
            if name == "README.md":
                data = readme_for_hub(data.decode("utf-8"), repo_type, title).encode("utf-8")
            operations.append(CommitOperationAdd(path_in_repo=name, path_or_fileobj=data))
        operations += [CommitOperationDelete(path_in_repo=n) for n in report.deleted]
        api.create_commit(repo_id, operations, repo_type=repo_type, commit_message="vlbench leaderboard build")
    except Exception as exc:  # network, auth, permissions: all reach the user as one sentence
        raise UsageError(f"could not upload to {repo_type} {repo_id}: {_first_line(exc)}") from None
    return report


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no details'}"
