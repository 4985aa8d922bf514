"""Pinned sha256 of the mini benchmark's ground-truth files shipped in `tasks/mini/data/`.

Written by `python -m vlbench.tasks.mini.ship`, which regenerates the mini world and runs each task's
own `prepare` on it. Benchmark records import `mini_file` so their sha256 is pinned here.
"""

from __future__ import annotations

from vlbench.benchmark import PACKAGE, DataFile

SHA256: dict[str, str] = {
    "captions/references.json": "1b6e11aa9466b61abd33367113bc7ab884413f9e30fe80d330c7d5bd8a831e2c",
    "mini-decorrelated.json": "7e04ab3e97be23d4ece4359aa74f6449818b818a78b346a03e780da740ddbc98",
    "mini-grounding/ground_truth.json": "2333efa024e2367fb65c8ee3b8dd5c5073d6e25c484ceedd427a82a0a9ba04b1",
    "mini-retrieval.json": "6ec631580162e2cc55229f578dedd0203f9046646c7a7bc71748639f344108a5",
    "mini-shapes-retrieval.json": "6ec631580162e2cc55229f578dedd0203f9046646c7a7bc71748639f344108a5",
}


def mini_file(name: str, path: str) -> DataFile:
    """A DataFile shipped in the package under tasks/mini/data/."""
    return DataFile(name=name, path=f"data/{path}", sha256=SHA256.get(path), location=PACKAGE)
