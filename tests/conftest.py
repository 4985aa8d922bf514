"""Fixtures shared by the whole suite: small Karpathy-format files and prepared data folders."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vlbench.registry import registry
from vlbench.source_check import SourceDeviation


@contextlib.contextmanager
def deviation_expected(benchmark_id: str = "") -> Iterator[None]:
    """Around a forced `prepare` from a toy source: the `SourceDeviation` warning it gives is
    expected, so it is asserted here rather than left in the test run's output."""
    with pytest.warns(SourceDeviation, match=f"--force: preparing {re.escape(benchmark_id)}"):
        yield


def karpathy_doc(
    n_test: int,
    n_other: int = 3,
    captions: int = 5,
    dataset: str = "coco",
    extra_caption_every: int = 0,
) -> dict[str, Any]:
    """A Karpathy-format document: `n_test` test images plus train/val/restval ones.

    Image ids and caption ids are distinct integer ranges, so a swapped direction is caught.
    Every `extra_caption_every`-th test image gets a sixth caption (COCO has such images).
    """
    images = []
    sentid = 700000
    splits = ["test"] * n_test + ["train", "val", "restval"] * n_other
    for i, split in enumerate(splits):
        n_caps = captions + (1 if extra_caption_every and split == "test" and i % extra_caption_every == 0 else 0)
        sentences = []
        for j in range(n_caps):
            sentences.append({"sentid": sentid, "raw": f"image {i} caption {j}.", "tokens": ["image", str(i)], "imgid": i})
            sentid += 1
        entry = {
            "split": split,
            "imgid": i,
            "sentids": [s["sentid"] for s in sentences],
            "sentences": sentences,
            "filename": f"{1000 + i}.jpg" if dataset == "flickr30k" else f"COCO_val2014_{100000 + i:012d}.jpg",
        }
        if dataset == "coco":
            entry["cocoid"] = 100000 + i
            entry["filepath"] = "val2014"
        images.append(entry)
    return {"images": images, "dataset": dataset}


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[..., Path]:
    def write(obj: Any, name: str = "submission.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(obj), encoding="utf-8")
        return path

    return write


@pytest.fixture
def retrieval_data(tmp_path: Path) -> Path:
    """A data dir with coco-5k, coco-1k (50 test images: folds of 10) and flickr30k-1k prepared."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "dataset_coco.json").write_text(json.dumps(karpathy_doc(50, extra_caption_every=4)))
    (source / "dataset_flickr30k.json").write_text(json.dumps(karpathy_doc(12, dataset="flickr30k")))
    data_dir = tmp_path / "data"
    reg = registry()
    for benchmark_id in ("coco-5k", "coco-1k", "flickr30k-1k"):
        b = reg.benchmark(benchmark_id)
        # toy sources, far smaller than the official files: a deliberate deviation, said as a warning
        with deviation_expected(benchmark_id):
            reg.task_of(b).prepare(b, str(source), data_dir, force=True)
    return data_dir


@pytest.fixture
def tiny_inpainting_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A StableDiffusionInpaintPipeline with tiny random weights built from configs (no download),
    seeded; its progress bar off. Skips without diffusers (the baselines extra)."""
    torch = pytest.importorskip("torch")
    diffusers = pytest.importorskip("diffusers")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        block_out_channels=(8, 16), layers_per_block=1, sample_size=8, in_channels=9, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=8, attention_head_dim=2, norm_num_groups=4,
    )  # fmt: skip
    vae = diffusers.AutoencoderKL(
        block_out_channels=(8, 8), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=4,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
    )  # fmt: skip
    text = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
        max_position_embeddings=8, bos_token_id=0, eos_token_id=1, pad_token_id=1,
    ))  # fmt: skip
    folder = tmp_path_factory.mktemp("tiny-clip-tokenizer")
    (folder / "vocab.json").write_text(json.dumps({"<|startoftext|>": 0, "<|endoftext|>": 1}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=8)
    pipe = diffusers.StableDiffusionInpaintPipeline(
        vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet, scheduler=diffusers.DDIMScheduler(steps_offset=1),
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )  # fmt: skip
    pipe.set_progress_bar_config(disable=True)
    return pipe


@pytest.fixture(scope="session")
def mini_world_from_the_cli(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`world(name)`: the mini world `name` as `vlbench data mini` writes it the way the README
    shows (default folder, in the current folder), made once per test session when first asked
    for (about half a minute of CPU for v2, a minute for v3)."""
    import os

    from vlbench.cli import main

    root = tmp_path_factory.mktemp("data-mini")
    made: dict[str, Path] = {}

    def world(name: str) -> Path:
        if name not in made:
            here = os.getcwd()
            os.chdir(root)
            try:
                argv = ["data", "mini"] if name == "v2" else ["data", "mini", "--benchmark", "mini-decorrelated"]
                assert main(argv) == 0
            finally:
                os.chdir(here)
            made[name] = root / ("vlbench-mini" if name == "v2" else f"vlbench-mini-{name}")
        return made[name]

    return world
