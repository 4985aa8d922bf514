"""D': removals by the decorrelated task's tau rules, its fills, the cache, shards."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from vlbench.baselines.synthetic.build import (
    MANIFEST,
    Filler,
    Planned,
    build_synthetic_pairs,
    plan,
    shard,
)
from vlbench.baselines.synthetic.sources import SourceImage, load_sources
from vlbench.errors import UsageError
from vlbench.tasks.decorrelated.fill import removal_mask
from vlbench.tasks.decorrelated.removal import candidate_removals


class CountingFiller(Filler):
    """A real fill that records which items (by index in the set) it was asked to fill."""

    def __init__(self, method: str = "zero", **kwargs: Any) -> None:
        kwargs = {"device": "cpu", "inpaint_model": "unused", "steps": 2, "resolution": 16, "batch_size": 4} | kwargs
        super().__init__(method, **kwargs)
        self.items: list[int] = []

    def __call__(self, batch: Sequence[Planned], seeds: Sequence[int]) -> list[Any]:
        self.items.extend(s % 1_000_003 for s in seeds)
        return super().__call__(batch, seeds)


def build(sources: Sequence[SourceImage], cache: Path, filler: Filler, **kw: Any) -> list[tuple[Path, str, str]]:
    args = {"ratio": 0.05, "fill": filler.method, "captions": "noun-phrase", "seed": 0, "progress": False,
            "batch_size": 4} | kw  # fmt: skip
    return build_synthetic_pairs(sources, cache_dir=cache, filler=filler, **args)


def test_removals_follow_the_decorrelated_tau_rules(sources: list[SourceImage]) -> None:
    planned = plan(sources, ratio=0.1, captions="noun-phrase", seed=3)
    assert planned
    for p in planned:
        allowed = candidate_removals(p.source.objects, p.source.width, p.source.height)
        assert p.removal in allowed
    # A stricter size limit (tau3) rules out removals the default allows.
    strict = plan(sources, ratio=0.1, captions="noun-phrase", seed=3, tau=(0.4, 0.8, 0.02))
    for p in strict:
        assert p.removal in candidate_removals(p.source.objects, p.source.width, p.source.height, 0.4, 0.8, 0.02)
    assert {p.file_name for p in strict} != {p.file_name for p in planned}


@pytest.mark.parametrize("ratio", [0.02, 0.1, 0.15])
def test_ratio_is_honoured_and_seeded(sources: list[SourceImage], ratio: float) -> None:
    n_pairs = sum(len(s.captions) for s in sources)
    planned = plan(sources, ratio=ratio, captions="noun-phrase", seed=0)
    assert len(planned) == round(ratio * n_pairs)
    assert len({p.file_name for p in planned}) == len(planned)
    # One pair per source image first; a second pass (a new removal or caption) only past that.
    images = len({p.source.image_id for p in planned})
    assert len({p.source.image_id for p in planned[:images]}) == images
    assert (images == len(planned)) == (ratio < 0.15)  # 120 mini images give 70 first-pass pairs
    assert len({(p.source.image_id, p.caption) for p in planned}) == len(planned)
    again = plan(sources, ratio=ratio, captions="noun-phrase", seed=0)
    other = plan(sources, ratio=ratio, captions="noun-phrase", seed=1)
    assert [(p.file_name, p.caption) for p in again] == [(p.file_name, p.caption) for p in planned]
    assert [p.file_name for p in other] != [p.file_name for p in planned]


@pytest.mark.parametrize("method", ["blur", "mean", "zero", "rerender"])
def test_fills_change_only_the_removed_region(sources: list[SourceImage], tmp_path: Path, method: str) -> None:
    pairs = build(sources, tmp_path, CountingFiller(method))
    manifest = json.loads((pairs[0][0].parent / MANIFEST).read_text())
    assert len(pairs) == len(manifest["items"]) > 0
    changed = 0
    for (path, caption, group), item in zip(pairs, manifest["items"], strict=True):
        assert caption == item["caption"] and group == item["group"]
        source = np.asarray(Image.open(item["source_image"]).convert("RGB"))
        filled = np.asarray(Image.open(path).convert("RGB"))
        mask = np.asarray(removal_mask(item["removed_boxes"], (source.shape[1], source.shape[0]))) > 0
        assert np.array_equal(filled[~mask], source[~mask])
        changed += int(not np.array_equal(filled[mask], source[mask]))
    assert changed == len(pairs)


def test_cache_is_reused_rebuilt_on_new_parameters_and_checked(sources: list[SourceImage], tmp_path: Path) -> None:
    first = CountingFiller()
    pairs = build(sources, tmp_path, first)
    assert sorted(first.items) == list(range(len(pairs)))
    doc = json.loads((pairs[0][0].parent / MANIFEST).read_text())
    assert doc["params"]["fill"] == "zero" and doc["params"]["ratio"] == 0.05 and doc["sources"] == len(sources)
    assert all(len(i["sha256"]) == 64 and len(i["source_sha256"]) == 64 and i["removed_classes"] for i in doc["items"])
    assert not list(tmp_path.glob(".*partial"))

    reuse = CountingFiller()
    assert build(sources, tmp_path, reuse) == pairs
    assert reuse.calls == 0

    other = CountingFiller()
    changed = build(sources, tmp_path, other, seed=1)
    assert other.calls > 0 and changed[0][0].parent != pairs[0][0].parent
    assert build(sources, tmp_path, CountingFiller("mean"))[0][0].parent not in (pairs[0][0].parent,
                                                                                 changed[0][0].parent)

    # A damaged image is detected (sha256) and the set rebuilt, not reused.
    pairs[1][0].write_bytes(pairs[1][0].read_bytes()[:-7])
    repair = CountingFiller()
    assert build(sources, tmp_path, repair) == pairs
    assert repair.calls > 0
    assert json.loads((pairs[0][0].parent / MANIFEST).read_text())["items"] == doc["items"]
    # So is an unreadable manifest.
    (pairs[0][0].parent / MANIFEST).write_text("{")
    again = CountingFiller()
    assert build(sources, tmp_path, again) == pairs and again.calls > 0


def test_a_crash_leaves_no_cache_that_looks_complete(sources: list[SourceImage], tmp_path: Path) -> None:
    class Crash(CountingFiller):
        def __call__(self, batch: Sequence[Planned], seeds: Sequence[int]) -> list[Any]:
            if self.calls:
                raise KeyboardInterrupt
            return super().__call__(batch, seeds)

    with pytest.raises(KeyboardInterrupt):
        build(sources, tmp_path, Crash())
    assert not list(tmp_path.glob("dprime-*"))  # nothing published
    resumed = CountingFiller()
    pairs = build(sources, tmp_path, resumed)
    assert sorted(resumed.items) == list(range(4, len(pairs)))  # the first batch of 4 was kept


def test_ranks_fill_each_item_exactly_once(sources: list[SourceImage], tmp_path: Path) -> None:
    planned = plan(sources, ratio=0.1, captions="noun-phrase", seed=0)
    shards = [[k for k, _ in shard(planned, r, 3)] for r in range(3)]
    assert sorted(k for s in shards for k in s) == list(range(len(planned)))

    # Without torch.distributed, ranks run as separate jobs on one cache; rank 0 publishes.
    fillers = {r: CountingFiller() for r in (2, 1, 0)}
    own = {}
    for r, filler in fillers.items():
        own[r] = build(sources, tmp_path, filler, ratio=0.1, rank=r, world_size=3)
    assert {r: sorted(f.items) for r, f in fillers.items()} == dict(enumerate(shards))
    assert len(own[0]) == len(planned) and {p.name for p, _, _ in own[0]} >= {p.name for p, _, _ in own[1]}
    single = build(sources, tmp_path / "one", CountingFiller(), ratio=0.1)
    assert [(p.name, c, g) for p, c, g in single] == [(p.name, c, g) for p, c, g in own[0]]
    for a, b in zip(single, own[0], strict=True):
        assert a[0].read_bytes() == b[0].read_bytes()


def test_bad_options_and_missing_data(sources: list[SourceImage], tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="one of inpaint, blur"):
        build(sources, tmp_path, CountingFiller(), fill="sharpen")
    with pytest.raises(UsageError, match="noun-phrase, prompt"):
        build(sources, tmp_path, CountingFiller(), captions="caption-model")
    with pytest.raises(UsageError, match="rank 3"):
        build(sources, tmp_path, CountingFiller(), rank=3, world_size=3)
    with pytest.raises(UsageError, match="vlbench data prepare coco-5k"):
        load_sources("coco-5k", tmp_path, tmp_path)
    with pytest.raises(UsageError, match="vlbench data prepare flickr30k-1k"):
        load_sources("flickr30k-1k", tmp_path, tmp_path)
    (tmp_path / "karpathy").mkdir()
    (tmp_path / "karpathy" / "dataset_coco.json").write_text(json.dumps({"images": [
        {"split": "train", "filepath": "train2014", "filename": "a.jpg", "cocoid": 1, "sentences": []}]}))
    with pytest.raises(UsageError, match="instance annotations .*coco-5k-decorrelated"):
        load_sources("coco-5k", tmp_path, tmp_path)
    with pytest.raises(UsageError, match="no synthetic-pair source"):
        load_sources("imagenet", tmp_path, None)


def test_inpaint_fill_with_a_tiny_random_pipeline(sources: list[SourceImage], tmp_path: Path,
                                                  tiny_inpainting_pipeline: Any) -> None:
    filler = CountingFiller("inpaint")
    filler.pipe = tiny_inpainting_pipeline
    pairs = build(sources[:40], tmp_path / "cache", filler, ratio=0.02, inpaint_resolution=16, inpaint_steps=2)
    doc = json.loads((pairs[0][0].parent / MANIFEST).read_text())
    assert doc["params"]["inpaint_steps"] == 2 and len(pairs) == round(0.02 * 200)
    for path, item in zip((p for p, _, _ in pairs), doc["items"], strict=True):
        source = np.asarray(Image.open(item["source_image"]).convert("RGB"))
        filled = np.asarray(Image.open(path).convert("RGB"))
        mask = np.asarray(removal_mask(item["removed_boxes"], (source.shape[1], source.shape[0]))) > 0
        assert np.array_equal(filled[~mask], source[~mask])
        assert not np.array_equal(filled[mask], source[mask])


def test_inpainting_weights_missing_offline_is_a_usage_error(sources: list[SourceImage], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    filler = CountingFiller("inpaint", inpaint_model=str(tmp_path / "no-such-model"))
    with pytest.raises(UsageError, match="synthetic_fill=blur"):
        build(sources[:40], tmp_path / "cache", filler, ratio=0.02)
