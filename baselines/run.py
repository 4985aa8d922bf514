"""Run a recipe on a benchmark: configuration -> (train) -> predictions -> validated submission."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_json
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.output_rule import (
    WRITTEN_SUBMISSION,
    FileKind,
    check_file_target,
    check_folder_to_fill,
    never,
    target_problem,
)
from vlbench.registry import registry
from vlbench.submission import validate_document

from . import config as cfg
from .provenance import command_line, recipe_meta, weights_label
from .recipe import Recipe, RunContext, get


@dataclass
class RunResult:
    submission: dict[str, Any] | None  # None on ranks other than 0
    out: Path | None
    train: dict[str, Any] | None


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def resolve_config(recipe: Recipe, config_file: str | None, sets: Sequence[str]) -> cfg.RecipeConfig:
    layers: list[Mapping[str, Any]] = [recipe.defaults]
    if config_file:
        layers.append(cfg.read_config_file(config_file))
    layers.append(cfg.parse_set(sets))
    return cfg.resolve(*layers)


def run_recipe(
    name: str,
    benchmark_id: str,
    out: str | os.PathLike | None,
    *,
    config_file: str | None = None,
    sets: Sequence[str] = (),
    device: str | None = None,
    data_dir: str | os.PathLike | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    argv: list[str] | None = None,
    progress: bool = True,
    stop_after: int | None = None,
    meta_extra: Mapping[str, Any] | None = None,
    method: str | None = None,
    force: bool = False,
) -> RunResult:
    """`meta_extra`: more facts for the submission's `meta.extra` (e.g. the experiment and arm a
    run belongs to). Every output follows the output rule (`check_outputs`), checked before any
    work; `force` lets it replace files vlbench did not write."""
    started = time.perf_counter()
    recipe = get(name)
    benchmark = registry().benchmark(benchmark_id)
    if benchmark.task not in recipe.predictors:
        tasks = ", ".join(recipe.predictors)
        raise UsageError(f"recipe {name} makes {tasks} submissions; {benchmark_id} is a {benchmark.task} benchmark")
    config = resolve_config(recipe, config_file, sets)
    out_path = check_outputs(out, config, checkpoint_dir, force=force)
    data = Path(data_dir) if data_dir else None

    from .data import load_source, train_pairs
    from .models import load_model
    from .runtime import init_distributed_device
    from .train import train

    device, dist = init_distributed_device(device)
    # data first: a missing file is found in seconds, before any weights are fetched
    source = load_source(benchmark, config, data)
    pairs = train_pairs(source, config) if recipe.train else []
    seed_everything(config.seed)
    loaded = load_model(config.model, config.pretrained, device, config.image_size)
    train_info = None
    if recipe.train:
        n_original = len(pairs)
        n_synthetic = 0
        synthetic_facts: dict[str, Any] | None = None
        if recipe.synthetic and config.synthetic_ratio > 0:
            from .data import Pair
            from .synthetic.build import build_synthetic_pairs
            from .synthetic.sources import load_sources

            # D' is shared by every run with the same parameters: cache it with the data.
            base = data or _default_data()
            knobs = {k: config.extra[k] for k in ("inpaint_model", "inpaint_steps", "inpaint_resolution") if k in config.extra}
            sources = load_sources(benchmark.id, base, source.image_root if source.world_root is None else None)
            cooccurring = _cooccurring_pairs(source)
            extra = build_synthetic_pairs(
                sources, ratio=config.synthetic_ratio, fill=config.synthetic_fill, captions=config.synthetic_captions,
                seed=config.seed, cache_dir=base / "synthetic", rank=dist.rank, world_size=dist.world_size,
                device=device, progress=progress, removals=config.synthetic_removals, pairs=cooccurring, **knobs,
            )
            pairs = pairs + [Pair(Path(p), c, g) for p, c, g in extra]
            n_synthetic = len(extra)
            if cooccurring and dist.main and extra:
                synthetic_facts = _cooccurrence_facts(sources, Path(extra[0][0]).parent, cooccurring,
                                                      config.synthetic_removals)
        ckpt = Path(checkpoint_dir) if checkpoint_dir else None
        result = train(loaded, pairs, config, device=device, checkpoint_dir=ckpt, dist=dist,
                       stop_after=stop_after, progress=progress)
        train_info = {"pairs": n_original, "synthetic_pairs": n_synthetic, "steps": result.steps,
                      "resumed_from_step": result.resumed_from, "pairs_per_s": round(result.pairs_per_s, 2),
                      "final_loss": result.final_loss if math.isfinite(result.final_loss) else None}
        if synthetic_facts is not None:
            train_info["synthetic"] = synthetic_facts
    if not dist.main:
        return RunResult(None, None, train_info)

    ctx = RunContext(benchmark, config, device, data, loaded, source, progress)
    predictions = recipe.predictor(benchmark.task)(ctx)
    values = config.to_dict()
    recipe_facts = recipe_meta(recipe=recipe.name, config=values, command=command_line(argv), device=device,
                               world_size=dist.world_size, wall_time_s=time.perf_counter() - started,
                               train=train_info)
    if not device.startswith("cuda"):
        import torch

        recipe_facts["cpu_threads"] = torch.get_num_threads()  # CPU float sums depend on it
    meta = {
        # a predictor may name the variant it ran (ctx.notes["method"], e.g. caption-nn with consensus re-ranking)
        "method": (method or ctx.notes.pop("method", None)
                   or recipe.method.format(**{**values, "pretrained": weights_label(config.pretrained)}))[:200],
        "team": "vlbench baselines",
        "description": recipe.description,
        "reference": True,
        "baseline": recipe.name,
        "model": f"{config.model} ({config.pretrained})",
        "extra": {"recipe": recipe_facts, **ctx.notes, **(meta_extra or {})},
    }
    doc = {"vlbench": 1, "benchmark": benchmark.id, "task": benchmark.task, "meta": meta, "predictions": predictions}
    try:
        validate_document(doc, data_dir=data)
    except InvalidSubmission as exc:
        raise UsageError(f"the recipe produced an invalid submission (a bug; please report it): {exc}") from None
    if out_path is not None:
        atomic_write_json(out_path, doc, indent=None)
    return RunResult(doc, out_path, train_info)


# The COCO results list has no room for a mark of who wrote it: an existing one needs --force.
COCO_RESULTS = never("a COCO results file (vlbench cannot tell one it wrote from another)")


def _is_train_log(path: Path) -> bool:
    """The training log `train.train` appends to: JSON lines with the step of each entry."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = json.loads(fh.readline() or "null")
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and "step" in first and "loss" in first


