"""Maintainer-curated inputs of a build, next to the submissions: the reference list and reported rows.

- `REFERENCE_ENTRIES` lists the submissions that carry the reference marker (†): one path relative
  to the submissions folder per line, optionally followed by the sha256 of the file's bytes that a
  maintainer checked (then a changed file loses the marker), and by the word `floor` for a chance
  floor (random predictions): a reference row, shown and ranked, that never competes for a
  column's best mark. `#` starts a comment. A submission's own `meta.reference` is ignored for the
  marker: anyone can write it.
- `reported/*.json` holds numbers published in papers (with their source), shown as reported rows:
  never re-scored, never ranked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError

REFERENCE_LIST = "REFERENCE_ENTRIES"
REPORTED_FOLDER = "reported"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


FLOOR = "floor"


@dataclass(frozen=True)
class ReferenceList:
    pins: dict[str, str | None]  # relative path -> sha256 a maintainer checked (None: any bytes)
    floors: frozenset[str] = frozenset()  # paths listed with `floor`: chance floors, not contenders

    def marks(self, relative_path: str, sha256: str) -> bool:
        if relative_path not in self.pins:
            return False
        pinned = self.pins[relative_path]
        return pinned is None or pinned == sha256

    def floor(self, relative_path: str, sha256: str) -> bool:
        """A chance floor: listed with `floor`, and still the bytes a maintainer checked."""
        return relative_path in self.floors and self.marks(relative_path, sha256)


def read_reference_list(submissions: Path) -> ReferenceList:
    path = submissions / REFERENCE_LIST
    if not path.is_file():
        return ReferenceList({})
    pins: dict[str, str | None] = {}
    floors: set[str] = set()
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        floor = words[-1] == FLOOR and len(words) > 1
        rest = words[1:-1] if floor else words[1:]
        if len(rest) > 1 or (rest and not _SHA256.match(rest[0])):
            problems.append(f"line {number}: expected 'PATH [SHA256] [{FLOOR}]', got {line.strip()!r}")
            continue
        pins[words[0]] = rest[0] if rest else None
        if floor:
            floors.add(words[0])
    if problems:
        raise UsageError(f"{path}: " + "; ".join(problems))
    return ReferenceList(pins, frozenset(floors))


@dataclass(frozen=True)
class ReportedRow:
    """Numbers a paper published, as printed (percent strings), with where they come from."""

    benchmark: str
    method: str
    provenance: str  # table and columns
    source_title: str
    source_url: str
    source_file: str  # relative to the submissions folder
    percent: dict[str, str] = field(default_factory=dict)
    source_authors: str = ""
    source_year: str = ""
    # Metrics that are sums of others (`Metric.sum_of`), derived when a paper printed only the parts.
    sums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def citation(self) -> str:
        """Short, as a table cell shows it: "Kim et al. 2023, Table 1" (the title when no authors)."""
        names = [a.strip() for a in re.split(r",|\band\b", self.source_authors) if a.strip()]
        surnames = [n.split()[-1] for n in names]
        if not surnames:
            who = self.source_title if len(self.source_title) <= 40 else self.source_title[:39].rstrip() + "…"
        elif len(surnames) == 1:
            who = surnames[0]
        elif len(surnames) == 2:
            who = f"{surnames[0]} and {surnames[1]}"
        else:
            who = f"{surnames[0]} et al."
        where = self.provenance.split(",", 1)[0].strip()
        return ", ".join(x for x in (f"{who} {self.source_year}".strip(), where) if x)

    def value(self, key: str) -> float | None:
        """The value in the result records' unit (fractions for recalls; sums such as RSUM in
        percent points)."""
        if key in self.sums and key not in self.percent:
            parts = [self.percent.get(part) for part in self.sums[key]]
            if any(p is None for p in parts):
                return None
            # exact: sum the printed tenths as integers, so 0.1 steps do not drift
            return sum(round(float(p) * 10) for p in parts) / 10  # type: ignore[arg-type]
        text = self.percent.get(key)
        return None if text is None else round(float(text) / 100.0, 6)

    def display(self, key: str) -> str | None:
        if key in self.sums and key not in self.percent:
            value = self.value(key)
            return None if value is None else f"{value:.1f}"
        return self.percent.get(key)


def _year(source: dict) -> str:
    """The source's `year`, else the first year in its venue ("CVPR 2023 Workshops" -> 2023)."""
    if source.get("year"):
        return str(source["year"])
    found = re.search(r"\b(19|20)\d\d\b", str(source.get("venue", "")))
    return found.group(0) if found else ""


def read_reported(submissions: Path, benchmarks: Mapping[str, Benchmark]) -> list[ReportedRow]:
    folder = submissions / REPORTED_FOLDER
    rows: list[ReportedRow] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        relative = path.relative_to(submissions).as_posix()
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            source = doc["source"]
            for i, row in enumerate(doc["rows"]):
                benchmark = benchmarks.get(row["benchmark"])
                if benchmark is None:
                    raise ValueError(f"rows/{i}: unknown benchmark {row['benchmark']!r}")
                percent = {str(k): str(v) for k, v in row["scores_percent"].items()}
                for v in percent.values():
                    float(v)  # a number as printed, else ValueError
                rows.append(ReportedRow(row["benchmark"], str(row["method"]), str(row["provenance"]),
                                        str(source["title"]), str(source.get("url", "")), relative, percent,
                                        str(source.get("authors", "")), _year(source),
                                        {m.key: m.sum_of for m in benchmark.metrics if m.sum_of}))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"reported rows file {path} is malformed: {exc}") from None
    return rows
