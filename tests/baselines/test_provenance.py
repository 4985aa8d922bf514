"""What a baseline submission records about its weights: the file's sha256, the checkpoint's
training settings, a command that trains it again (checked: same training digest), and the
architecture of vlbench's own small models."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from vlbench.baselines.config import resolve
from vlbench.baselines.models import CONFIG_DIR, load_model
from vlbench.baselines.provenance import (
    model_architecture,
    training_command,
    weights_label,
    weights_provenance,
)
from vlbench.baselines.recipe import get
from vlbench.baselines.run import resolve_config
from vlbench.baselines.train import train, training_digest

torch = pytest.importorskip("torch")


def _train(folder: Path, pairs: list, **settings: object) -> Path:
    config = resolve({"model": "tiny-vit-p8", "pretrained": "none", "workers": 0, "batch_size": 16, "steps": 1,
                      "lr": 1e-3, **settings})
    torch.manual_seed(0)
    train(load_model("tiny-vit-p8", "none", "cpu"), pairs, config, device="cpu", checkpoint_dir=folder, progress=False)
    return folder / "checkpoint.pt"


def _replay(command: str) -> tuple[str, str, dict]:
    """(recipe, benchmark, resolved config) of a recorded `vlbench baseline run` command."""
    argv = shlex.split(command)
    assert argv[:3] == ["vlbench", "baseline", "run"]
    sets = argv[argv.index("--set") + 1:] if "--set" in argv else []
    recipe = argv[3]
    return recipe, argv[argv.index("--benchmark") + 1], resolve_config(get(recipe), None, sets)


@pytest.mark.parametrize("settings", [{}, {"lr_schedule": "cosine", "warmup_steps": 1, "optimizer": "adamw",
                                            "weight_decay": 0.1, "group_batches": True, "train_split": "train"}])
def test_training_command_trains_a_checkpoint_with_the_same_digest(tmp_path: Path, mini_pairs: list,
                                                                   settings: dict) -> None:
    path = _train(tmp_path, mini_pairs, **settings)
    facts = weights_provenance(str(path))
    assert facts is not None
    assert facts["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() and facts["bytes"] == path.stat().st_size
    ckpt = facts["vlbench_checkpoint"]
    assert ckpt["step"] == 1 and ckpt["training_config"]["model"] == "tiny-vit-p8"
    recipe, benchmark, config = _replay(ckpt["training_command"])
    assert recipe == "clip-finetune" and benchmark == "mini-retrieval"
    assert f"--checkpoint-dir {tmp_path}" in ckpt["training_command"]
    assert training_digest(config) == ckpt["training_digest"]


def test_training_command_for_synthetic_and_real_data_settings() -> None:
    base = resolve({"synthetic_ratio": 0.2, "image_root": "/data/coco", "karpathy": "/data/dataset_coco.json"}).to_dict()
    recipe, benchmark, config = _replay(training_command(base, "runs/x"))
    assert (recipe, benchmark) == ("clip-finetune-synthetic", "coco-5k")
    assert config.to_dict() == {**base, "extra": {}}
    flickr = resolve({"image_root": "/f", "karpathy": "/f/dataset_flickr30k.json", "extra": {"k": 3}}).to_dict()
    recipe, benchmark, config = _replay(training_command(flickr, "runs/y"))
    assert (recipe, benchmark, config.extra) == ("clip-finetune", "flickr30k-1k", {"k": 3})


def test_open_clip_tags_and_missing_files_have_no_weights_record(tmp_path: Path) -> None:
    assert weights_provenance("openai") is None and weights_provenance("none") is None
    assert weights_provenance(str(tmp_path / "absent.pt")) is None
    other = tmp_path / "weights.bin"
    other.write_bytes(b"abc")
    assert weights_provenance(str(other)) == {"file": str(other), "sha256": hashlib.sha256(b"abc").hexdigest(),
                                              "bytes": 3}


def test_local_architectures_are_recorded() -> None:
    assert model_architecture("mini-vit-p8") == json.loads((CONFIG_DIR / "mini-vit-p8.json").read_text())
    assert model_architecture("ViT-B-32") is None


def test_weights_label_names_a_file_by_name_and_hash_not_path(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "checkpoint.pt").write_bytes(b"same bytes")
    digest = hashlib.sha256(b"same bytes").hexdigest()[:12]
    assert weights_label(str(tmp_path / "a" / "checkpoint.pt")) == f"checkpoint.pt@{digest}"
    assert weights_label(str(tmp_path / "a" / "checkpoint.pt")) == weights_label(str(tmp_path / "b" / "checkpoint.pt"))
    assert weights_label("openai") == "openai" and weights_label("none") == "none"
