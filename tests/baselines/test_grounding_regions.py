"""grounding-clip-regions end to end on mini with a tiny random model; windows, NMS, proposals,
and the embedding-reuse property."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.baselines.conftest import TINY
from vlbench.baselines.regions import (
    load_proposals,
    nms_topk,
    render_region,
    sliding_windows,
    window_starts,
)
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.submission import validate

# few regions per image so that a run takes seconds: the whole image, its halves and its quadrants (9)
FAST = ["extra.scales=0.5,1", "extra.stride=1"]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def grounding_run(tmp_path: Path, data_dir: Path, *sets: str) -> list[str]:
    return ["baseline", "run", "grounding-clip-regions", "--benchmark", "mini-grounding", "--out",
            str(tmp_path / "sub.json"), "--data-dir", str(data_dir), "--device", "cpu", "--quiet", "--set", *TINY, *sets]


def test_window_starts_cover_the_axis_up_to_the_far_edge() -> None:
    assert window_starts(100, 40, 20).tolist() == [0, 20, 40, 60]
    assert window_starts(100, 40, 25).tolist() == [0, 25, 50, 60]  # one more, flush with the edge
    assert window_starts(100, 100, 50).tolist() == [0]
    assert window_starts(100, 120, 50).tolist() == [0]


def test_sliding_windows_shapes_and_bounds() -> None:
    boxes = sliding_windows(200, 100, (0.5, 1.0), 0.5)
    # widths 100 or 200 (3 or 1 x-positions), heights 50 or 100 (3 or 1 y-positions)
    assert len(boxes) == (3 + 1) * (3 + 1)
    assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= 200).all() and (boxes[:, 3] <= 100).all()
    assert {(round(w), round(h)) for w, h in zip(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1], strict=True)} == {
        (100, 50), (100, 100), (200, 50), (200, 100)}
    assert [0, 0, 200, 100] in boxes.tolist()
    with pytest.raises(UsageError, match="scales"):
        sliding_windows(10, 10, (0.0,), 0.5)
    with pytest.raises(UsageError, match="stride"):
        sliding_windows(10, 10, (0.5,), 1.5)


def test_nms_topk_drops_overlaps_and_keeps_order() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5], [40, 40, 50, 50]], float)
    scores = np.array([0.9, 0.95, 0.5, 0.8, 0.5])
    keep = nms_topk(boxes, scores, 0.5, 10)
    assert keep.tolist() == [1, 2, 4]  # 0 and 3 overlap 1; equal scores keep the lower index first
    assert nms_topk(boxes, scores, 0.5, 2).tolist() == [1, 2]
    assert nms_topk(boxes, scores, 1.0, 10).tolist() == [1, 0, 3, 2, 4]  # nothing suppressed
    assert nms_topk(np.zeros((0, 4)), np.zeros(0), 0.5, 10).tolist() == []


def test_render_region_crop_and_masked() -> None:
    from PIL import Image

    im = Image.new("RGB", (20, 10), (255, 0, 0))
    crop = render_region(im, (5, 2, 15, 8), masked=False, fill=(0, 0, 0))
    assert crop.size == (10, 6)
    masked = render_region(im, (5, 2, 15, 8), masked=True, fill=(0, 0, 255))
    assert masked.size == (20, 10)
    assert masked.getpixel((10, 5)) == (255, 0, 0) and masked.getpixel((1, 1)) == (0, 0, 255)


@pytest.mark.parametrize(
    ("doc", "messages"),
    [
        ({"9": [[0, 0, 5, 5]], "8": []}, ["2 unknown image ids"]),
        ({"1": [[0, 0, 5], [3, 3, 1, 1], [0, 0, "x", 4]]}, ["3 malformed boxes", "1[0], 1[1], 1[2]"]),
        ({"1": [[0, 0, 101, 50], [-1, 0, 5, 5]], "2": [[0, 0, 10, 10]]}, ["2 boxes outside the image"]),
        ({"1": [[0, 0, 5, 5], [0, 0, 500, 5]], "7": [], "2": "boxes"}, ["1 unknown image ids", "1 boxes outside", "not a list"]),
        ([[0, 0, 1, 1]], ["expected an object"]),
    ],
)
def test_proposals_file_errors_say_which_and_how_many(tmp_path: Path, doc: object, messages: list[str]) -> None:
    path = tmp_path / "proposals.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as err:
        load_proposals(path, {"1": (100.0, 50.0), "2": (100.0, 50.0)})
    for m in messages:
        assert m in str(err.value)


def test_proposals_file_ok_and_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"1": [[0, 0, 5.5, 5], [1, 1, 100, 50]], "2": []}))
    got = load_proposals(path, {"1": (100.0, 50.0), "2": (100.0, 50.0)})
    assert got["1"].shape == (2, 4) and got["2"].shape == (0, 4)
    path.write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_proposals(path, {})
    with pytest.raises(UsageError, match="cannot read"):
        load_proposals(tmp_path / "missing.json", {})


@pytest.mark.parametrize("masked", ["false", "true"])
def test_submission_is_valid_and_each_region_is_encoded_once(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                             masked: str) -> None:
    import open_clip

    encoded = []
    original = open_clip.model.CLIP.encode_image

    def counting(self: object, image: object, normalize: bool = False) -> object:
        encoded.append(len(image))  # type: ignore[arg-type]
        return original(self, image, normalize=normalize)

    monkeypatch.setattr(open_clip.model.CLIP, "encode_image", counting)
    proposals = tmp_path / "proposals.json"
    proposals.write_text(json.dumps({"2251": [[10, 10, 60, 60], [0, 0, 64, 64]]}))  # the second is a window already
    code, _, err = run_cli(capsys, *grounding_run(tmp_path, data_dir, *FAST, f"extra.masked={masked}",
                                                  f"extra.proposals={proposals}"))
    assert code == 0, err
    validate(tmp_path / "sub.json", data_dir=data_dir)
    doc = json.loads((tmp_path / "sub.json").read_text())
    notes = doc["meta"]["extra"]["grounding_regions"]
    # 9 windows per image, one extra distinct proposal; phrases outnumber images, encodes do not
    assert notes["regions"] == 9 * notes["images"] + 1
    assert notes["phrases"] > notes["images"]
    assert sum(encoded) == notes["regions"]
    first = doc["predictions"]["2251"]
    phrase = next(iter(next(iter(first.values())).values()))
    assert 1 <= len(phrase["boxes"]) <= 10 and phrase["scores"] == sorted(phrase["scores"], reverse=True)
    assert all(0 <= b[0] < b[2] <= 128 and 0 <= b[1] < b[3] <= 128 for b in phrase["boxes"])


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["extra.proposals=/no/such/proposals.json"], "cannot read proposals file"),
        (["image_root=/no/such/folder"], "images are missing"),
        (["extra.scales=0,2", "extra.nms_iou=7"], "extra.scales must be fractions"),
        (["extra.colour=red"], "unknown setting extra.colour"),
    ],
)
def test_bad_input_exits_2_without_writing(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path,
                                           sets: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, *grounding_run(tmp_path, data_dir, *FAST, *sets))
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "sub.json").exists()


def test_bad_proposals_exit_2_via_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    proposals = tmp_path / "proposals.json"
    proposals.write_text(json.dumps({"2251": [[0, 0, 500, 10]], "1": [[0, 0, 1, 1]]}))
    code, _, err = run_cli(capsys, *grounding_run(tmp_path, data_dir, *FAST, f"extra.proposals={proposals}"))
    assert code == 2
    assert "1 unknown image ids" in err and "1 boxes outside the image" in err
