"""A stand-in for the Hugging Face Hub on 127.0.0.1 with git history, pull requests and discussions:
what `vlbench submit` and `vlbench leaderboard intake` reach through the real huggingface_hub
client. (The push tests' `tests/harness/leaderboard/hub_standin.py` serves one flat file list;
this one keeps commits and refs, so a pull request's changes are relative to where it started.)

State, in memory: per repo, commits (oid, parents, files), refs (`refs/heads/main`,
`refs/pr/N`), owners (who may write to main, merge and close), and discussions with their events
(comment, commit with its parents, status-change). Tokens map to users (`TOKENS`); reads are open
(a public repo), writes need a token. Shapes follow what huggingface_hub 0.25 to 2.x send and read
(hf_api.py, community.py, _commit_api.py, file_download.py):

- GET  /api/whoami-v2
- GET  /api/{type}s/{id}[/revision/{rev}]              repo_info: sha, siblings
- GET  /api/{type}s/{id}/refs?include_prs=1             branches, tags, converts, pullRequests
- GET  /api/{type}s/{id}/tree/{rev}[/{path}]            recursive or one level, folder oids, cursor
                                                        pages (Link: rel="next"), 404 EntryNotFound
- POST /api/{type}s/{id}/paths-info/{rev}               form: paths (repeated), expand
- POST /api/{type}s/{id}/preupload/{rev}[?create_pr=1]  every file "regular", with the remote oid
- POST /api/{type}s/{id}/commit/{rev}[?create_pr=1]     ndjson header/file/deletedFile; create_pr
                                                        opens a ready PR on a new refs/pr/N from
                                                        the parent commit; a commit to refs/pr/N
                                                        lands there (and is a commit event)
- GET  /api/{type}s/{id}/discussions?p=&type=&status=&author=   pages of `page_size` newest first,
                                                        {discussions, count, start}; "open" holds drafts
- POST /api/{type}s/{id}/discussions                    create_discussion / create_pull_request (draft)
- GET  /api/{type}s/{id}/discussions/{num}?diff=1       details: events, changes.base, filesWithConflicts
- POST /api/{type}s/{id}/discussions/{num}/comment      {"comment"} -> {"newMessage": event}
- POST /api/{type}s/{id}/discussions/{num}/status       {"status", "comment"?} -> {"newStatus": event}
- POST /api/{type}s/{id}/discussions/{num}/merge        three-way: 409 on conflicts, 400 on a draft
- HEAD/GET /[{type}s/]{id}/resolve/{rev}/{path}         X-Repo-Commit, ETag (git blob oid), Content-Length
- POST /api/validate-yaml, POST /api/repos/create

`hook(stage, method, path)` lets a test inject faults: called with stage "before" (return
"fail" for a 500 without doing anything) and "applied" (after the change is made, before the
response: return "drop" to close the connection unanswered; a test may kill its client here).
One module (over 400 lines): the server's state and its handler are read together.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.harness.standin_server import serving

TOKENS = {"hf_maintainer": "maintainer", "hf_alice": "alice", "hf_bob": "bob", "hf_carol": "carol"}
MAINTAINER = "hf_maintainer"
REPO = r"(?P<type>model|dataset|space)s/(?P<id>[^/]+/[^/]+)"
EPOCH = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)


def blob_oid(data: bytes) -> str:
    """git's object id of a file's bytes (what the hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _tree_oid(files: dict[str, bytes], folder: str) -> str:
    prefix = f"{folder}/" if folder else ""
    lines = sorted(f"{p[len(prefix):]} {blob_oid(d)}" for p, d in files.items() if p.startswith(prefix))
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


@dataclass
class Commit:
    oid: str
    parents: list[str]
    files: dict[str, bytes]
    title: str
    author: str


@dataclass
class Discussion:
    num: int
    title: str
    author: str
    is_pr: bool
    status: str  # open, draft, closed, merged
    created: int
    events: list[dict[str, Any]] = field(default_factory=list)
    merge_commit: str | None = None

    @property
    def ref(self) -> str:
        return f"refs/pr/{self.num}"


@dataclass
class Repo:
    id: str
    type: str
    owners: set[str]
    commits: dict[str, Commit] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    discussions: dict[int, Discussion] = field(default_factory=dict)

    def head(self, ref: str = "refs/heads/main") -> Commit:
        return self.commits[self.refs[ref]]

    def files(self, ref: str = "refs/heads/main") -> dict[str, bytes]:
        return self.head(ref).files

    def resolve(self, rev: str) -> Commit | None:
        for ref in (rev, f"refs/heads/{rev}", f"refs/tags/{rev}"):
            if ref in self.refs:
                return self.commits[self.refs[ref]]
        return self.commits.get(rev)

    def pull(self, num: int) -> Discussion:
        return self.discussions[num]

    def comments(self, num: int, author: str | None = None) -> list[str]:
        return [e["data"]["latest"]["raw"] for e in self.discussions[num].events
                if e["type"] == "comment" and (author is None or e["author"]["name"] == author)]

    def base_of(self, num: int) -> str:
        commits = [e for e in self.discussions[num].events if e["type"] == "commit"]
        return commits[0]["data"]["parents"][0] if commits else self.refs[self.discussions[num].ref]


@dataclass
class HubStandIn:
    url: str = ""
    repos: dict[tuple[str, str], Repo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    page_size: int = 50  # discussions per page
    tree_page_size: int = 1000
    hook: Callable[[str, str, str], str | None] | None = None
    clock: int = 0

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def stamp(self, tick: int | None = None) -> str:
        moment = EPOCH + dt.timedelta(seconds=self.tick() if tick is None else tick)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def add_repo(self, repo_type: str, repo_id: str, files: dict[str, bytes], owner: str = "maintainer") -> Repo:
        repo = Repo(repo_id, repo_type, {owner})
        commit = self.new_commit(repo, [], {".gitattributes": b"*.gz filter=lfs\n", **files}, "initial commit", owner)
        repo.refs["refs/heads/main"] = commit.oid
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def new_commit(self, repo: Repo, parents: list[str], files: dict[str, bytes], title: str, author: str) -> Commit:
        seed = f"{parents} {_tree_oid(files, '')} {title} {self.tick()}"
        commit = Commit(hashlib.sha1(seed.encode()).hexdigest(), parents, dict(files), title, author)
        repo.commits[commit.oid] = commit
        return commit

    def event(self, kind: str, author: str, data: dict[str, Any]) -> dict[str, Any]:
        tick = self.tick()
        return {"id": f"{tick:024x}", "type": kind, "createdAt": self.stamp(tick),
                "author": {"_id": f"{abs(hash(author)) % 16**24:024x}", "name": author, "type": "user"}, "data": data}

    def comment_event(self, author: str, text: str) -> dict[str, Any]:
        event = self.event("comment", author, {"edited": False, "hidden": False, "numEdits": 0, "editors": [author],
                                              "reactions": [], "isReport": False})
        event["data"]["latest"] = {"raw": text, "html": f"<p>{text}</p>", "updatedAt": event["createdAt"],
                                   "author": {"name": author}}
        return event

    def open_pull(self, repo: Repo, author: str, title: str, description: str, draft: bool,
                  parent: str | None = None) -> Discussion:
        num = max(repo.discussions, default=0) + 1
        pull = Discussion(num, title, author, True, "draft" if draft else "open", self.tick())
        pull.events.append(self.comment_event(author, description))
        repo.refs[pull.ref] = parent or repo.refs["refs/heads/main"]
        repo.discussions[num] = pull
        return pull

    def commit_to(self, repo: Repo, ref: str, author: str, title: str, added: dict[str, bytes],
                  deleted: list[str] = ()) -> Commit:  # type: ignore[assignment]
        """What a participant's `create_commit` does (also used by tests to set up history)."""
        parent = repo.head(ref)
        files = {p: d for p, d in parent.files.items() if p not in deleted and not
                 any(p.startswith(f"{x.rstrip('/')}/") for x in deleted)}
        files.update(added)
        commit = self.new_commit(repo, [parent.oid], files, title, author)
        repo.refs[ref] = commit.oid
        match = re.fullmatch(r"refs/pr/(\d+)", ref)
        if match:
            repo.discussions[int(match[1])].events.append(
                self.event("commit", author, {"subject": title, "oid": commit.oid, "parents": [parent.oid]}))
        return commit

    def conflicts(self, repo: Repo, num: int) -> list[str]:
        base = repo.commits[repo.base_of(num)].files
        head = repo.files(repo.pull(num).ref)
        main = repo.files()
        found = []
        for path in sorted(set(base) | set(head)):
            if base.get(path) == head.get(path):
                continue  # the pull request left it alone
            if main.get(path) not in (base.get(path), head.get(path)):
                found.append(path)
        return found

    def merge(self, repo: Repo, num: int, author: str) -> Commit:
        pull = repo.pull(num)
        base = repo.commits[repo.base_of(num)].files
        head = repo.files(pull.ref)
        files = dict(repo.files())
        for path in set(base) | set(head):
            if base.get(path) != head.get(path):
                if path in head:
                    files[path] = head[path]
                else:
                    files.pop(path, None)
        commit = self.new_commit(repo, [repo.refs["refs/heads/main"], repo.refs[pull.ref]], files,
                                 f"Merge pull request #{num}", author)
        repo.refs["refs/heads/main"] = commit.oid
        pull.status, pull.merge_commit = "merged", commit.oid
        pull.events.append(self.event("status-change", author, {"status": "merged"}))
        return commit


class _Drop(Exception):
    """Close the connection without an answer (a lost response)."""


class _Handler(BaseHTTPRequestHandler):
    hub: HubStandIn

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # ---- plumbing
    def _reply(self, status: int, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None,
               head_only: bool = False) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream" if raw is not None else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        self._reply(status, {"error": message}, {"X-Error-Code": code} if code else None)

    def _user(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return TOKENS.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _repo(self, m: re.Match[str]) -> Repo | None:
        repo = self.hub.repos.get((m["type"], unquote(m["id"])))
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
        return repo

    def _commit(self, repo: Repo, rev: str) -> Commit | None:
        """The commit `rev` names, or None after a 404 as the hub sends it."""
        commit = repo.resolve(rev)
        if commit is None:
            self._error(404, "Invalid rev id", "RevisionNotFound")
        return commit

    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        path, query = split.path, parse_qs(split.query)
        self.hub.requests.append((method, path))
        body = self._body() if method == "POST" else b""
        if self.hub.hook and self.hub.hook("before", method, path) == "fail":
            self._error(500, "Internal Error (injected)")
            return
        for verb, pattern, name in ROUTES:
            m = re.fullmatch(pattern, path)
            if m and verb == ("GET" if method == "HEAD" else method):
                try:
                    getattr(self, name)(m, query, body, method)
                except _Drop:
                    self.close_connection = True
                return
        self._error(404, f"stand-in has no {method} {path}")

    def _applied(self, method: str) -> None:
        if self.hub.hook and self.hub.hook("applied", method, urlsplit(self.path).path) == "drop":
            raise _Drop

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    # ---- account and repos
    def whoami(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        user = self._user()
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
        else:
            self._reply(200, {"type": "user", "name": user, "auth": {"type": "access_token"}})

    def repo_info(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        if (commit := self._commit(repo, unquote(m["rev"] or "main"))) is None:
            return
        self._reply(200, {"id": repo.id, "sha": commit.oid, "private": False,
                          "siblings": [{"rfilename": p} for p in sorted(commit.files)]})

    def create_repo(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        user = self._user()
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
            return
        doc = json.loads(body)
        repo_type = doc.get("type") or "model"
        repo_id = f"{doc['organization']}/{doc['name']}" if doc.get("organization") else doc["name"]
        url = f"{self.hub.url}/{'' if repo_type == 'model' else repo_type + 's/'}{repo_id}"
        existing = self.hub.repos.get((repo_type, repo_id))
        if existing is not None and user not in existing.owners:  # another's namespace
            self._error(403, "You don't have the rights to create a repo under this namespace")
        elif existing is not None:
            self._reply(409, {"error": "You already created this repo", "url": url})
        else:
            self.hub.add_repo(repo_type, repo_id, {}, owner=user)
            self._reply(200, {"url": url})

    def validate_yaml(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        self._reply(200, {"errors": [], "warnings": []})

    def refs(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        def item(ref: str) -> dict[str, str]:
            return {"name": ref.rsplit("/", 1)[-1] if ref.startswith("refs/heads/") else ref, "ref": ref,
                    "targetCommit": repo.refs[ref]}
        doc: dict[str, Any] = {"branches": [item(r) for r in repo.refs if r.startswith("refs/heads/")],
                               "converts": [], "tags": []}
        if query.get("include_prs"):
            doc["pullRequests"] = [item(r) for r in repo.refs if r.startswith("refs/pr/")]
        self._reply(200, doc)

    # ---- files
    def _entries(self, commit: Commit, folder: str, recursive: bool) -> list[dict[str, Any]] | None:
        prefix = f"{folder}/" if folder else ""
        if folder and not any(p.startswith(prefix) for p in commit.files):
            return None
        found: dict[str, dict[str, Any]] = {}
        for path, data in commit.files.items():
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            for depth in range(1, len(parts)):
                sub = prefix + "/".join(parts[:depth])
                if (recursive or depth == 1) and sub not in found:
                    found[sub] = {"type": "directory", "oid": _tree_oid(commit.files, sub), "size": 0, "path": sub}
            if recursive or len(parts) == 1:
                found[path] = {"type": "file", "oid": blob_oid(data), "size": len(data), "path": path}
        return [found[k] for k in sorted(found)]

    def tree(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        if (commit := self._commit(repo, unquote(m["rev"]))) is None:
            return
        folder = unquote(m["path"] or "").strip("/")
        recursive = (query.get("recursive") or ["false"])[0].lower() in ("true", "1")
        entries = self._entries(commit, folder, recursive)
        if entries is None:
            self._error(404, f"Entry not found: {folder}", "EntryNotFound")
            return
        size = 50 if (query.get("expand") or ["false"])[0].lower() in ("true", "1") else self.hub.tree_page_size
        start = int((query.get("cursor") or ["0"])[0])
        headers = {}
        if start + size < len(entries):
            rest = f"recursive={str(recursive).lower()}&cursor={start + size}"
            headers["Link"] = f'<{self.hub.url}{urlsplit(self.path).path}?{rest}>; rel="next"'
        self._reply(200, entries[start:start + size], headers)

    def paths_info(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        if (commit := self._commit(repo, unquote(m["rev"]))) is None:
            return
        form = parse_qs(body.decode())
        out = []
        for path in form.get("paths", []):
            if path in commit.files:
                out.append({"type": "file", "oid": blob_oid(commit.files[path]), "size": len(commit.files[path]),
                            "path": path})
            elif any(p.startswith(path.rstrip("/") + "/") for p in commit.files):
                out.append({"type": "directory", "oid": _tree_oid(commit.files, path), "size": 0, "path": path})
        self._reply(200, out)

    def resolve(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        repo = self.hub.repos.get((m["type"] or "model", unquote(m["id"])))
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
            return
        if (commit := self._commit(repo, unquote(m["rev"]))) is None:
            return
        path = unquote(m["path"])
        if path not in commit.files:
            self._error(404, "Entry not found", "EntryNotFound")
            return
        data = commit.files[path]
        self._reply(200, raw=data, head_only=method == "HEAD",
                    headers={"X-Repo-Commit": commit.oid, "ETag": f'"{blob_oid(data)}"'})

    # ---- commits
    def preupload(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        commit = repo.resolve(unquote(m["rev"]))
        files = json.loads(body)["files"]
        remote = commit.files if commit is not None else {}
        self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                     "oid": blob_oid(remote[f["path"]]) if f["path"] in remote else None}
                                    for f in files]})

    def commit(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        user = self._user()
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
            return
        if (repo := self._repo(m)) is None:
            return
        header: dict[str, Any] = {}
        added: dict[str, bytes] = {}
        deleted: list[str] = []
        for line in body.decode().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if item["key"] == "header":
                header = item["value"]
            elif item["key"] == "file" and item["value"].get("encoding") == "base64":
                added[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            elif item["key"] in ("deletedFile", "deletedFolder"):
                deleted.append(item["value"]["path"])
            else:
                self._error(400, f"stand-in does not take {item['key']}")
                return
        rev = unquote(m["rev"])
        ref = rev if rev.startswith("refs/") else f"refs/heads/{rev}"
        pull = None
        if query.get("create_pr"):
            if ref not in repo.refs:
                self._error(404, "Invalid rev id", "RevisionNotFound")
                return
            pull = self.hub.open_pull(repo, user, header.get("summary", ""), header.get("description", ""),
                                      draft=False, parent=header.get("parentCommit") or repo.refs[ref])
            ref = pull.ref
        elif ref not in repo.refs:
            self._error(404, "Invalid rev id", "RevisionNotFound")
            return
        elif ref.startswith("refs/pr/"):
            target = repo.pull(int(ref.rsplit("/", 1)[1]))
            if user not in repo.owners and user != target.author:
                self._error(403, "You can only push to your own pull requests")
                return
            if target.status not in ("open", "draft"):
                self._error(400, "This pull request is not open")
                return
        elif user not in repo.owners:
            self._error(403, "You don't have the rights to push to this branch; open a pull request")
            return
        if header.get("parentCommit") and pull is None and header["parentCommit"] != repo.refs[ref]:
            self._error(412, "A commit has happened since. Please refresh and try again.")
            return
        missing = [p for p in deleted if p not in repo.files(ref) and not
                   any(f.startswith(p.rstrip("/") + "/") for f in repo.files(ref))]
        if missing:
            self._error(404, f"A file with this name doesn't exist: {missing[0]}", "EntryNotFound")
            return
        commit = self.hub.commit_to(repo, ref, user, header.get("summary", ""), added, deleted)
        self._applied(method)
        prefix = "" if repo.type == "model" else f"{repo.type}s/"
        doc = {"commitUrl": f"{self.hub.url}/{prefix}{repo.id}/commit/{commit.oid}", "commitOid": commit.oid}
        if pull is not None:
            doc["pullRequestUrl"] = f"{self.hub.url}/{prefix}{repo.id}/discussions/{pull.num}"
        self._reply(200, doc)

    # ---- discussions
    def _summary(self, repo: Repo, d: Discussion) -> dict[str, Any]:
        return {"num": d.num, "title": d.title, "status": d.status, "isPullRequest": d.is_pr,
                "createdAt": self.hub.stamp(d.created), "author": {"name": d.author, "type": "user"},
                "repo": {"name": repo.id, "type": repo.type}, "pinned": False,
                "numComments": sum(e["type"] == "comment" for e in d.events)}

    def discussions(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        if method == "POST":
            self._create_discussion(repo, json.loads(body))
            return
        status = (query.get("status") or ["all"])[0]
        kind = (query.get("type") or ["all"])[0]
        author = (query.get("author") or [None])[0]
        chosen = [d for d in sorted(repo.discussions.values(), key=lambda d: -d.num)
                  if (status == "all" or (status == "open") == (d.status in ("open", "draft")))
                  and (kind == "all" or (kind == "pull_request") == d.is_pr)
                  and (author is None or d.author == author)]
        start = int((query.get("p") or ["0"])[0]) * self.hub.page_size
        self._reply(200, {"discussions": [self._summary(repo, d) for d in chosen[start:start + self.hub.page_size]],
                          "count": len(chosen), "start": start,
                          "numClosedDiscussions": sum(d.status in ("closed", "merged") for d in repo.discussions.values())})

    def _create_discussion(self, repo: Repo, doc: dict[str, Any]) -> None:
        user = self._user()
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
            return
        if doc.get("pullRequest"):
            pull = self.hub.open_pull(repo, user, doc["title"], doc.get("description", ""), draft=True)
        else:
            num = max(repo.discussions, default=0) + 1
            pull = Discussion(num, doc["title"], user, False, "open", self.hub.tick())
            pull.events.append(self.hub.comment_event(user, doc.get("description", "")))
            repo.discussions[num] = pull
        self._reply(200, {"num": pull.num, "pullRequest": pull.is_pr})

    def discussion(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        if (repo := self._repo(m)) is None:
            return
        d = repo.discussions.get(int(m["num"]))
        if d is None:
            self._error(404, "Discussion not found")
            return
        doc = {**self._summary(repo, d), "locked": False, "collection": "discussions", "events": d.events}
        if d.is_pr:
            changed = sorted(p for p in set(repo.commits[repo.base_of(d.num)].files) | set(repo.files(d.ref))
                             if repo.commits[repo.base_of(d.num)].files.get(p) != repo.files(d.ref).get(p))
            doc["changes"] = {"base": "refs/heads/main", **({"mergeCommitId": d.merge_commit} if d.merge_commit else {})}
            doc["filesWithConflicts"] = self.hub.conflicts(repo, d.num) if d.status in ("open", "draft") else []
            if query.get("diff"):
                doc["diff"] = "".join(f"diff --git a/{p} b/{p}\n" for p in changed)
        self._reply(200, doc)

    def change(self, m: re.Match[str], query: dict, body: bytes, method: str) -> None:
        user = self._user()
        if user is None:
            self._error(401, "Invalid credentials in Authorization header")
            return
        if (repo := self._repo(m)) is None:
            return
        d = repo.discussions.get(int(m["num"]))
        if d is None:
            self._error(404, "Discussion not found")
            return
        doc = json.loads(body) if body else {}
        action = m["action"]
        if action == "comment":
            event = self.hub.comment_event(user, doc["comment"])
            d.events.append(event)
            self._applied(method)
            self._reply(200, {"newMessage": event})
            return
        if user not in repo.owners and not (action == "status" and user == d.author):
            self._error(403, "You don't have the rights to change this discussion")
            return
        if action == "status":
            if doc.get("comment"):
                d.events.append(self.hub.comment_event(user, doc["comment"]))
            event = self.hub.event("status-change", user, {"status": doc["status"]})
            d.events.append(event)
            d.status = doc["status"]
            self._applied(method)
            self._reply(200, {"newStatus": event})
            return
        if d.status == "draft":
            self._error(400, "A draft pull request cannot be merged; publish it first")
            return
        if d.status != "open":
            self._error(400, f"This pull request is {d.status}")
            return
        if self.hub.conflicts(repo, d.num):
            self._error(409, "This pull request has merge conflicts")
            return
        if doc.get("comment"):
            d.events.append(self.hub.comment_event(user, doc["comment"]))
        self.hub.merge(repo, d.num, user)
        self._applied(method)
        self._reply(200, {"newStatus": d.events[-1]})


ROUTES = [
    ("GET", r"/api/whoami-v2", "whoami"),
    ("POST", r"/api/repos/create", "create_repo"),
    ("POST", r"/api/validate-yaml", "validate_yaml"),
    ("GET", rf"/api/{REPO}/refs", "refs"),
    ("GET", rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.+))?", "tree"),
    ("POST", rf"/api/{REPO}/paths-info/(?P<rev>[^/]+)", "paths_info"),
    ("POST", rf"/api/{REPO}/preupload/(?P<rev>[^/]+)", "preupload"),
    ("POST", rf"/api/{REPO}/commit/(?P<rev>[^/]+)", "commit"),
    ("GET", rf"/api/{REPO}/discussions", "discussions"),
    ("POST", rf"/api/{REPO}/discussions", "discussions"),
    ("GET", rf"/api/{REPO}/discussions/(?P<num>\d+)", "discussion"),
    ("POST", rf"/api/{REPO}/discussions/(?P<num>\d+)/(?P<action>comment|status|merge)", "change"),
    ("GET", rf"/api/{REPO}(?:/revision/(?P<rev>[^/]+))?", "repo_info"),
    ("GET", r"/(?:(?P<type>dataset|space)s/)?(?P<id>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "resolve"),
]


class running_standin(serving):
    """Context manager: a HubStandIn serving on 127.0.0.1 until the block ends (or lifetime_s)."""

    def __init__(self, lifetime_s: float = 600.0) -> None:
        super().__init__(HubStandIn(), _Handler, lifetime_s)

    def __enter__(self) -> HubStandIn:
        return super().__enter__()

