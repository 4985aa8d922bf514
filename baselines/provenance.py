"""What a baseline submission records about how it was made, so that it can be regenerated."""

from __future__ import annotations

import importlib.metadata
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def recipe_meta(*, recipe: str, config: dict[str, Any], command: str, device: str, world_size: int,
                wall_time_s: float, train: dict[str, Any] | None) -> dict[str, Any]:
    return {
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
