"""A stand-in for the Hugging Face hub on 127.0.0.1: the endpoints `vlbench leaderboard push`
reaches through the real huggingface_hub client, with repos held in memory and every request
recorded. It serves from a thread that stops when the test ends or after `lifetime_s`, whichever
comes first, so a client that hangs cannot keep it alive.

Endpoints (as huggingface_hub 0.25 to 2.x call them): GET /api/whoami-v2; GET
/api/{type}s/{ns}/{name} (repo_info, 404 + X-Error-Code RepoNotFound when missing); POST
/api/repos/create; GET /api/{type}s/{id}/tree/{rev} (recursive listing); POST /api/validate-yaml;
POST /api/{type}s/{id}/preupload/{rev} (every file "regular": sent inline in the commit);
POST /api/{type}s/{id}/commit/{rev} (ndjson: header, file, deletedFile).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.harness.standin_server import serving

TOKEN = "hf_standin_token"
REPO = r"(?P<type>model|dataset|space)s/(?P<id>[^/]+/[^/]+)"


@dataclass
class Repo:
    type: str
    sdk: str | None
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class HubStandIn:
    url: str = ""
    token: str = TOKEN
    repos: dict[tuple[str, str], Repo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    created: list[dict[str, Any]] = field(default_factory=list)  # /api/repos/create bodies

    def add_repo(self, repo_type: str, repo_id: str, files: dict[str, bytes], sdk: str | None = None) -> Repo:
        repo = Repo(repo_type, sdk, {".gitattributes": b"*.png filter=lfs\n", **files})
        self.repos[(repo_type, repo_id)] = repo
        return repo


class _Handler(BaseHTTPRequestHandler):
    hub: HubStandIn

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.hub.token}":
            return True
        self._send(401, {"error": "Invalid credentials in Authorization header"})
        return False

    def _repo(self, match: re.Match[str]) -> Repo | None:
        repo = self.hub.repos.get((match["type"], unquote(match["id"])))
        if repo is None:
            self._send(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        return repo

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.hub.requests.append(("GET", path))
        if not self._authorized():
            return
        if path == "/api/whoami-v2":
            self._send(200, {"type": "user", "name": "tester", "auth": {"type": "access_token"}})
        elif m := re.fullmatch(rf"/api/{REPO}/tree/[^/]+", path):
            if (repo := self._repo(m)) is not None:
                self._send(200, [{"type": "file", "path": p, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                                 for p, d in sorted(repo.files.items())])
        elif m := re.fullmatch(rf"/api/{REPO}", path):
            if (repo := self._repo(m)) is not None:
                self._send(200, {"id": unquote(m["id"]), "sha": "0" * 40, "private": False,
                                 "siblings": [{"rfilename": p} for p in repo.files]})
        else:
            self._send(404, {"error": f"stand-in has no GET {path}"})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        self.hub.requests.append(("POST", path))
        body = self._body()
        if not self._authorized():
            return
        if path == "/api/repos/create":
            doc = json.loads(body)
            self.hub.created.append(doc)
            repo_type = doc.get("type") or "model"
            repo_id = f"{doc['organization']}/{doc['name']}" if doc.get("organization") else doc["name"]
            if (repo_type, repo_id) in self.hub.repos:
                self._send(409, {"error": "You already created this repo"})
                return
            files = {}
            if repo_type == "space":  # the hub gives a new Space a README of its own
                files["README.md"] = f"---\ntitle: {doc['name']}\nsdk: {doc.get('sdk')}\n---\n".encode()
            self.hub.add_repo(repo_type, repo_id, files, doc.get("sdk"))
            prefix = "" if repo_type == "model" else f"{repo_type}s/"
            self._send(200, {"url": f"{self.hub.url}/{prefix}{repo_id}"})
        elif path == "/api/validate-yaml":
            self._send(200, {"errors": [], "warnings": []})
        elif m := re.fullmatch(rf"/api/{REPO}/preupload/[^/]+", path):
            if self._repo(m) is not None:
                files = json.loads(body)["files"]
                self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                           for f in files]})
        elif m := re.fullmatch(rf"/api/{REPO}/commit/[^/]+", path):
            if (repo := self._repo(m)) is not None:
                lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                commit: dict[str, Any] = {"header": None, "added": {}, "deleted": []}
                for item in lines:
                    if item["key"] == "header":
                        commit["header"] = item["value"]
                    elif item["key"] == "file":
                        value = item["value"]
                        assert value["encoding"] == "base64"
                        commit["added"][value["path"]] = base64.b64decode(value["content"])
                    elif item["key"] == "deletedFile":
                        commit["deleted"].append(item["value"]["path"])
                    else:
                        self._send(400, {"error": f"stand-in does not take {item['key']}"})
                        return
                missing = [p for p in commit["deleted"] if p not in repo.files]
                if missing:
                    self._send(404, {"error": f"A file with this name doesn't exist: {missing[0]}"},
                               {"X-Error-Code": "EntryNotFound"})
                    return
                for p in commit["deleted"]:
                    del repo.files[p]
                repo.files.update(commit["added"])
                repo.commits.append(commit)
                oid = hashlib.sha1(str(len(repo.commits)).encode()).hexdigest()
                self._send(200, {"commitUrl": f"{self.hub.url}/{m['type']}s/{m['id']}/commit/{oid}", "commitOid": oid})
        else:
            self._send(404, {"error": f"stand-in has no POST {path}"})


class running_standin(serving):
    """Context manager: a HubStandIn serving on 127.0.0.1 until the block ends (or lifetime_s)."""

    def __init__(self, lifetime_s: float = 120.0) -> None:
        super().__init__(HubStandIn(), _Handler, lifetime_s)

    def __enter__(self) -> HubStandIn:
        return super().__enter__()
