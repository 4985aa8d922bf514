"""vlbench's scoring as an EvalAI challenge evaluation script.

EvalAI's worker imports the challenge's `evaluation_script` package and calls
`evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)` for every
submission; it expects `{"result": [{split_codename: {metric: value}}], "submission_result": ...}`
and shows each split's metrics as leaderboard columns (an optional `"error"` list, shaped like
`"result"`, gives error bars). A failed evaluation must raise an exception with its message.

A challenge host needs no code of their own:

    # evaluation_script/__init__.py (with vlbench installed in the worker)
    from vlbench.evalai import evaluate

and, per phase, uploads as its annotation file a bundle made here from the prepared ground truth:

    python -m vlbench.evalai pack coco-5k --split test_split --out coco-5k.evalai.json

The bundle names the benchmark and its version, the split codename to report under, the
bootstrap settings, and carries the ground-truth files (with their sha256), so the phase
codename can be anything and the worker needs no data folder. Scores are exactly those of
`vlbench score` on the same files (the result record's units: fractions in [0, 1], RSUM in
percent points, caption metrics on pycocoevalcap's scale).

The phase's leaderboard schema (`labels`, `default_order_by`, `metadata`) comes from
`python -m vlbench.evalai schema BENCHMARK`. EvalAI's leaderboard reads a result's error bars as
`error["error_<label>"]` for every label and sorts by `error_<default_order_by>`, so `evaluate`
names them that way.

Remote evaluation (EvalAI-Starters' `remote_challenge_evaluation`) calls
`evaluate(user_submission_file, phase_codename, test_annotation_file=None, **kwargs)` on the
host's machine and reports through the `update_submission` API, whose `result` field is a JSON
list `[{"split", "show_to_participant", "accuracies"}]` that may only name leaderboard labels:
`remote_evaluate` and `update_submission_result` give exactly those.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_json
from vlbench.benchmark import DATA_DIR, Benchmark
from vlbench.errors import InvalidSubmission, UsageError, VlbenchError
from vlbench.ground_truth import locate_ground_truth, resolve_file
from vlbench.hashing import sha256_bytes
from vlbench.jsonio import read_trusted_json
from vlbench.output_rule import EVALAI_BUNDLE, check_file_target
from vlbench.registry import registry
from vlbench.scoring import score_file

BUNDLE_FORMAT = 1
BUNDLE_KEY = "vlbench_evalai"
BARE_METHOD = "unnamed (bare predictions file)"  # the meta.method vlbench gives a file without envelope


class EvaluationFailed(Exception):
    """What EvalAI shows the participant (its stderr) when a submission cannot be scored.
    `exit_code` follows the CLI: 1 for an invalid submission, 2 for a usage or I/O problem."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def pack(benchmark_id: str, out: str | os.PathLike, *, split: str | None = None,
         data_dir: str | os.PathLike | None = None, bootstrap: int = 1000, seed: int = 0,
         force: bool = False) -> Path:
    """Write the annotation file of one EvalAI phase: the benchmark's verified ground truth. An
    existing `out` is replaced only if it is an annotation file vlbench wrote, unless `force`
    (`output_rule`)."""
    check_file_target(out, EVALAI_BUNDLE, force=force, option="--out")
    benchmark = registry().benchmark(benchmark_id)
    gt = locate_ground_truth(benchmark, data_dir)  # present and matching its pinned sha256
    files: dict[str, Any] = {}
    for f in benchmark.files:
        entry: dict[str, Any] = {"path": f.path, "sha256": gt.sha256[f.name]}
        if f.location == DATA_DIR:  # package files ship with vlbench itself: the sha256 is enough
            entry["base64"] = base64.b64encode(gt.paths[f.name].read_bytes()).decode("ascii")
        files[f.name] = entry
    doc = {
        BUNDLE_KEY: BUNDLE_FORMAT,
        "benchmark": benchmark.id,
        "benchmark_version": benchmark.version,
        "split": split or benchmark.id,
        "bootstrap": {"resamples": bootstrap, "seed": seed},
        "ground_truth_sha256": gt.combined_sha256,
        "files": files,
    }
    atomic_write_json(out, doc, indent=None)
    return Path(out)


