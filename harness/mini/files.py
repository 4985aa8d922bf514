"""Pinned sha256 of the mini benchmark's ground-truth files shipped in `harness/mini/data/`.

Written by `python -m harness.mini.ship`, which regenerates the mini world and runs each task's
own `prepare` on it. Benchmark records import `mini_file` so their sha256 is pinned here.
"""

from __future__ import annotations

from harness.registry import PACKAGE, DataFile

SHA256: dict[str, str] = {
    "captions/references.json": "85073e3d1fd960c4527d36c605662d3f90e037a7b799c0c988bec122634f5f09",
    "mini-decorrelated.json": "b0247951ec88b1d6703ff3ae8cf6e8a9fad4c8e2b00a95ffd15eb9a46e3699d5",
    "mini-grounding/ground_truth.json": "caf328ed5896f386d12617732e5997f99c2efa1ec0fd2f90fb56992417cfacc2",
    "mini-retrieval.json": "6ec631580162e2cc55229f578dedd0203f9046646c7a7bc71748639f344108a5",
}


def mini_file(name: str, path: str) -> DataFile:
    """A DataFile shipped in the package under harness/mini/data/."""
    return DataFile(name=name, path=f"data/{path}", sha256=SHA256.get(path), location=PACKAGE)
