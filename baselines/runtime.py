"""Where a recipe runs and in what arithmetic: the device, the distributed setup and the precision.

Every step that computes with the model (training, encoding images and texts for retrieval and
prediction, encoding regions, the synthetic fill's sharding) asks here, so that one setting means
the same thing in each of them. The split follows open_clip's trainer (`precision.get_autocast`,
`distributed.world_info_from_env` / `init_distributed_device`):
- precision: `auto` is bf16 autocast on CUDA (open_clip's `amp_bf16`) and plain fp32 on a CPU (the
  arithmetic the committed CPU baselines were made with); `bf16` and `fp32` force one or the
  other on any device;
- the process layout comes from torchrun's environment (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`) only:
  `vlbench baseline run --nproc` starts torchrun, and a scheduler's own variables (SLURM, MPI)
  would start a distributed run nobody asked for;
- each process of a CUDA run takes the GPU of its local rank.
torch is imported only when a function needs it, so reading a configuration stays light.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from vlbench.errors import UsageError

PRECISIONS = ("auto", "bf16", "fp32")


def resolve_device(requested: str | None) -> str:
    """`--device` as torch names it: auto (or nothing) is CUDA when torch sees one, else cpu."""
    import torch

    if requested in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError("--device cuda was asked for, but torch sees no CUDA device; use --device cpu")
    if requested != "cpu" and not requested.startswith("cuda"):
        raise UsageError(f"--device {requested!r}: expected cpu, cuda or cuda:N")
    return requested


def device_type(device: str) -> str:
    """torch's device type of `device` (`cuda:1` -> `cuda`), what autocast is keyed by."""
    return "cuda" if device.startswith("cuda") else "cpu"


def uses_bf16(precision: str, device: str) -> bool:
    """Whether `precision` on `device` computes in bf16 autocast."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
    return precision == "bf16" or (precision == "auto" and device_type(device) == "cuda")


def autocast(precision: str, device: str) -> AbstractContextManager[Any]:
    """The autocast context of `precision` on `device` (a disabled one for fp32): the one
    precision decision of every forward pass."""
    import torch

    return torch.autocast(device_type=device_type(device), dtype=torch.bfloat16,
                          enabled=uses_bf16(precision, device))


@dataclass(frozen=True)
class Distributed:
    """This process's place in the run: its rank among `world_size` processes, and its local
    rank on the machine (which GPU it uses)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


def world_from_env() -> Distributed:
    """The layout torchrun gave this process (one process when it did not start it)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Distributed()
    return Distributed(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))


def init_distributed(device: str) -> Distributed:
    """torchrun's environment -> an initialised process group (gloo on CPU, nccl on CUDA); a
    group that already exists (made by the caller, e.g. with its own timeout) is kept."""
    dist = world_from_env()
    if dist.world_size <= 1:
        return dist
    import torch
    import torch.distributed

    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device_type(device) == "cuda" else "gloo")
    if device_type(device) == "cuda":
        torch.cuda.set_device(dist.local_rank)
    return dist


def init_distributed_device(requested: str | None) -> tuple[str, Distributed]:
    """The device this process computes on, and its place in the run: `--device` resolved, the
    process group set up, and a bare `cuda` narrowed to this process's GPU."""
    device = resolve_device(requested)
    dist = init_distributed(device)
    if dist.world_size > 1 and device == "cuda":
        device = f"cuda:{dist.local_rank}"
    return device, dist


def is_distributed() -> bool:
    """Whether this process is one of an initialised torch.distributed group."""
    try:
        import torch.distributed
    except ImportError:
        return False
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def barrier() -> None:
    """Wait for every process of the group (nothing to wait for in a single process)."""
    if is_distributed():
        import torch.distributed

        torch.distributed.barrier()


__all__ = [
    "PRECISIONS",
    "Distributed",
    "autocast",
    "barrier",
    "device_type",
    "init_distributed",
    "init_distributed_device",
    "is_distributed",
    "resolve_device",
    "uses_bf16",
    "world_from_env",
]
