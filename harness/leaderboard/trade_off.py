"""The data behind the trade-off plot: which results are one model on two benchmarks of one world.

A benchmark record's `trade_off` names the benchmark it is plotted against (ODmAP@1 of a
decorrelated benchmark against i2t R@1 of the retrieval benchmark of the same images). Both must
be of the same world (their `mini_world` option, absent for the real datasets' benchmarks), else
the panel has no scored points and says why.

A scored point pairs two submissions only when they are the same model by recorded provenance:
`meta.extra.recipe`, which `vlbench baseline run` writes (`baselines/provenance.py`): the recipe,
its resolved configuration without the settings that only say how the benchmark was read (where
its images are, batch sizes of the encoding), the seed, the architecture, the starting weights by
their sha256 (a local path differs between machines) and, for a trained model, its training steps
and final loss (a second run resumes the checkpoint and records the same). A submission without
that record, or whose model has no submission on the other board, is left out, and the panel
lists it with the reason. A method with several seeds is one point: the mean over its paired
seeds, with bars from the lowest to the highest. Reported rows pair by model name within one paper
(the paper's table is their provenance).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from vlbench.hashing import sha256_bytes
from vlbench.leaderboard.build import Board, BuildReport, Entry
from vlbench.leaderboard.groups import family_key
from vlbench.leaderboard.ranking import canonical_value

# Recipe settings that say how a benchmark was read, not what the model is: the same model is
# evaluated on two benchmarks with different image folders and may encode in other batch sizes.
EVALUATION_SETTINGS = frozenset({"image_root", "query_image_root", "embed_batch_size", "chunk_size", "topk",
                                 "workers"})
NO_PROVENANCE = "no recorded model provenance (meta.extra.recipe: recipe, config, seed)"
UNHASHED_WEIGHTS = "its starting weights are a local file without a recorded sha256 (meta.extra.recipe.pretrained_file)"


def model_identity(meta: Any) -> tuple[str | None, str]:
    """(sha256 of the model's recorded provenance, "") or (None, why it has none)."""
    extra = meta.get("extra") if isinstance(meta, dict) else None
    recipe = extra.get("recipe") if isinstance(extra, dict) else None
    if not (isinstance(recipe, dict) and isinstance(recipe.get("recipe"), str)
            and isinstance(recipe.get("config"), dict) and "seed" in recipe):
        return None, NO_PROVENANCE
    config = {k: v for k, v in recipe["config"].items() if k not in EVALUATION_SETTINGS}
    weights = recipe.get("pretrained_file")
    pretrained = str(config.get("pretrained", ""))
    if isinstance(weights, dict) and isinstance(weights.get("sha256"), str):
        config["pretrained"] = "sha256:" + weights["sha256"]
    elif "/" in pretrained or "\\" in pretrained:
        return None, UNHASHED_WEIGHTS  # a file, not a tag that names fixed weights
    train = recipe.get("train")
    trained = ({"steps": train.get("steps"), "final_loss": train.get("final_loss")}
               if isinstance(train, dict) else None)
    doc = {"recipe": recipe["recipe"], "config": config, "seed": recipe["seed"],
           "architecture": recipe.get("model_config"), "trained": trained}
    return sha256_bytes(json.dumps(doc, sort_keys=True, ensure_ascii=True).encode("ascii")), ""


@dataclass(frozen=True)
class Pair:
    """Two submissions of one model: on the panel's y benchmark and on its x benchmark."""

    y_submission: str
    x_submission: str
    model: str  # the sha256 of the model's recorded provenance


@dataclass(frozen=True)
class Point:
    method: str
    x: float  # percent (or the metric's own unit when it is not a fraction)
    y: float
    x_range: tuple[float, float] | None = None  # lowest and highest seed
    y_range: tuple[float, float] | None = None
    seeds: int = 1  # runs averaged (paired seeds)
    of_seeds: int = 1  # seeds the board's row has
    pairs: tuple[Pair, ...] = ()
    source: str = ""  # reported rows: the paper's data file

    @property
    def label(self) -> str:
        if self.source:
            return f"{self.method} ‡"
        if self.seeds == 1 and self.of_seeds == 1:
            return self.method
        if self.seeds == self.of_seeds:
            return f"{self.method} (mean of {self.seeds} seeds)"
        return f"{self.method} (mean of {self.seeds} of its {self.of_seeds} seeds)"


@dataclass(frozen=True)
class LeftOut:
    submission: str
    benchmark: str
    reason: str


@dataclass
class Panel:
    y_benchmark: str
    x_benchmark: str
    y_key: str
    x_key: str
    world: str | None  # the mini world both benchmarks are of (None: not a mini benchmark)
    x_percent: bool = True
    y_percent: bool = True
    scored: list[Point] = field(default_factory=list)
    reported: list[Point] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    submissions: int = 0  # scored submissions on the two boards

    @property
    def title(self) -> str:
        return f"{self.y_benchmark} vs {self.x_benchmark}"

    def note(self) -> str:
        """One sentence: what was paired, and what was left out and why."""
        models = sum(p.seeds for p in self.scored)
        world = "" if self.world is None else f", mini world {self.world}"
        if self.submissions:
            text = (f"{self.title}: {2 * models} of {self.submissions} scored submissions paired "
                    f"({models} model{'s' if models != 1 else ''} on both boards{world})")
        else:
            text = f"{self.title}: no scored submissions"
        if self.reported:
            text += (f"; {len(self.reported)} model{'s' if len(self.reported) != 1 else ''} reported on both "
                     "benchmarks by one paper")
        if not self.left_out:
            return text + "."
        reasons: dict[str, list[str]] = {}
        for gone in self.left_out:
            reasons.setdefault(gone.reason, []).append(gone.submission)
        parts = []
        for reason, paths in reasons.items():
            shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
            why = f"with {reason}" if reason.startswith("no ") else f"because {reason}"
            parts.append(f"{why}: {shown}" if len(reasons) == 1 else f"{len(paths)} {why}: {shown}")
        joined = f" {parts[0]}" if len(parts) == 1 else f": {'; '.join(parts)}"
        return f"{text}; left out {len(self.left_out)}{joined}."

    def to_dict(self) -> dict[str, Any]:
        def point(p: Point) -> dict[str, Any]:
            out: dict[str, Any] = {"method": p.method, "label": p.label, "x": p.x, "y": p.y,
                                   "x_range": list(p.x_range) if p.x_range else None,
                                   "y_range": list(p.y_range) if p.y_range else None}
            if p.source:
                out["reported_in"] = p.source
            else:
                out["seeds"] = p.seeds
                out["pairs"] = [{"y_submission": q.y_submission, "x_submission": q.x_submission, "model": q.model}
                                for q in p.pairs]
            return out

        return {"title": self.title, "y_benchmark": self.y_benchmark, "y_metric": self.y_key,
                "x_benchmark": self.x_benchmark, "x_metric": self.x_key, "mini_world": self.world,
                "scored": [point(p) for p in self.scored], "reported": [point(p) for p in self.reported],
                "left_out": [{"submission": g.submission, "benchmark": g.benchmark, "reason": g.reason}
                             for g in self.left_out],
                "note": self.note()}


def _value(entry: Entry, key: str, scale: float) -> float | None:
    value = canonical_value(entry.result.scores.get(key))
    return None if value is None else scale * value


def _mean(values: list[float]) -> float:
    return round(math.fsum(values) / len(values), 6)


def _pairs(y_board: Board, x_board: Board) -> tuple[list[Pair], list[LeftOut]]:
    identities: dict[str, dict[str, list[Entry]]] = {}
    left: list[LeftOut] = []
    for board in (y_board, x_board):
        models: dict[str, list[Entry]] = identities.setdefault(board.benchmark.id, {})
        for entry in board.entries:
            model, why = model_identity(entry.result.meta)
            if model is None:
                left.append(LeftOut(entry.path, board.benchmark.id, why))
            else:
                models.setdefault(model, []).append(entry)
    ys, xs = identities[y_board.benchmark.id], identities[x_board.benchmark.id]
    pairs = []
    for board, mine, other, other_id in ((y_board, ys, xs, x_board.benchmark.id),
                                         (x_board, xs, ys, y_board.benchmark.id)):
        for model, entries in mine.items():
            if model not in other:
                left += [LeftOut(e.path, board.benchmark.id, f"no submission of the same model on {other_id}")
                         for e in entries]
            elif len(entries) > 1 or len(other[model]) > 1:
                left += [LeftOut(e.path, board.benchmark.id, "its model has several submissions on one of the "
                                 "two boards (which pair is meant is unknown)") for e in entries]
            elif board is y_board:
                pairs.append(Pair(entries[0].path, other[model][0].path, model))
    return pairs, left


def _scored_points(y_board: Board, x_board: Board, panel: Panel, pairs: list[Pair]) -> list[Point]:
    x_of = {e.path: e for e in x_board.entries}
    by_y = {p.y_submission: p for p in pairs}
    xs, ys = (100.0 if panel.x_percent else 1.0), (100.0 if panel.y_percent else 1.0)
    points = []
    for row in y_board.rows:
        mine = [by_y[e.path] for e in row.entries if e.path in by_y]
        values = [(_value(x_of[p.x_submission], panel.x_key, xs), _value(y_entry, panel.y_key, ys))
                  for p in mine for y_entry in row.entries if y_entry.path == p.y_submission]
        kept = [(x, y) for x, y in values if x is not None and y is not None]
        if not kept or len(kept) != len(mine):
            continue
        x_values, y_values = [x for x, _ in kept], [y for _, y in kept]
        spread = len(kept) > 1
        points.append(Point(row.name, _mean(x_values), _mean(y_values),
                            (min(x_values), max(x_values)) if spread else None,
                            (min(y_values), max(y_values)) if spread else None,
                            len(kept), len(row.entries), tuple(mine)))
    return sorted(points, key=lambda p: p.label.casefold())


def _reported_points(y_board: Board, x_board: Board, panel: Panel) -> list[Point]:
    xs, ys = (100.0 if panel.x_percent else 1.0), (100.0 if panel.y_percent else 1.0)

    def values(board: Board, key: str) -> dict[tuple[str, str], tuple[str, float]]:
        return {(r.source_file, family_key(r.method)): (r.method, v) for r in board.reported
                if (v := r.value(key)) is not None}

    rx, ry = values(x_board, panel.x_key), values(y_board, panel.y_key)
    points = [Point(ry[k][0], round(xs * rx[k][1], 6), round(ys * ry[k][1], 6), source=k[0])
              for k in sorted(set(rx) & set(ry))]
    return sorted(points, key=lambda p: p.label.casefold())


def panels(report: BuildReport) -> list[Panel]:
    """One panel per current board whose record names a trade-off against another current board;
    panels without any point are kept (their note says why nothing was plotted)."""
    by_id = {b.benchmark.id: b for b in report.boards if not b.retired}
    out = []
    for benchmark_id in sorted(by_id):
        y_board = by_id[benchmark_id]
        trade_off = y_board.benchmark.trade_off
        if trade_off is None or trade_off.against not in by_id:
            continue
        x_board = by_id[trade_off.against]
        y_world, x_world = y_board.benchmark.option("mini_world"), x_board.benchmark.option("mini_world")
        panel = Panel(benchmark_id, x_board.benchmark.id, trade_off.y_key, trade_off.x_key,
                      None if y_world is None else str(y_world),
                      x_board.benchmark.metric(trade_off.x_key).display == "percent",
                      y_board.benchmark.metric(trade_off.y_key).display == "percent")
        panel.submissions = len(y_board.entries) + len(x_board.entries)
        if y_world != x_world:
            why = f"the two benchmarks are of different mini worlds ({y_world or 'none'} and {x_world or 'none'})"
            panel.left_out = [LeftOut(e.path, b.benchmark.id, why) for b in (y_board, x_board) for e in b.entries]
        else:
            pairs, panel.left_out = _pairs(y_board, x_board)
            panel.scored = _scored_points(y_board, x_board, panel, pairs)
            paired = {q.y_submission for p in panel.scored for q in p.pairs}
            panel.left_out += [LeftOut(q.y_submission, benchmark_id, f"{trade_off.y_key} or {trade_off.x_key} "
                                       "has no value") for q in pairs if q.y_submission not in paired]
        panel.reported = _reported_points(y_board, x_board, panel)
        out.append(panel)
    return out
