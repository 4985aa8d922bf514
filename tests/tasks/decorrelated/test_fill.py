"""Fills: simple fills touch only the mask; the diffusers path runs on a tiny random pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from vlbench.tasks.decorrelated.fill import fill_queries, removal_mask, simple_fill


def source_image(path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)).save(path)


def manifest(tmp_path: Path, n: int = 3) -> Path:
    (tmp_path / "src").mkdir()
    queries = []
    for i in range(n):
        source_image(tmp_path / "src" / f"{i}.png", i)
        queries.append({"id": f"q{i}", "file_name": f"q{i}.png", "source_file": f"{i}.png",
                        "removed_boxes": [[2.5, 3, 10, 8], [20, 10, 4, 4]]})  # fmt: skip
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"queries": queries}))
    return path


@pytest.mark.parametrize("method", ["blur", "mean", "zero"])
def test_simple_fills_change_only_the_mask(tmp_path: Path, method: str) -> None:
    m = manifest(tmp_path, n=2)
    written = fill_queries(m, tmp_path / "src", tmp_path / "out", method, progress=False)
    assert [p.name for p in written] == ["q0.png", "q1.png"]
    original = np.asarray(Image.open(tmp_path / "src" / "0.png").convert("RGB"))
    filled = np.asarray(Image.open(tmp_path / "out" / "q0.png"))
    mask = np.asarray(removal_mask([[2.5, 3, 10, 8], [20, 10, 4, 4]], (32, 24))) > 0
    assert mask.sum() == 11 * 8 + 16  # columns 2..12 (touched pixels), rows 3..10; 4 x 4
    assert np.array_equal(filled[~mask], original[~mask])
    inside = filled[mask]
    if method == "zero":
        assert not inside.any()
    elif method == "mean":
        expected = np.round(original.reshape(-1, 3).mean(axis=0))
        assert np.array_equal(inside, np.broadcast_to(expected, inside.shape))
    else:
        assert inside.std() < original[mask].std()  # blurred noise is smoother


def test_fill_is_resumable(tmp_path: Path) -> None:
    m = manifest(tmp_path, n=3)
    (tmp_path / "out").mkdir()
    Image.new("RGB", (32, 24), (1, 2, 3)).save(tmp_path / "out" / "q1.png")
    written = fill_queries(m, tmp_path / "src", tmp_path / "out", "zero", batch_size=2, progress=False)
    assert [p.name for p in written] == ["q0.png", "q2.png"]
    assert Image.open(tmp_path / "out" / "q1.png").getpixel((0, 0)) == (1, 2, 3)


def test_unknown_method(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        fill_queries(manifest(tmp_path), tmp_path / "src", tmp_path / "out", "sharpen")
    with pytest.raises(ValueError):
        simple_fill(Image.new("RGB", (2, 2)), Image.new("L", (2, 2)), "sharpen")


def test_inpaint_with_a_tiny_random_pipeline(tmp_path: Path, tiny_inpainting_pipeline: Any) -> None:
    pipe = tiny_inpainting_pipeline
    m = manifest(tmp_path, n=3)
    kwargs = {"pipe": pipe, "resolution": 16, "steps": 2, "progress": False}
    written = fill_queries(m, tmp_path / "src", tmp_path / "a", "inpaint", batch_size=2, **kwargs)
    assert len(written) == 3
    original = np.asarray(Image.open(tmp_path / "src" / "2.png").convert("RGB"))
    filled = np.asarray(Image.open(tmp_path / "a" / "q2.png"))
    mask = np.asarray(removal_mask([[2.5, 3, 10, 8], [20, 10, 4, 4]], (32, 24))) > 0
    assert filled.shape == original.shape
    assert np.array_equal(filled[~mask], original[~mask])
    assert not np.array_equal(filled[mask], original[mask])
    # Per-image seeds: batching differently (a resumed run) gives the same pixels.
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "q0.png").write_bytes((tmp_path / "a" / "q0.png").read_bytes())
    fill_queries(m, tmp_path / "src", tmp_path / "b", "inpaint", batch_size=1, **kwargs)
    for name in ("q1.png", "q2.png"):
        a = np.asarray(Image.open(tmp_path / "a" / name), dtype=np.int16)
        b = np.asarray(Image.open(tmp_path / "b" / name), dtype=np.int16)
        assert np.abs(a - b).max() <= 1  # float noise across batch shapes, not a different fill


def test_fill_command_replaces_nothing_and_makes_no_folder_above_its_own(tmp_path: Path, capsys) -> None:
    """The output rule for `python -m vlbench.tasks.decorrelated.fill --out`: an image already there
    is kept (test_fill_is_resumable), the folder is made only inside an existing one, and a file
    as --out is refused."""
    from vlbench.tasks.decorrelated.fill import main

    m = manifest(tmp_path, n=1)
    base = [str(m), "--source", str(tmp_path / "src"), "--method", "zero"]
    assert main([*base, "--out", str(tmp_path / "no" / "out")]) == 2
    assert "the folder" in capsys.readouterr().err and not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("x")
    assert main([*base, "--out", str(tmp_path / "file")]) == 2 and (tmp_path / "file").read_text() == "x"
    assert main([*base, "--out", str(tmp_path / "out")]) == 0 and (tmp_path / "out" / "q0.png").is_file()
