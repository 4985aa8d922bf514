"""The marker at the end of every intake comment: what later runs read back from the hub.

State lives on the hub, not in a local file: whether a head revision was checked, and what was
decided, is the marker in the comment intake posted for it. The marker is an HTML comment holding
JSON (invisible on the page): the head revision, the verdict, the pull request's author and the
entries it adds. Intake trusts only markers in comments its own account wrote (the hub names every
event's author), so nobody can silence or fake a verdict by writing a marker into a comment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

READY = "ready"  # every file a valid entry the author may add: merged with --merge
DRAFT = "draft"  # as READY, but the pull request is a draft: merged once published
REFUSED = "refused"  # a problem remains: stays open for a fixing commit
CLOSE = "close"  # changes paths outside submissions/: closed with --merge
VERDICTS = (READY, DRAFT, REFUSED, CLOSE)

MARKER_PREFIX = "<!-- vlbench-intake "
_MARKER = re.compile(r"<!-- vlbench-intake (\{[^<>]{0,20000}?\}) -->")


@dataclass(frozen=True)
class Marker:
    head: str
    verdict: str
    author: str
    entries: tuple[str, ...]

    def text(self) -> str:
        doc = json.dumps({"v": 1, "head": self.head, "verdict": self.verdict, "author": self.author,
                          "entries": list(self.entries)}, ensure_ascii=True, sort_keys=True)
        # keep the JSON from ending the HTML comment or opening markup, whatever a path holds
        return MARKER_PREFIX + re.sub(r"[<>&!\-]", lambda m: f"\\u{ord(m[0]):04x}", doc) + " -->"


def parse_markers(content: str) -> list[Marker]:
    found = []
    for match in _MARKER.finditer(content or ""):
        try:
            doc = json.loads(match[1])
            marker = Marker(str(doc["head"]), str(doc["verdict"]), str(doc["author"]),
                            tuple(str(p) for p in doc.get("entries", [])))
        except (ValueError, KeyError, TypeError):
            continue
        found.append(marker)
    return found


def own_markers(events: Iterable[Any], user: str) -> list[Marker]:
    """Markers in the comments `user` wrote, oldest first (events are huggingface_hub's
    DiscussionEvent objects, or the hub's raw event dicts)."""
    found: list[Marker] = []
    for event in events:
        raw = event if isinstance(event, dict) else getattr(event, "_event", {})
        if raw.get("type") != "comment" or (raw.get("author") or {}).get("name") != user:
            continue
        found += parse_markers(((raw.get("data") or {}).get("latest") or {}).get("raw", ""))
    return found