TRAIN_LOG = FileKind("a training log", _is_train_log)


def check_outputs(out: str | os.PathLike | None, config: cfg.RecipeConfig,
                  checkpoint_dir: str | os.PathLike | None, force: bool = False) -> Path | None:
    """Refuse, before any work, outputs that the output rule forbids (`vlbench.output_rule`): the
    submission (`--out`), the COCO results file (`--coco-results`, `extra.coco_results`), the
    checkpoint folder and the training log in it. Returns the submission's path."""
    out_path = None if not out else check_file_target(out, WRITTEN_SUBMISSION, force=force)
    coco_results = str(config.extra.get("coco_results", "") or "")
    if coco_results:
        check_file_target(coco_results, COCO_RESULTS, force=force, option="--coco-results")
    if checkpoint_dir:
        folder = check_folder_to_fill(checkpoint_dir, "--checkpoint-dir")  # made by the training, if missing
        problem = folder.is_dir() and target_problem(folder / "train_log.jsonl", TRAIN_LOG, force=force,
                                                     option=f"--checkpoint-dir {folder}: its")
        if problem:
            raise UsageError(problem)
    return out_path


def _cooccurring_pairs(source: Any) -> tuple[tuple[str, str], ...]:
    """The world's (cue, dependent) pairs where they are known (the mini world), else none."""
    if source.world_root is None:
        return ()
    from vlbench.tasks.mini.build import world_config

    return tuple(world_config(source.world_name).pairs())


def _cooccurrence_facts(sources: Sequence[Any], folder: Path, cooccurring: Sequence[tuple[str, str]],
                        rule: str) -> dict[str, Any]:
    """P(dependent | cue) in D (the train pairs D' is drawn from), D' and D + D', one entry per
    pair; and how many D' pairs break the co-occurrence (remove a cue or a dependent alone)."""
    from .synthetic.build import read_manifest
    from .synthetic.removals import keeps_cooccurrence, p_dependent_given_cue

    items = read_manifest(folder)["items"]
    original = [{c for c, _ in s.objects} for s in sources for _ in s.captions]
    synthetic = [set(i["present_classes"]) for i in items]
    return {"removals": rule, "pairs": [list(p) for p in cooccurring],
            "breaking_pairs": sum(not keeps_cooccurrence(i["removed_classes"], cooccurring) for i in items),
            "p_dependent_given_cue": {"D": p_dependent_given_cue(original, cooccurring),
                                      "D'": p_dependent_given_cue(synthetic, cooccurring),
                                      "D+D'": p_dependent_given_cue(original + synthetic, cooccurring)}}


def _default_data() -> Path:
    from vlbench.ground_truth import default_data_dir

    return default_data_dir()
