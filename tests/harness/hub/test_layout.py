"""Where a pull request's files may sit: one benchmark folder level under submissions/, plain names."""

from __future__ import annotations

import pytest

from vlbench.hub.layout import ENTRY, OUTSIDE, REFUSED, place
from vlbench.registry import registry


@pytest.mark.parametrize(("path", "kind"), [
    ("submissions/mini-retrieval/alpha.json", ENTRY),
    ("submissions/mini-retrieval/alpha-v2_seed.1.json.gz", ENTRY),
    ("README.md", OUTSIDE),
    ("evaluate.py", OUTSIDE),
    (".gitattributes", OUTSIDE),
    ("submissions", OUTSIDE),
    ("submissionsx/mini-retrieval/a.json", OUTSIDE),
    ("leaderboard/index.html", OUTSIDE),
    ("submissions/REFERENCE_ENTRIES", REFUSED),
    ("submissions/a.json", REFUSED),
    ("submissions/reported/paper.json", REFUSED),
    ("submissions/retired/mini-decorrelated@1.0/x.json", REFUSED),
    ("submissions/no-such-benchmark/a.json", REFUSED),
    ("submissions/mini-retrieval/sub/a.json", REFUSED),
    ("submissions/mini-retrieval/run.py", REFUSED),
    ("submissions/mini-retrieval/.hidden.json", REFUSED),
    ("submissions/mini-retrieval/a b.json", REFUSED),
    ("submissions/mini-retrieval/a..json", REFUSED),
    ("submissions/mini-retrieval/<img>.json", REFUSED),
    ("submissions/mini-retrieval/a.json.zip", REFUSED),
])
def test_place(path: str, kind: str) -> None:
    where = place(path, registry().benchmarks)
    assert where.kind == kind, where
    assert (where.reason == "") == (kind == ENTRY)
