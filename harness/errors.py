"""The error model: every problem found in a submission is an `Issue` with a JSON pointer.

Validation never stops at the first problem. Checks append to an `IssueList`, which keeps the
first `limit` issues in full and counts the rest, so a file with a million bad ids still gives a
short, readable report and a true total.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

# Longest text a report echoes back from a submission: a 10 MB string in a file must not become a
# 10 MB error message (output amplification), but what is shown must still identify the value.
ECHO_LIMIT = 80
# Longest message, hint or pointer kept in an issue: a safety net for checks that echo input.
FIELD_LIMIT = 1000


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`1 problem`, `2 problems` (thousands separated)."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def clip(text: str, limit: int = FIELD_LIMIT) -> str:
    """`text`, or its head and tail around a count of what was left out."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 10)
    head, tail = keep * 2 // 3, keep // 3
    return f"{text[:head]}...({len(text) - head - tail:,} characters)...{text[len(text) - tail:]}"


def shorten(value: Any, limit: int = ECHO_LIMIT) -> str:
    """A bounded JSON rendering of an untrusted value, for messages.

    Never renders more than about `limit` characters of it, whatever its size or depth (so the
    cost is bounded too), and never fails: integers beyond Python's int-to-text limit
    (4300 digits) are described by their size.
    """
    parts: list[str] = []
    budget = [limit]

    def emit(text: str) -> bool:
        if budget[0] <= 0:
            return False
        if len(text) > budget[0]:
            parts.append(text[: budget[0]] + "...")
            budget[0] = 0
            return False
        parts.append(text)
        budget[0] -= len(text)
        return True

    def render(v: Any, depth: int) -> bool:
        if isinstance(v, str):
            room = max(budget[0] - 2, 8)
            if len(v) > room:
                # the head of the string, then its true length (kept whatever the budget left)
                parts.append(json.dumps(v[:room], ensure_ascii=False)[:-1] + f'..." ({len(v):,} characters)')
                budget[0] = 0
                return False
            return emit(json.dumps(v, ensure_ascii=False))
        if v is None or isinstance(v, bool):
            return emit(json.dumps(v))
        if isinstance(v, int):
            if v.bit_length() > 3000:
                return emit(f"<an integer of about {int(v.bit_length() * 0.30103):,} digits>")
            return emit(str(v))
        if isinstance(v, float):
            return emit(repr(v) if v == v and abs(v) != float("inf") else str(v))
        if isinstance(v, (dict, list, tuple)):
            if depth > 3:
                return emit("{...}" if isinstance(v, dict) else "[...]")
            items = list(v.items())[:limit] if isinstance(v, dict) else list(v[:limit])
            if not emit("{" if isinstance(v, dict) else "["):
                return False
            for i, item in enumerate(items):
                if i and not emit(", "):
                    return False
                if isinstance(v, dict):
                    if not (render(item[0], depth + 1) and emit(": ") and render(item[1], depth + 1)):
                        return False
                elif not render(item, depth + 1):
                    return False
            if len(v) > len(items):
                return emit(f", ... ({len(v):,} in all)")
            return emit("}" if isinstance(v, dict) else "]")
        return emit(f"<{type(v).__name__}>")

    render(value, 0)
    text = "".join(parts)
    if budget[0] <= 0 and isinstance(value, (dict, list, tuple)):
        text += f" ({len(value):,} {'entries' if isinstance(value, dict) else 'items'})"
    return text


def pointer(*parts: str | int) -> str:
    """RFC 6901 JSON pointer from path parts (`~` and `/` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Issue:
    """One problem in a submission: where (JSON pointer), what (stable code), and how to fix it."""

    code: str
    pointer: str
    message: str
    hint: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def __str__(self) -> str:
        where = self.pointer or "(document)"
        text = f"{where}: [{self.code}] {self.message}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text


class IssueList:
    """Collects issues; keeps the first `limit` in full and counts every one by code."""

    def __init__(self, limit: int = 50) -> None:
        self.limit = limit
        self.kept: list[Issue] = []
        self.total = 0
        self.by_code: Counter[str] = Counter()
        # Set when a check stopped early (see `stop_note`): the total is then a lower bound.
        self.notes: list[str] = []
        self.schema_errors = 0  # schema violations added so far (the schema layer stops at a cap)

    def add(self, code: str, ptr: str, message: str, hint: str = "") -> None:
        self.total += 1
        self.by_code[code] += 1
        if len(self.kept) < self.limit:
            # a pointer is shortened without spaces, so that it still reads as one token
            short_ptr = ptr if len(ptr) <= 300 else f"{ptr[:180]}...{ptr[-100:]}"
            self.kept.append(Issue(code, short_ptr, clip(message), clip(hint)))

    def stop_note(self, note: str) -> None:
        """Record that a check stopped before the end of the document (said in the report)."""
        if note not in self.notes:
            self.notes.append(note)

    def extend(self, issues: Iterable[Issue]) -> None:
        for issue in issues:
            self.add(issue.code, issue.pointer, issue.message, issue.hint)

    def __bool__(self) -> bool:
        return self.total > 0

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[Issue]:
        return iter(self.kept)

    @property
    def omitted(self) -> int:
        return self.total - len(self.kept)

    def codes(self) -> set[str]:
        return set(self.by_code)

    def to_dict(self) -> dict:
        return {
            "valid": self.total == 0,
            "error_count": self.total,
            "errors": [i.to_dict() for i in self.kept],
            "omitted": self.omitted,
            "counts_by_code": dict(sorted(self.by_code.items())),
            "complete": not self.notes,
            "notes": list(self.notes),
        }

    def report(self) -> str:
        lines = [str(i) for i in self.kept]
        if self.omitted:
            summary = ", ".join(f"{c}: {n:,}" for c, n in sorted(self.by_code.items()))
            lines.append(f"... and {self.omitted:,} more ({self.total:,} in all; by code: {summary})")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)


class VlbenchError(Exception):
    """Base of the harness's own errors; the CLI turns these into messages and exit codes."""

    exit_code = 2


class UsageError(VlbenchError):
    """Bad arguments, missing files, missing ground truth: exit code 2."""

    exit_code = 2


class InvalidSubmission(VlbenchError):
    """The submission failed validation: exit code 1. Carries every issue found."""

    exit_code = 1

    def __init__(self, issues: IssueList, source: str = "") -> None:
        super().__init__()
        self.issues = issues
        # The file name (or "predictions" for an in-memory document); set by whoever knows it.
        self.source = source

    def __str__(self) -> str:
        return f"{self.source or 'the submission'}: {plural(self.issues.total, 'problem')} found"