def _read_bundle(path: str | os.PathLike) -> dict[str, Any]:
    try:
        doc = read_trusted_json(path)
    except (OSError, ValueError, UsageError) as exc:
        raise EvaluationFailed(f"cannot read the annotation file {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get(BUNDLE_KEY) != BUNDLE_FORMAT:
        raise EvaluationFailed(
            f"{path} is not a vlbench EvalAI annotation file; make one from the prepared ground truth "
            "with: python -m vlbench.evalai pack BENCHMARK --split SPLIT_CODENAME --out FILE")
    missing = [k for k in ("benchmark", "benchmark_version", "split", "files") if k not in doc]
    if missing:
        raise EvaluationFailed(f"{path}: annotation file lacks {', '.join(missing)}")
    return doc


def _materialize(doc: dict[str, Any], benchmark: Benchmark, data_dir: Path) -> None:
    """Write the bundle's files where `locate_ground_truth` looks, checking every sha256."""
    problems = []
    for f in benchmark.files:
        entry = doc["files"].get(f.name)
        if entry is None:
            problems.append(f"no file {f.name!r}")
            continue
        if f.location != DATA_DIR:
            continue  # in the installed package; locate_ground_truth checks its pinned sha256
        data = base64.b64decode(entry.get("base64", ""), validate=True)
        digest = sha256_bytes(data)
        if digest != entry.get("sha256"):
            problems.append(f"{f.name}: sha256 {digest[:12]}... differs from the recorded {str(entry.get('sha256'))[:12]}...")
            continue
        target = resolve_file(benchmark, f, data_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if problems:
        raise EvaluationFailed("the annotation file is damaged: " + "; ".join(problems))


def evaluate(test_annotation_file: str, user_submission_file: str, phase_codename: str,
             **kwargs: Any) -> dict[str, Any]:
    """EvalAI's entry point: score `user_submission_file` on the bundle's benchmark.

    Returns `{"result": [{split: scores}], "error": [{split: {"error_<metric>": ci95 half-width}}],
    "submission_result": the vlbench result record}`; raises `EvaluationFailed` with every
    validation problem listed when the submission is invalid.
    """
    doc = _read_bundle(test_annotation_file)
    try:
        benchmark = registry().benchmark(str(doc["benchmark"]))
    except UsageError as exc:
        raise EvaluationFailed(str(exc)) from None
    if benchmark.version != doc["benchmark_version"]:
        raise EvaluationFailed(
            f"the annotation file is for {benchmark.id} v{doc['benchmark_version']} but this vlbench scores "
            f"v{benchmark.version}; results of different versions are not comparable: re-pack it or pin vlbench")
    boot = doc.get("bootstrap", {})
    with tempfile.TemporaryDirectory(prefix="vlbench-evalai-") as tmp:
        _materialize(doc, benchmark, Path(tmp))
        try:
            ev = score_file(user_submission_file, benchmark_id=benchmark.id, data_dir=tmp,
                            bootstrap=int(boot.get("resamples", 1000)), seed=int(boot.get("seed", 0)))
        except InvalidSubmission as exc:
            raise EvaluationFailed(f"{exc}\n{exc.issues.report()}", exit_code=1) from None
        except VlbenchError as exc:
            raise EvaluationFailed(str(exc)) from None
    result = ev.result
    if doc.get("ground_truth_sha256") and result.ground_truth_sha256 != doc["ground_truth_sha256"]:
        raise EvaluationFailed("the ground truth read back differs from the annotation file's record")
    metadata = kwargs.get("submission_metadata") or {}
    if isinstance(metadata, dict) and metadata.get("method_name") and result.meta.get("method") == BARE_METHOD:
        result.meta["method"] = str(metadata["method_name"])  # a bare results file: EvalAI knows its name
    result.per_item = None
    split = str(doc["split"])
    scores = {k: v for k, v in result.scores.items() if v is not None}
    record = result.to_dict()
    record["evalai"] = {"phase_codename": phase_codename, "split": split}
    out: dict[str, Any] = {"result": [{split: scores}], "submission_result": record}
    errors = error_bars(benchmark, scores, result.ci95)
    if errors is not None:
        out["error"] = [{split: errors}]
    return out


def error_bars(benchmark: Benchmark, scores: dict[str, float],
               ci95: dict[str, list[float]]) -> dict[str, float | None] | None:
    """EvalAI's `error` entry of one split: `error_<label>` for every leaderboard label (its page
    looks each one up, so a missing key breaks it), the 95% CI half-width, or None for a label
    with no interval (no value, e.g. SPICE without its CoreNLP jars, or METEOR without the captions extra). None as a whole, so that EvalAI ranks
    with no error bars at all, when the main score has no interval (bootstrap 0): EvalAI's sort
    negates `error_<default_order_by>`, which must then be a number."""
    half = {k: (hi - lo) / 2 for k, (lo, hi) in ci95.items() if k in scores}
    if benchmark.main_score not in half:
        return None
    return {f"error_{m.key}": half.get(m.key) for m in benchmark.metrics}


def leaderboard_schema(benchmark_id: str) -> dict[str, Any]:
    """The `schema` of an EvalAI leaderboard for this benchmark (challenge_config.yaml's
    `leaderboards[].schema`): the metric keys `evaluate` reports, ranked by the main score."""
    benchmark = registry().benchmark(benchmark_id)
    return {
        "labels": [m.key for m in benchmark.metrics],
        "default_order_by": benchmark.main_score,
        "metadata": {m.key: {"sort_ascending": not m.higher_is_better, "description": m.description}
                     for m in benchmark.metrics},
    }


def remote_evaluate(user_submission_file: str, phase_codename: str, test_annotation_file: str | None = None,
                    **kwargs: Any) -> dict[str, Any]:
    """`evaluate` with the argument order of EvalAI-Starters' remote evaluation script."""
    if test_annotation_file is None:
        raise EvaluationFailed(
            "remote evaluation needs the phase's annotation file: pass test_annotation_file (made with "
            "python -m vlbench.evalai pack BENCHMARK --split SPLIT_CODENAME --out FILE)")
    return evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)


def update_submission_result(output: dict[str, Any], show_to_participant: bool = True) -> str:
    """The `result` field of EvalAI's `update_submission` request (a JSON string) for the output of
    `evaluate`: one entry per split, its accuracies restricted to the benchmark's leaderboard
    labels (EvalAI refuses any other key) and to numbers (a metric without a value is left out)."""
    benchmark = registry().benchmark(str(output["submission_result"]["benchmark"]))
    labels = {m.key for m in benchmark.metrics}
    entries = []
    for split_result in output["result"]:
        for split, scores in split_result.items():
            accuracies = {k: float(v) for k, v in scores.items() if k in labels and isinstance(v, (int, float))}
            entries.append({"split": split, "show_to_participant": show_to_participant, "accuracies": accuracies})
    return json.dumps(entries, allow_nan=False)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlbench.evalai", allow_abbrev=False,
                                     description="vlbench scoring as an EvalAI evaluation script")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="write a phase's annotation file from the prepared ground truth",
                       allow_abbrev=False)
    p.add_argument("benchmark")
    p.add_argument("--out", required=True)
    p.add_argument("--split", help="the EvalAI dataset split codename to report under (default: the benchmark id)")
    p.add_argument("--data-dir", help="prepared data folder")
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true",
                   help="replace an --out file that is not an annotation file vlbench wrote (refused without it)")
    p = sub.add_parser("schema", help="print the leaderboard schema (labels, default_order_by) for a benchmark")
    p.add_argument("benchmark")
    p = sub.add_parser("evaluate", help="run evaluate() as EvalAI would and print its output", allow_abbrev=False)
    p.add_argument("annotation")
    p.add_argument("submission")
    p.add_argument("--phase", default="test")
    p.add_argument("--remote", action="store_true",
                   help="print instead the `result` field of EvalAI's update_submission request (remote evaluation)")
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            path = pack(args.benchmark, args.out, split=args.split, data_dir=args.data_dir,
                        bootstrap=args.bootstrap, seed=args.seed, force=args.force)
            print(f"wrote {path} ({path.stat().st_size:,} bytes): upload it as the phase's annotation file")
            return 0
        if args.command == "schema":
            print(json.dumps(leaderboard_schema(args.benchmark), indent=2))
            return 0
        output = evaluate(args.annotation, args.submission, args.phase)
        print(update_submission_result(output) if args.remote else json.dumps(output, indent=2))
        return 0
    except EvaluationFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except VlbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
