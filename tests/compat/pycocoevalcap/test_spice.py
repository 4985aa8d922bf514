"""SPICE: detected, never faked. Where its CoreNLP jars are missing (here), `Spice()` raises saying
so; where they are present, the jar runs as pycocoevalcap runs it and its output is read the same
way. That second path is checked with a stand-in `java` (a script that writes the output file the
real SPICE jar writes), since the real jars cannot be installed here."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from vlbench.compat.pycocoevalcap.spice.spice import Spice, SpiceUnavailable

STAND_IN = """#!{python}
import json, sys
args = sys.argv[1:]
src = args[args.index("-jar") + 2]
out = args[args.index("-out") + 1]
assert "-subset" in args and "-silent" in args and "-cache" in args
with open(sys.argv[0] + ".calls", "a") as f:
    f.write(json.dumps(args) + "\\n")
records = json.load(open(src))
# SPICE's output: one record per image, in input order, "f" null when it has no tuples
result = [{{"image_id": r["image_id"],
            "scores": {{"All": {{"pr": 0.5, "re": 0.5, "f": (None if r["test"] == "" else len(r["test"]) / 100),
                                 "fn": 1, "numImages": 1, "fp": 0, "tp": 2}},
                       "Object": {{"pr": 1.0, "re": "NaN", "f": 0.25}}}}}} for r in records]
json.dump(result, open(out, "w"))
"""


def test_missing_corenlp_raises_naming_what_is_missing(monkeypatch, tmp_path):
    jar = tmp_path / "spice" / "spice-1.0.jar"
    jar.parent.mkdir()
    jar.write_bytes(b"")
    monkeypatch.setenv("VLBENCH_SPICE_JAR", str(jar))
    monkeypatch.setenv("VLBENCH_JAVA", sys.executable)  # some executable: Java counts as present
    with pytest.raises(SpiceUnavailable, match="stanford-corenlp-3.6.0.jar and stanford-corenlp-3.6.0-models.jar"):
        Spice()
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    with pytest.raises(SpiceUnavailable, match="no java"):
        Spice()


@pytest.fixture
def stand_in_spice(monkeypatch, tmp_path) -> Path:
    jar = tmp_path / "spice" / "spice-1.0.jar"
    (jar.parent / "lib").mkdir(parents=True)
    jar.write_bytes(b"")
    for name in ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar"):
        (jar.parent / "lib" / name).write_bytes(b"")
    java = tmp_path / "java"
    java.write_text(STAND_IN.format(python=sys.executable))
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VLBENCH_SPICE_JAR", str(jar))
    monkeypatch.setenv("VLBENCH_JAVA", str(java))
    return java


def test_spice_runs_the_jar_and_reads_it_as_pycocoevalcap(stand_in_spice):
    gts = {30: ["a dog"], 10: ["a cat", "the cat"], 20: ["birds"]}
    res = {30: ["a dog runs"], 10: [""], 20: ["two birds"]}
    score, per_image = Spice().compute_score(gts, res)
    call = json.loads((Path(str(stand_in_spice) + ".calls")).read_text().splitlines()[0])
    assert "-Xmx8G" in call and any(a.startswith("--add-opens") for a in call)
    # sorted image order; "NaN" strings and nulls become NaN; the mean is NaN when one is
    assert [p["All"]["f"] for p in per_image][1:] == [0.09, 0.1]
    assert np.isnan(per_image[0]["All"]["f"]) and np.isnan(per_image[0]["Object"]["re"])
    assert type(score) is np.float64 and np.isnan(score)
    res[10] = ["x"]
    score, _ = Spice().compute_score(gts, res)
    assert score == pytest.approx(np.mean([0.01, 0.09, 0.1]))


def test_evaluate_assigns_spice_in_sorted_order_as_pycocoevalcap(stand_in_spice, tmp_path):
    """pycocoevalcap zips SPICE's sorted per-image scores with gts' order: with ids not in sorted
    order, imgToEval gets another image's SPICE. Kept, since results computed with it are."""
    from compat_drivers import OURS, coco_caption_eval, write_coco_files

    ann, res = write_coco_files(tmp_path, ["a dog runs", "a cat", "two birds"],
                                [["a dog"], ["a cat"], ["birds"]], ids=[30, 10, 20])
    out = coco_caption_eval(OURS, ann, res)
    assert "SPICE" in out["eval"] and "SPICE: 0.080" in out["printed"]
    order = list(out["imgToEval"])
    # the first image of gts' order gets the SPICE of the smallest id (10: "a cat" -> 0.05)
    assert out["imgToEval"][order[0]]["SPICE"]["All"]["f"] == 0.05
