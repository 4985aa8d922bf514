"""The one contrastive training loop every recipe uses.

Checkpoints, logging and the schedule are handled here once; the device, the process group and
the precision come from `runtime.py`, as for every other step of a recipe. Design choices and why:
- The data order is a pure function of (seed, epoch): a resumed run and an uninterrupted one see
  the same batches without saving sampler state, and N processes see the same global batches as
  one process (each takes its contiguous slice), so their results agree.
- Images use the model's evaluation transform (no random augmentation), which keeps the two
  properties above exact; fine-tuning CLIP on captions is commonly done this way.
- The loss is open_clip's `ClipLoss` over features gathered from every rank with gradients, so the
  contrastive negatives are the whole global batch, as in open_clip's trainer.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_file
from vlbench.errors import UsageError
from vlbench.hashing import sha256_file
from vlbench.progress import bar

from .config import TRAINING_KEYS, RecipeConfig
from .data import Pair
from .runtime import Distributed, autocast, device_type

CHECKPOINT = "checkpoint.pt"


class StopTraining(Exception):
    """Raised by `train(stop_after=...)`: simulates a killed run in tests."""


def schedule(config: RecipeConfig, n_pairs: int, world: int = 1) -> tuple[int, int]:
    """(steps per epoch, total steps) for a global batch of `config.batch_size`."""
    if config.batch_size > n_pairs:
        raise UsageError(f"batch_size {config.batch_size} is larger than the training set ({n_pairs} pairs); lower it")
    if config.batch_size % world:
        raise UsageError(f"batch_size {config.batch_size} must be divisible by the number of processes ({world})")
    per_epoch = n_pairs // config.batch_size  # drop_last: every step sees a full global batch
    total = config.steps or max(1, round(config.epochs * per_epoch))
    return per_epoch, total


def lr_at(config: RecipeConfig, step: int, per_epoch: int, total: int = 0) -> float:
    """After an optional linear warmup: the paper's step schedule (lr halved every
    `lr_halve_every_epochs`), or a cosine decay to 0 at step `total` (training from scratch)."""
    if config.warmup_steps and step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    if config.lr_schedule == "cosine":
        span = max(1, total - config.warmup_steps)
        return config.lr * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - config.warmup_steps) / span)))
    epoch = step / per_epoch
    return config.lr * 0.5 ** math.floor(epoch / config.lr_halve_every_epochs)


def epoch_order(pairs: Sequence[Pair], seed: int, epoch: int, group_batches: bool) -> list[int]:
    """A permutation of the pairs for `epoch`.

    With `group_batches`, an image and its edited copies (one group) share a batch as hard
    negatives: each group contributes one unit holding ONE pair per distinct image of the group
    (drawn anew every epoch), kept contiguous; every other pair is a unit of its own. Two captions
    of the same image in one batch would be false negatives of each other under the contrastive
    loss, so a unit never holds the same image twice."""
    rng = random.Random(f"{seed}:{epoch}")
    if not group_batches:
        order = list(range(len(pairs)))
        rng.shuffle(order)
        return order
    groups: dict[str, dict[Path, list[int]]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(p.group, {}).setdefault(p.image, []).append(i)
    units: list[list[int]] = []
    for by_image in groups.values():
        if len(by_image) < 2:
            units.extend([i] for ids in by_image.values() for i in ids)
            continue
        chosen = [ids[rng.randrange(len(ids))] for ids in by_image.values()]
        units.append(chosen)
        taken = set(chosen)
        units.extend([i] for ids in by_image.values() for i in ids if i not in taken)
    rng.shuffle(units)
    return [i for unit in units for i in unit]


def batch_indices(pairs: Sequence[Pair], config: RecipeConfig, step: int, per_epoch: int, dist: Distributed) -> list[int]:
    epoch, within = divmod(step, per_epoch)
    order = epoch_order(pairs, config.seed, epoch, config.group_batches)
    start = within * config.batch_size
    local = config.batch_size // dist.world_size
    lo = start + dist.rank * local
    return order[lo : lo + local]


class PairDataset:
    """Index -> (image tensor, token ids); images are opened lazily in the loader workers."""

    def __init__(self, pairs: Sequence[Pair], preprocess: Callable[[Any], Any], tokenizer: Callable[[list[str]], Any],
                 cache_images: bool = False):
        self.pairs = pairs
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.cache: dict[Path, Any] | None = {} if cache_images else None

    def __len__(self) -> int:
        return len(self.pairs)

    def image(self, path: Path) -> Any:
        from PIL import Image

        if self.cache is not None and path in self.cache:
            return self.cache[path]
        with Image.open(path) as im:
            image = self.preprocess(im.convert("RGB"))
        if self.cache is not None:
            self.cache[path] = image
        return image

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        p = self.pairs[i]
        return self.image(p.image), self.tokenizer([p.caption])[0]


def _rng_state() -> dict[str, Any]:
    import torch

    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    import torch

    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_atomic(obj: Any, path: Path) -> None:
    import torch

    with atomic_file(path) as fh:
        torch.save(obj, fh)


def training_digest(config: RecipeConfig) -> str:
    """The digest that keys a checkpoint: the training settings, and the bytes of a local
    pretrained file (a run that starts from another run's weights must not resume a checkpoint
    made from different weights under the same path)."""
    digest = config.digest(TRAINING_KEYS)
    weights = Path(config.pretrained)
    if config.pretrained.lower() not in ("", "none") and weights.is_file():
        digest = sha256_file(weights, prefix=digest.encode())
    return digest


def load_checkpoint(path: Path, digest: str) -> dict[str, Any] | None:
    import torch

    if not path.is_file():
        return None
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise UsageError(f"checkpoint {path} cannot be read ({exc}); delete it to start over") from None
    if ckpt.get("config_digest") != digest:
        raise UsageError(
            f"checkpoint {path} was written by another configuration (its settings differ from this "
            "run's); use another --checkpoint-dir, or delete it to start over"
        )
    return ckpt


@dataclass
class TrainResult:
    model: Any
    steps: int
    resumed_from: int
    pairs_per_s: float
    final_loss: float


def train(
    loaded: Any,
    pairs: Sequence[Pair],
    config: RecipeConfig,
    *,
    device: str,
    checkpoint_dir: Path | None,
    dist: Distributed | None = None,
    stop_after: int | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train `loaded.model` in place on `pairs`; resumes from `checkpoint_dir` when it holds a
    checkpoint of the same training configuration. `dist`: this process's place in the run
    (`runtime.init_distributed`; default one process)."""
    import torch
    from open_clip.loss import ClipLoss
    from torch.utils.data import DataLoader

    dist = dist or Distributed()
    model = loaded.model
    model.to(device)
    model.train()
    if config.grad_checkpointing:
        model.set_grad_checkpointing(True)
    digest = training_digest(config)
    per_epoch, total = schedule(config, len(pairs), dist.world_size)
    params = [p for p in model.parameters() if p.requires_grad]
    opt_cls = torch.optim.AdamW if config.optimizer == "adamw" else torch.optim.Adam
    optimizer = opt_cls(params, lr=config.lr, weight_decay=config.weight_decay)
    start, last_loss = 0, float("nan")
    ckpt_path = checkpoint_dir / CHECKPOINT if checkpoint_dir else None
    if ckpt_path is not None:
        ckpt = load_checkpoint(ckpt_path, digest)
        if ckpt is not None:
            model.load_state_dict(ckpt["model"])
            optimizer.load_state_dict(ckpt["optimizer"])
            _set_rng_state(ckpt["rng"])
            start = int(ckpt["step"])
            last_loss = float(ckpt.get("loss", float("nan")))
    if start >= total:
        model.eval()
        return TrainResult(model, total, start, 0.0, last_loss)

    wrapped = model
    if dist.world_size > 1:
        from torch.nn.parallel import DistributedDataParallel

        wrapped = DistributedDataParallel(model, device_ids=[dist.local_rank] if device_type(device) == "cuda" else None)
    if config.compile:
        wrapped = torch.compile(wrapped)
    loss_fn = ClipLoss(local_loss=False, gather_with_grad=True, rank=dist.rank, world_size=dist.world_size)
    # a cache in the main process only: loader workers would each fill (and drop) their own copy
    dataset = PairDataset(pairs, loaded.preprocess, loaded.tokenizer, cache_images=config.cache_images and config.workers == 0)
    batches = [batch_indices(pairs, config, s, per_epoch, dist) for s in range(start, total)]
    loader = DataLoader(
        dataset,
        batch_sampler=batches,
        num_workers=config.workers,
        pin_memory=device_type(device) == "cuda",
        persistent_workers=False,
    )
    log_file = checkpoint_dir / "train_log.jsonl" if checkpoint_dir and dist.main else None
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
    step, loss_value, seen, t0 = start, float("nan"), 0, time.perf_counter()
    with bar(total, unit="step", initial=start, show=progress and dist.main) as shown:
        try:
            for images, texts in loader:
                lr = lr_at(config, step, per_epoch, total)
                for group in optimizer.param_groups:
                    group["lr"] = lr
                images = images.to(device, non_blocking=True)
                texts = texts.to(device, non_blocking=True)
                with autocast(config.precision, device):
                    out = wrapped(images, texts)
                    loss = loss_fn(out["image_features"], out["text_features"], out["logit_scale"])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.grad_clip:
                    torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
                optimizer.step()
                with torch.no_grad():  # CLIP clamps the temperature at 100, as open_clip's trainer does
                    model.logit_scale.clamp_(0, math.log(100))
                step += 1
                seen += config.batch_size
                loss_value = float(loss.detach())
                rate = seen / max(time.perf_counter() - t0, 1e-9)
                shown.update(1)
                shown.set_postfix(loss=f"{loss_value:.4f}", lr=f"{lr:.2e}", pairs_s=f"{rate:.0f}")
                if log_file is not None and (step % config.log_every == 0 or step == total):
                    with open(log_file, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps({"step": step, "epoch": step / per_epoch, "loss": loss_value, "lr": lr, "pairs_per_s": rate}) + "\n")
                if ckpt_path is not None and dist.main and (step % config.checkpoint_every == 0 or step == total):
                    save_atomic(
                        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                         "config_digest": digest, "config": config.to_dict(), "rng": _rng_state(), "loss": loss_value},
                        ckpt_path,
                    )
                if stop_after is not None and step >= stop_after and step < total:
                    raise StopTraining(step)
        except RuntimeError as exc:
            if "out of memory" in str(exc).lower():
                raise UsageError(
                    f"out of GPU memory at batch_size {config.batch_size}: lower --set batch_size, or turn on "
                    "--set grad_checkpointing=true"
                ) from None
            raise
    model.eval()
    elapsed = time.perf_counter() - t0
    return TrainResult(model, step, start, seen / elapsed if elapsed else 0.0, loss_value)
