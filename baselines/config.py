"""One configuration record for every recipe: defaults, `--config FILE` and `--set key=value`.

A recipe is a set of overrides of `RecipeConfig`'s defaults; the user's file and `--set` pairs
override those. The resolved record goes whole into the submission's `meta`, and its hash keys
checkpoints, so a checkpoint is only ever resumed by the configuration that wrote it.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError
from vlbench.hashing import sha256_bytes


@dataclass(frozen=True)
class RecipeConfig:
    # model
    model: str = "ViT-B-32"
    pretrained: str = "openai"  # an open_clip tag, a local checkpoint file, or "none"
    image_size: int = 0  # 0: the model's own input size
    # data
    karpathy: str = ""  # Karpathy split file or folder holding it ("" = the data folder's copy)
    image_root: str = ""  # folder the Karpathy `filepath/filename` paths are relative to
    query_image_root: str = ""  # decorrelated query images (written by the decorrelated fill)
    train_split: tuple[str, ...] = ("train", "restval")
    max_train_pairs: int = 0  # 0: all; >0 keeps the first N pairs (tests, smoke runs)
    # mini world only: train on the biased split (partner probability 0.9) or on its unbiased twin
    mini_train: str = "biased"
    # training (defaults: the ODmAP paper's CLIP fine-tuning settings, Sec. 5)
    epochs: float = 10.0
    steps: int = 0  # >0 overrides epochs
    batch_size: int = 256
    optimizer: str = "adam"
    lr: float = 2e-6
    lr_halve_every_epochs: float = 2.0  # the paper halves the learning rate every 2 epochs
    lr_schedule: str = "step"  # step: halve every lr_halve_every_epochs (the paper); cosine: to 0
    weight_decay: float = 0.0
    warmup_steps: int = 0
    grad_clip: float = 0.0
    precision: str = "auto"  # auto: bf16 autocast on CUDA, fp32 on CPU; or bf16 / fp32
    grad_checkpointing: bool = False
    compile: bool = False
    workers: int = 4
    # keep each distinct image's preprocessed tensor in memory (exact: the eval transform is
    # deterministic); for small sets trained on a CPU, where decoding dominates a step
    cache_images: bool = False
    group_batches: bool = False  # keep pairs of one group (an image and its edited copies) in a batch
    checkpoint_every: int = 500  # steps
    log_every: int = 10
    seed: int = 0
    # synthetic set D' (clip-finetune-synthetic; the paper: |D'|/|D| of 0.1 to 0.2 suffices)
    synthetic_ratio: float = 0.0
    synthetic_fill: str = "inpaint"
    synthetic_captions: str = "noun-phrase"
    # which removals D' uses: all (the paper's), keep-cooccurrence (free classes only, or a cue
    # with its dependent: the mini experiment's D'-null arm), or breaking:F (a share F of
    # counterexamples, the rest as keep-cooccurrence: its dose-response); `synthetic/removals.py`
    synthetic_removals: str = "all"
    # retrieval
    embed_batch_size: int = 256
    topk: int = 10
    chunk_size: int = 4096  # queries per similarity chunk: bounds the score matrix in memory
    # recipe-specific settings (e.g. consensus=K for caption-nn); values are JSON scalars
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["train_split"] = list(self.train_split)
        d["extra"] = dict(self.extra)
        return d

    def digest(self, keys: Iterable[str] | None = None) -> str:
        """sha256 of the (selected) resolved settings; checkpoints carry the training keys' digest."""
        d = self.to_dict()
        if keys is not None:
            d = {k: d[k] for k in keys}
        return sha256_bytes(json.dumps(d, sort_keys=True).encode())


# Settings that change the trained weights; a checkpoint is resumable only when these match.
TRAINING_KEYS = (
    "model", "pretrained", "image_size", "karpathy", "train_split", "max_train_pairs", "mini_train",
    "epochs", "steps", "batch_size", "optimizer", "lr", "lr_halve_every_epochs", "lr_schedule", "weight_decay",
    "warmup_steps", "grad_clip", "precision", "group_batches", "seed", "synthetic_ratio",
    "synthetic_fill", "synthetic_captions", "synthetic_removals",
)

_HINTS = typing.get_type_hints(RecipeConfig)
KEYS = tuple(f.name for f in fields(RecipeConfig))


def _type_name(hint: Any) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(
        hint, "a comma-separated list" if typing.get_origin(hint) is tuple else str(hint)
    )


