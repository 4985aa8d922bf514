"""What a baseline submission records about how it was made, so that it can be regenerated."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from vlbench.hashing import sha256_file

PACKAGES = ("vlbench", "torch", "torchvision", "open_clip_torch", "diffusers", "transformers", "numpy", "pillow")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def git_commit(repo: Path | None = None) -> str | None:
    """The checkout's commit, with `-dirty` when tracked files differ from it; None outside git."""
    repo = repo or Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    return f"cpu ({platform.processor() or platform.machine()})"


def command_line(argv: list[str] | None = None) -> str:
    """The command as a user would type it again (`vlbench ...`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(["vlbench", *args])


def file_sha256(path: Path) -> str:
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """Keyed by size and mtime too: a weights file of gigabytes is hashed once per run (the method
    label and the meta both need it), and a rewritten file is hashed again."""
    return sha256_file(path)


def model_architecture(name: str) -> dict[str, Any] | None:
    """The JSON of one of vlbench's own small model configurations (`baselines/model_configs/`):
    a file that can change between commits, so a submission keeps the architecture it ran with."""
    from .models import CONFIG_DIR

    path = CONFIG_DIR / f"{name}.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _training_benchmark(config: dict[str, Any]) -> str:
    """A retrieval benchmark whose train split the checkpoint's settings read (every benchmark of
    a family trains on the same Karpathy train split). The mini world needs no image_root; the
    real families do, and their Karpathy file names tell them apart."""
    if not config.get("image_root"):
        return "mini-retrieval"
    name = Path(str(config.get("karpathy") or "")).name
    if "flickr30k" in name:
        return "flickr30k-1k"
    if "coco" in name:
        return "coco-5k"
    return "BENCHMARK"  # a folder: the user names the benchmark the checkpoint was trained for


def training_command(config: dict[str, Any], checkpoint_dir: str) -> str:
    """A `vlbench baseline run` command that trains a checkpoint with these settings again: the
    training recipe with every setting that differs from the defaults given by `--set`, so its
    checkpoint carries the same training digest (`train.training_digest`)."""
    from .config import KEYS, RecipeConfig

    defaults = RecipeConfig().to_dict()
    recipe = "clip-finetune-synthetic" if float(config.get("synthetic_ratio") or 0) > 0 else "clip-finetune"
    sets = []
    for key in KEYS:
        if key == "extra" or key not in config or config[key] == defaults[key]:
            continue
        value = config[key]
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
        sets.append(f"{key}={text}")
    for key, value in sorted(dict(config.get("extra") or {}).items()):
        sets.append(f"extra.{key}={json.dumps(value) if not isinstance(value, str) else value}")
    argv = ["baseline", "run", recipe, "--benchmark", _training_benchmark(config), "--out", "trained.json",
            "--checkpoint-dir", checkpoint_dir]
    if sets:
        argv += ["--set", *sets]
    return command_line(argv)


def weights_label(pretrained: str) -> str:
    """`pretrained` as a method name shows it: a local file by its name and the start of its sha256
    (the same on every machine, unlike its path); a tag as it is."""
    path = Path(pretrained)
    if pretrained.lower() in ("", "none") or not path.is_file():
        return pretrained
    return f"{path.name}@{file_sha256(path)[:12]}"


def weights_provenance(pretrained: str) -> dict[str, Any] | None:
    """For weights read from a local file: its sha256 and, for a vlbench training checkpoint, the
    settings it was trained with and a command that trains it again. None for open_clip tags."""
    path = Path(pretrained)
    if pretrained.lower() in ("", "none") or not path.is_file():
        return None
    out: dict[str, Any] = {"file": pretrained, "sha256": file_sha256(path), "bytes": path.stat().st_size}
    from .models import vlbench_checkpoint

    ckpt = vlbench_checkpoint(pretrained)
    if ckpt is not None:
        config = dict(ckpt.get("config") or {})
        loss = ckpt.get("loss")
        out["vlbench_checkpoint"] = {
            "step": int(ckpt.get("step", 0)),
            "final_loss": float(loss) if isinstance(loss, (int, float)) and loss == loss else None,
            "training_digest": ckpt.get("config_digest"),
            "training_config": config,
            # the same digest; identical bytes also need the same torch version and thread count
            "training_command": training_command(config, str(path.parent)),
        }
    return out


def recipe_meta(*, recipe: str, config: dict[str, Any], command: str, device: str, world_size: int,
                wall_time_s: float, train: dict[str, Any] | None) -> dict[str, Any]:
    out = {
        "recipe": recipe,
        "config": config,
        "seed": config["seed"],
        "command": command,
        "processes": world_size,
        "packages": package_versions(),
        "git_commit": git_commit(),
        "device": device_name(device),
        "wall_time_s": round(wall_time_s, 3),
        "train": train,
    }
    architecture = model_architecture(str(config["model"]))
    if architecture is not None:
        out["model_config"] = architecture
    weights = weights_provenance(str(config["pretrained"]))
    if weights is not None:
        out["pretrained_file"] = weights
    return out
