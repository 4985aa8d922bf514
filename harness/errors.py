"""The error model: every problem found in a submission is an `Issue` with a JSON pointer.

Validation never stops at the first problem. Checks append to an `IssueList`, which keeps the
first `limit` issues in full and counts the rest, so a file with a million bad ids still gives a
short, readable report and a true total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass


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

    def add(self, code: str, ptr: str, message: str, hint: str = "") -> None:
        self.total += 1
        self.by_code[code] += 1
        if len(self.kept) < self.limit:
            self.kept.append(Issue(code, ptr, message, hint))

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
        }

    def report(self) -> str:
        lines = [str(i) for i in self.kept]
        if self.omitted:
            summary = ", ".join(f"{c}: {n}" for c, n in sorted(self.by_code.items()))
            lines.append(f"... and {self.omitted} more ({self.total} in all; by code: {summary})")
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
        self.issues = issues
        self.source = source
        noun = "problem" if issues.total == 1 else "problems"
        super().__init__(f"{source or 'submission'}: {issues.total} {noun} found")