def coerce(key: str, value: Any) -> Any:
    """`value` (a string from --set, or a JSON/TOML value) as the type of field `key`."""
    if key not in _HINTS:
        known = ", ".join(KEYS)
        raise UsageError(f"unknown setting {key!r}; known settings: {known}")
    hint = _HINTS[key]
    bad = UsageError(f"setting {key}={value!r}: expected {_type_name(hint)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.lower() in ("true", "1", "yes")
        raise bad
    if hint is int:
        if isinstance(value, bool):
            raise bad
        try:
            out = int(value) if isinstance(value, (int, str)) else None
        except ValueError:
            out = None
        if out is None:
            raise bad
        return out
    if hint is float:
        if isinstance(value, bool):
            raise bad
        try:
            out_f = float(value)
        except (TypeError, ValueError):
            raise bad from None
        if out_f != out_f or out_f in (float("inf"), float("-inf")):
            raise bad
        return out_f
    if hint is str:
        if isinstance(value, (dict, list, bool)) or value is None:
            raise bad
        return str(value)
    if typing.get_origin(hint) is tuple:
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise bad
    if typing.get_origin(hint) in (Mapping, dict) or hint is types.MappingProxyType:
        if not isinstance(value, Mapping):
            raise bad
        return dict(value)
    raise bad  # pragma: no cover - every field type is handled above


def parse_set(pairs: Iterable[str]) -> dict[str, Any]:
    """`key=value` strings. Keys that are not fields go to `extra` only as `extra.NAME=value`."""
    out: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--set {pair!r}: expected key=value")
        if key.startswith("extra."):
            extra[key[len("extra."):]] = _scalar(value)
        else:
            out[key] = coerce(key, value)
    if extra:
        out["extra"] = extra
    return out


def _scalar(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if isinstance(value, (dict, list)):
        raise UsageError(f"extra setting {text!r}: only numbers, strings and booleans are allowed")
    return value


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A JSON or TOML file of settings (top-level keys are field names)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read config file {p}: {exc.strerror or exc}") from None
    try:
        if p.suffix == ".toml":
            import tomllib

            doc = tomllib.loads(text)
        else:
            doc = json.loads(text)
    except Exception as exc:
        raise UsageError(f"config file {p} is not valid {'TOML' if p.suffix == '.toml' else 'JSON'}: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"config file {p}: expected a table/object of settings at the top level")
    return {k: coerce(k, v) for k, v in doc.items()}


def resolve(*layers: Mapping[str, Any]) -> RecipeConfig:
    """Defaults, then each layer in order (later wins; `extra` dicts merge)."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "extra":
                extra.update(coerce("extra", value))
            else:
                values[key] = coerce(key, value)
    config = RecipeConfig(**values, extra=extra)
    check(config)
    return config


def check(c: RecipeConfig) -> None:
    """Values each field must have; every problem is listed in one message."""
    problems = []
    for key in ("batch_size", "embed_batch_size", "topk", "chunk_size", "checkpoint_every", "log_every"):
        if getattr(c, key) < 1:
            problems.append(f"{key} must be at least 1")
    for key in ("epochs", "lr", "lr_halve_every_epochs"):
        if getattr(c, key) <= 0:
            problems.append(f"{key} must be positive")
    for key in ("steps", "workers", "warmup_steps", "max_train_pairs", "image_size"):
        if getattr(c, key) < 0:
            problems.append(f"{key} must not be negative")
    if c.weight_decay < 0 or c.grad_clip < 0:
        problems.append("weight_decay and grad_clip must not be negative")
    if not 0 <= c.synthetic_ratio <= 10:
        problems.append("synthetic_ratio must be between 0 and 10")
    if c.optimizer not in ("adam", "adamw"):
        problems.append("optimizer must be adam or adamw")
    if c.lr_schedule not in ("step", "cosine"):
        problems.append("lr_schedule must be step or cosine")
    if c.mini_train not in ("biased", "unbiased"):
        problems.append("mini_train must be biased or unbiased")
    if c.precision not in ("auto", "bf16", "fp32"):
        problems.append("precision must be auto, bf16 or fp32")
    if c.synthetic_fill not in ("inpaint", "blur", "mean", "zero", "rerender"):
        problems.append("synthetic_fill must be inpaint, blur, mean, zero or rerender")
    if c.synthetic_captions not in ("noun-phrase", "prompt"):
        problems.append("synthetic_captions must be noun-phrase or prompt")
    if not _removal_rule_ok(c.synthetic_removals):
        problems.append("synthetic_removals must be all, keep-cooccurrence or breaking:F with 0 < F < 1")
    if not 0 <= c.seed < 2**32:
        problems.append("seed must be in [0, 2**32)")
    if problems:
        raise UsageError("invalid configuration: " + "; ".join(problems))


def _removal_rule_ok(rule: str) -> bool:
    from .synthetic.removals import rule_parts

    try:
        rule_parts(rule)
    except UsageError:
        return False
    return True
