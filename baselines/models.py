"""open_clip models for the recipes: architecture, weights, preprocessing, tokenizer.

Weights come from open_clip's pretrained tags (its cache or the Hugging Face cache), a local
checkpoint file, or nowhere (`pretrained=none`: random initialisation, what the CPU tests use).
Nothing is downloaded when the machine is offline; a missing file is reported with its name and
where to put it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError

CONFIG_DIR = Path(__file__).parent / "model_configs"


@dataclass
class LoadedModel:
    model: Any  # open_clip.CLIP
    preprocess: Any  # PIL image -> tensor (eval transform)
    tokenizer: Any  # list[str] -> LongTensor
    name: str
    pretrained: str


def _open_clip() -> Any:
    try:
        import open_clip
    except ImportError:
        raise UsageError("baseline recipes need the baselines extra: pip install 'vlbench[baselines]'") from None
    # Our small from-scratch architectures (mini world) live next to this file.
    if not getattr(_open_clip, "registered", False):
        open_clip.add_model_config(CONFIG_DIR)
        _open_clip.registered = True  # type: ignore[attr-defined]
    return open_clip


def _missing_weights_message(open_clip: Any, name: str, tag: str, exc: BaseException) -> str:
    cfg = open_clip.get_pretrained_cfg(name, tag) or {}
    hub = cfg.get("hf_hub", "").rstrip("/")
    hf_home = os.environ.get("HF_HOME", str(Path.home() / ".cache" / "huggingface"))
    where = []
    if hub:
        where.append(f"the Hugging Face cache ({hf_home}/hub, repo {hub}: run `huggingface-cli download {hub}` on a machine with network and copy the cache)")
    if cfg.get("url"):
        where.append(f"a local file: download {cfg['url']} and pass --set pretrained=/path/to/{Path(cfg['url']).name}")
    hint = "; or ".join(where) or "pass --set pretrained=/path/to/checkpoint"
    return f"weights for {name} pretrained={tag} are not available offline ({type(exc).__name__}); put them in {hint}"


def _cached(cfg: dict[str, Any]) -> bool:
    """Whether open_clip will find this tag's weights without a download."""
    hub = cfg.get("hf_hub", "").rstrip("/")
    if hub:
        from huggingface_hub import try_to_load_from_cache

        for filename in ("open_clip_model.safetensors", "open_clip_pytorch_model.bin"):
            if isinstance(try_to_load_from_cache(hub, filename), str):
                return True
    url = cfg.get("url", "")
    return bool(url) and (Path.home() / ".cache" / "clip" / Path(url).name).is_file()


def _online(timeout: float = 3.0) -> bool:
    """Can the hub be reached? Checked before a download so that an offline machine gets the
    missing-file message at once instead of after the hub client's retries.

    The whole probe, name lookup included, is bounded by `timeout`: `create_connection`'s own
    timeout covers only the connect, and a resolver with no network can wait much longer. The
    hub clients' offline switches (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE) are honoured."""
    if any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return False
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
            result.append(True)
        except OSError:
            result.append(False)

    worker = threading.Thread(target=probe, name="vlbench-online-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    return bool(result and result[0])


def load_model(name: str, pretrained: str, device: str = "cpu", image_size: int = 0) -> LoadedModel:
    open_clip = _open_clip()
    if name not in open_clip.list_models():
        raise UsageError(f"unknown open_clip model {name!r} (see open_clip.list_models(); small local ones: {', '.join(sorted(p.stem for p in CONFIG_DIR.glob('*.json')))})")
    tag = None if pretrained.lower() in ("", "none") else pretrained
    if tag is not None and not Path(tag).is_file() and tag not in open_clip.list_pretrained_tags_by_model(name):
        if any(sep in tag for sep in ("/", os.sep, ".pt", ".bin", ".safetensors")):
            raise UsageError(f"pretrained weights file {tag} does not exist")
        tags = ", ".join(open_clip.list_pretrained_tags_by_model(name)) or "none"
        raise UsageError(f"model {name} has no pretrained tag {tag!r}; known tags: {tags}, or a local file, or none")
    if tag is not None and not Path(tag).is_file():
        cfg = open_clip.get_pretrained_cfg(name, tag) or {}
        if not _cached(cfg) and not _online():
            raise UsageError(_missing_weights_message(open_clip, name, tag, ConnectionError("offline")))
    own = vlbench_checkpoint(tag) if tag is not None else None
    if own is not None:
        trained = own.get("config", {}).get("model")
        if trained and trained != name:
            raise UsageError(f"checkpoint {tag} holds a {trained} model, not {name}; set model={trained}")
        tag = None  # build the architecture, then load the checkpoint's weights below
    kwargs: dict[str, Any] = {}
    if image_size:
        kwargs["force_image_size"] = image_size
    # open_clip logs a warning for random initialisation; that is the point of pretrained=none.
    logging.getLogger().setLevel(logging.ERROR)
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=tag, device=device, output_dict=True, **kwargs)
    except (OSError, RuntimeError, ValueError) as exc:
        if tag is not None and not Path(tag).is_file():
            raise UsageError(_missing_weights_message(open_clip, name, tag, exc)) from None
        if tag is not None:
            raise UsageError(f"cannot load weights file {tag} into {name}: {exc}") from None
        raise
    except Exception as exc:  # network libraries raise their own types when offline
        if tag is None:
            raise
        raise UsageError(_missing_weights_message(open_clip, name, tag, exc)) from None
    if own is not None:
        try:
            model.load_state_dict(own["model"])
        except RuntimeError as exc:
            raise UsageError(f"checkpoint {pretrained} does not fit {name}: {str(exc).splitlines()[0]}") from None
    return LoadedModel(model, preprocess, open_clip.get_tokenizer(name), name, pretrained)


def vlbench_checkpoint(path: str) -> dict[str, Any] | None:
    """A training checkpoint written by `baselines/train.py` (None for any other file).

    open_clip's loader reads plain state dicts with `weights_only=True`; ours also holds the
    optimizer and RNG states, so it is recognised and unpacked here."""
    import torch

    p = Path(path)
    if not p.is_file() or p.suffix != ".pt":
        return None
    try:
        # weights_only: ours holds only tensors, numbers, strings and containers, and a weights
        # file from elsewhere must never run code while being recognised
        with warnings.catch_warnings():  # a foreign file's pickle-protocol notes are not the user's concern
            warnings.simplefilter("ignore")
            ckpt = torch.load(p, map_location="cpu", weights_only=True)
    except Exception:
        return None
    if isinstance(ckpt, dict) and "model" in ckpt and "config_digest" in ckpt:
        return ckpt
    return None
