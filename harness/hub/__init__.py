"""Submissions through the Hugging Face Hub's own pull requests.

`submit.py` opens a participant's pull request (one file under `submissions/<benchmark>/`);
`pulls.py` reads what an open pull request changes, relative to where it started; `review.py`
decides what may be merged; `comment.py` writes the verdict a pull request gets (escaped, with a
machine-readable marker that later runs read back); `intake.py` is the maintainer's run over every
open pull request. huggingface_hub is imported only here, when a command needs it (the `hub`
extra), so the core imports without it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from vlbench.errors import UsageError

REPO_TYPES = ("dataset", "space", "model")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


class HubFailure(UsageError):
    """The hub could not be reached or refused a request (network, permissions, a server error):
    not the pull request's content. One sentence (exit code 2); an intake run notes it and goes on
    with the next pull request."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no details'}"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a huggingface_hub error, if it carries a response."""
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


def plain(text: str, limit: int = 120) -> str:
    """One line of printable text (no control, format or lone surrogate characters), at most `limit`
    characters: safe to print on a terminal and to send as JSON."""
    text = str(text)[: 4 * limit + 16]  # what is cut here would be cut below anyway
    kept = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in text)
    kept = " ".join(kept.split())
    return kept if len(kept) <= limit else kept[: limit - 3] + "..."


def check_repo_id(repo_id: str | None, repo_type: str) -> str:
    if not repo_id:
        raise UsageError("no hub repo: give --repo-id ORG/NAME (the leaderboard's repo on the Hugging Face hub)")
    if not _REPO_ID.match(repo_id) or ".." in repo_id or "--" in repo_id:
        raise UsageError(f"--repo-id {repo_id[:100]!r} is not a hub repo id; write it as ORG/NAME")
    if repo_type not in REPO_TYPES:
        raise UsageError(f"--repo-type {repo_type!r}: choose one of {', '.join(REPO_TYPES)}")
    return repo_id


@dataclass
class Hub:
    """A client for one repo, with the account its token belongs to."""

    api: Any  # huggingface_hub.HfApi
    repo_id: str
    repo_type: str
    user: str
    token: str

    def call(self, what: str, function: Any, *args: Any, **kwargs: Any) -> Any:
        """`function(*args, repo_type=..., **kwargs)`, with any failure as a HubFailure naming `what`."""
        try:
            return function(*args, repo_type=self.repo_type, **kwargs)
        except Exception as exc:
            raise HubFailure(f"{what} failed: {first_line(exc)}") from exc

    @property
    def url(self) -> str:
        prefix = "" if self.repo_type == "model" else f"{self.repo_type}s/"
        return f"{self.api.endpoint}/{prefix}{self.repo_id}"


def huggingface_hub() -> Any:
    try:
        import huggingface_hub as module
    except ImportError:
        raise UsageError("the hub commands need huggingface_hub 0.25 or newer: pip install 'vlbench[hub]'") from None
    return module


def connect(repo_id: str | None, repo_type: str, token: str | None = None, *, must_exist: bool = True) -> Hub:
    """A client for `repo_id` with a token (the argument, else $HF_TOKEN or the token `hf auth
    login` saved), after checking that the token works and, with `must_exist`, that the repo does.
    Every refusal is a UsageError of one sentence."""
    repo_id = check_repo_id(repo_id, repo_type)
    hf = huggingface_hub()
    token = token or hf.get_token()
    if not token:
        raise UsageError(f"no Hugging Face token: set HF_TOKEN or run `hf auth login` (a token that can open pull "
                         f"requests on {repo_id})")
    api = hf.HfApi(token=token)
    try:
        # One plain request first: without a network or with a bad token it fails at once.
        user = api.whoami()["name"]
    except Exception as exc:
        raise UsageError(f"cannot reach the Hugging Face hub with this token: {first_line(exc)}") from None
    hub = Hub(api, repo_id, repo_type, str(user), token)
    if must_exist:
        try:
            exists = api.repo_exists(repo_id, repo_type=repo_type)
        except Exception as exc:
            raise UsageError(f"cannot read {repo_type} {repo_id} on the hub: {first_line(exc)}") from None
        if not exists:
            raise UsageError(f"there is no {repo_type} {repo_id} on the hub that this token can see; check "
                             "--repo-id and --repo-type")
    return hub
