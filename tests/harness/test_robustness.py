"""Careless and hostile use of the command line and the Python API.

Whatever the input, vlbench answers with sentences and the documented exit code (0 ok, 1 invalid
submission with every problem listed, 2 usage or I/O error), never a traceback, and a refused or
failed run leaves no file behind. The fuzzing below keeps example counts small: the suite runs on
two shared cores.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vlbench
from vlbench.cli import main
from vlbench.errors import InvalidSubmission, UsageError, shorten
from vlbench.schema import MAX_SCHEMA_ERRORS

REPO = Path(__file__).resolve().parents[2]
MINI = {b: REPO / "submissions" / b / "random.json" for b in
        ("mini-retrieval", "mini-decorrelated", "mini-grounding", "mini-captions")}
DOCS = {b: json.loads(p.read_text()) for b, p in MINI.items()}
ISSUE_LINE = re.compile(r"^(\(document\)|/.*?): \[[\w.]+\] ", re.M)
# VLBENCH_FUZZ_EXAMPLES=2000 for a longer hunt than the suite's default
FUZZ = settings(max_examples=int(os.environ.get("VLBENCH_FUZZ_EXAMPLES", "40")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The CLI in-process: (exit code, stdout, stderr), argparse's own exits included."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in out + err, err[-2000:]
    assert "internal error" not in err, err[-2000:]
    if code == 1 and not out.lstrip().startswith("{"):
        # a refusal lists at least one problem, under a header naming the file
        assert re.search(r"^INVALID: .+: [\d,]+ problems? found$", err, re.M), err[-2000:]
        assert ISSUE_LINE.search(err), err[-2000:]


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def write(folder: Path, doc: Any, name: str = "sub.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# --- paths that are not submission files -------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dev_null", "folder", "missing", "nul", "loop"])
def test_paths_that_are_not_files(capsys, tmp_path: Path, kind: str) -> None:
    path = {"dev_zero": "/dev/zero", "dev_null": "/dev/null", "folder": str(tmp_path),
            "missing": str(tmp_path / "nope.json"), "nul": "a\x00b.json"}.get(kind, str(tmp_path / kind))
    if kind == "fifo":
        os.mkfifo(path)  # no writer: reading it would block forever
    if kind == "loop":
        os.symlink(path, path)
    for command in ("validate", "score"):
        code, out, err = run(capsys, command, path)
        assert_clean(code, out, err)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err


def test_fifo_and_device_through_the_api(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", "/dev/zero"):
        with pytest.raises(UsageError, match="not a submission file"):
            vlbench.score(path)


def test_file_without_a_reported_size_is_capped(tmp_path: Path) -> None:
    # /proc files report size 0 and deliver more: the cap holds while reading
    from vlbench.errors import IssueList
    from vlbench.jsonio import read_bytes_capped

    issues = IssueList()
    raw, _, _ = read_bytes_capped("/proc/self/maps", issues, max_bytes=10)
    assert raw is None and "file_too_large" in issues.codes()


# --- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [["--bootstrap", "-5"], ["--bootstrap", "100000000000"], ["--bootstrap", "1.5"], ["--seed", "-1"],
     ["--seed", "x"], ["--max-bytes", "0"], ["--max-decompressed", "-1"], ["--max-errors", "0"],
     ["--bootstrap", ""]],
)
def test_bad_numbers_are_usage_errors(capsys, option: list[str]) -> None:
    code, out, err = run(capsys, "score", str(MINI["mini-retrieval"]), *option)
    assert_clean(code, out, err)
    assert code == 2 and option[0] in err


def test_debug_is_accepted_anywhere(capsys, tmp_path: Path) -> None:
    for argv in (["--debug", "validate", str(tmp_path)], ["validate", str(tmp_path), "--debug"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "Traceback" in err  # --debug shows it
    code, _, err = run(capsys, "validate", str(MINI["mini-retrieval"]), "--debug")
    assert code == 0


def test_api_refuses_bad_arguments() -> None:
    doc = DOCS["mini-retrieval"]
    for kwargs in ({"bootstrap": -5}, {"bootstrap": 10**12}, {"bootstrap": 2.5}, {"seed": -1},
                   {"max_errors": 0}, {"benchmark": 5}, {"benchmark": "nope"}, {"out": 3}):
        with pytest.raises(UsageError):
            vlbench.score(doc, **kwargs)
    for bad in (b"{}", 5, None, {1, 2}):
        with pytest.raises(UsageError):
            vlbench.validate(bad)


# --- nothing written by a refused or failed run -------------------------------------------------


def test_out_naming_a_folder_writes_nothing(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    code, out, err = run(capsys, "score", str(MINI["mini-retrieval"]), "--out", str(folder), "--bootstrap", "0")
    assert_clean(code, out, err)
    assert code == 2 and "is a folder" in err
    assert listing(tmp_path) == ["results"]


def test_out_under_a_file_and_over_the_submission(capsys, tmp_path: Path) -> None:
    sub = write(tmp_path, DOCS["mini-retrieval"])
    before = sub.read_bytes()
    for out_path in (sub / "r.json", sub, tmp_path / "sub.json"):
        code, out, err = run(capsys, "score", str(sub), "--out", str(out_path), "--bootstrap", "0")
        assert_clean(code, out, err)
        assert code == 2
    assert sub.read_bytes() == before and listing(tmp_path) == ["sub.json"]


@pytest.mark.parametrize(
    "meta_extra",
    [1e999, json.loads("[" * 20 + "0" + "]" * 20), {"k": "x" * 200_000}],
    ids=["infinite", "deep", "huge"],
)
def test_bad_meta_is_refused_before_anything_is_written(capsys, tmp_path: Path, meta_extra: Any) -> None:
    doc = copy.deepcopy(DOCS["mini-retrieval"])
    doc["meta"]["extra"] = meta_extra
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(doc).replace("Infinity", "1e999"))
    out_path = tmp_path / "r.json"
    code, out, err = run(capsys, "score", str(sub), "--out", str(out_path), "--bootstrap", "0")
    assert_clean(code, out, err)
    assert code == 1 and "[meta." in err
    assert listing(tmp_path) == ["sub.json"]


def test_meta_nested_past_the_parser(capsys, tmp_path: Path) -> None:
    sub = tmp_path / "sub.json"
    text = json.dumps(DOCS["mini-retrieval"])
    sub.write_text(text.replace('"meta": {', '"meta": {"extra": ' + "[" * 5000 + "]" * 5000 + ", ", 1))
    code, out, err = run(capsys, "score", str(sub), "--out", str(tmp_path / "r.json"))
    assert_clean(code, out, err)
    assert code == 1 and listing(tmp_path) == ["sub.json"]


def test_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record's rename fails after the per-item file's succeeded: both are taken back."""
    from vlbench import atomic_files

    vlbench.score(DOCS["mini-retrieval"], bootstrap=0, out=tmp_path / "r.json")
    (tmp_path / "r.json").unlink()
    old_items = (tmp_path / "r.per_item.json").read_text()
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("r.json"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic_files.os, "replace", replace)
    with pytest.raises(UsageError, match="No space left"):
        vlbench.score(DOCS["mini-retrieval"], bootstrap=0, out=tmp_path / "r.json")
    assert listing(tmp_path) == ["r.per_item.json"]
    assert (tmp_path / "r.per_item.json").read_text() == old_items


def test_result_and_items_are_written_together(tmp_path: Path) -> None:
    (tmp_path / "deep").mkdir()
    record = vlbench.score(MINI["mini-retrieval"], bootstrap=0, out=tmp_path / "deep" / "r.json")
    assert listing(tmp_path) == ["deep", "deep/r.json", "deep/r.per_item.json"]
    assert record.per_item == "r.per_item.json"


# --- messages ---------------------------------------------------------------------------------


def test_refusal_header_names_the_file_and_counts_in_words(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "validate", str(write(tmp_path, {"x": 1})))
    assert code == 1 and f"INVALID: {tmp_path / 'sub.json'}: 1 problem found" in err
    code, _, err = run(capsys, "validate", str(write(tmp_path, {"vlbench": 1})))
    assert code == 1 and "4 problems found" in err and "INVALID: submission" not in err


def test_score_summary_is_for_people(capsys) -> None:
    code, out, _ = run(capsys, "score", str(MINI["mini-retrieval"]), "--bootstrap", "0")
    assert code == 0 and "{" not in out and "250 images, 1,250 captions, 1 fold." in out


def test_schema_message_shows_expected_and_found(capsys, tmp_path: Path) -> None:
    doc = copy.deepcopy(DOCS["mini-retrieval"])
    key = next(iter(doc["predictions"]["image_to_text"]))
    doc["predictions"]["image_to_text"][key] = "y" * 10_000_000
    doc["meta"]["method"] = ["z"] * 100_000
    code, _, err = run(capsys, "validate", str(write(tmp_path, doc)))
    assert code == 1
    assert f"/predictions/image_to_text/{key}: [schema.type] expected array, found string \"yyy" in err
    assert "(10,000,000 characters)" in err
    assert "/meta/method: [schema.type] expected string, found array [\"z\"" in err
    assert len(err) < 5000  # no output amplification


def test_shorten_is_bounded() -> None:
    for value in ("x" * 10**6, list(range(10**5)), {str(i): [i] * 100 for i in range(1000)},
                  10**5000 if sys.get_int_max_str_digits() else 1, [[[[[[[[[]]]]]]]]], object()):
        assert len(shorten(value)) < 200


def test_a_million_nulls_are_reported_quickly(capsys, tmp_path: Path) -> None:
    """The schema layer stops after MAX_SCHEMA_ERRORS violations and says so."""
    doc = copy.deepcopy(DOCS["mini-captions"])
    doc["predictions"] = [None] * 1_000_000
    code, out, err = run(capsys, "validate", str(write(tmp_path, doc)), "--json")
    report = json.loads(out)
    assert code == 1 and report["complete"] is False and report["notes"]
    assert report["counts_by_code"]["schema.type"] == MAX_SCHEMA_ERRORS


def test_grounding_box_list_of_a_million_nulls(capsys, tmp_path: Path) -> None:
    doc = copy.deepcopy(DOCS["mini-grounding"])
    image = next(iter(doc["predictions"].values()))
    entry = next(iter(next(iter(image.values())).values()))
    entry["boxes"] = [None] * 1_000_000
    code, out, err = run(capsys, "validate", str(write(tmp_path, doc)))
    assert_clean(code, out, err)
    assert code == 1 and "[schema.maxItems] expected at most 100 items, found 1,000,000" in err


def test_long_digit_strings_as_ids(capsys, tmp_path: Path) -> None:
    """Id hints convert digit strings to int: past 4,300 digits Python refuses (ValueError)."""
    long_id = "9" * 5000
    docs = []
    cap = copy.deepcopy(DOCS["mini-captions"])
    cap["predictions"][0]["image_id"] = long_id
    docs.append(cap)
    gr = copy.deepcopy(DOCS["mini-grounding"])
    gr["predictions"][long_id] = next(iter(gr["predictions"].values()))
    docs.append(gr)
    gr2 = copy.deepcopy(DOCS["mini-grounding"])
    gr2["predictions"]["²"] = {}
    docs.append(gr2)
    for doc in docs:
        code, out, err = run(capsys, "validate", str(write(tmp_path, doc)))
        assert_clean(code, out, err)
        assert code == 1 and len(err) < 20_000


@pytest.mark.parametrize(
    "images",
    [[{"split": "test"}], [5], [{"filename": "1.jpg", "split": "test", "sentences": [{"sentid": "x"}]}],
     [{"filename": "1.jpg", "split": "test", "sentences": [{"raw": "a"}]}]],
)
def test_damaged_karpathy_file_is_a_sentence(capsys, tmp_path: Path, images: list) -> None:
    (tmp_path / "dataset_coco.json").write_text(json.dumps({"images": images}))
    for force in ([], ["--force"]):
        code, out, err = run(capsys, "data", "prepare", "coco-5k", "--source", str(tmp_path),
                             "--data-dir", str(tmp_path / "data"), *force)
        assert_clean(code, out, err)
        assert code == 2 and not (tmp_path / "data").exists()


# --- compare ----------------------------------------------------------------------------------


def test_compare_without_per_item_files(capsys, tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    assert main(["score", str(MINI["mini-retrieval"]), "--out", str(a), "--bootstrap", "0"]) == 0
    capsys.readouterr()
    (tmp_path / "a.per_item.json").unlink()
    code, out, err = run(capsys, "compare", str(a), str(a))
    assert_clean(code, out, err)
    assert code == 2 and "per-item" in err
    record = json.loads(a.read_text())
    record["per_item"] = None
    a.write_text(json.dumps(record))
    code, _, err = run(capsys, "compare", str(a), str(a))
    assert code == 2 and "--out" in err
    for junk in ("[1, 2]", "{", '{"benchmark": 5, "task": "x", "benchmark_version": "1", "scores": {}}', ""):
        a.write_text(junk)
        code, out, err = run(capsys, "compare", str(a), str(a))
        assert_clean(code, out, err)
        assert code == 2 and str(a) in err


# --- pipes --------------------------------------------------------------------------------------


def test_output_into_a_closed_pipe_is_quiet() -> None:
    """`vlbench score ... | head -1`: the reader goes away; no BrokenPipeError, no traceback."""
    for argv in (["score", str(MINI["mini-retrieval"]), "--bootstrap", "0"], ["tasks", "--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "vlbench", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=REPO)
        proc.stdout.close()  # closed before anything is written: every write meets EPIPE
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.wait(timeout=120) == 0, err
        assert "Broken" not in err and "Traceback" not in err and "Exception ignored" not in err, err


# --- the Python API -----------------------------------------------------------------------------


def test_api_matches_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(DOCS["mini-grounding"]))
    assert main(["score", str(path), "--out", str(tmp_path / "r.json"), "--bootstrap", "30"]) == 0
    cli = json.loads((tmp_path / "r.json").read_text())
    for source in (path, str(path), DOCS["mini-grounding"]):
        record = vlbench.score(source, bootstrap=30)
        assert isinstance(record, vlbench.ResultRecord)
        assert record.scores == cli["scores"] and record.ci95 == {k: v for k, v in cli["ci95"].items()}
    assert vlbench.score(DOCS["mini-grounding"], bootstrap=0).submission_sha256 == cli["submission_sha256"]


def test_api_bare_predictions_and_numpy() -> None:
    doc = copy.deepcopy(DOCS["mini-retrieval"])
    expected = vlbench.score(doc, bootstrap=0).scores
    predictions = {d: {k: np.asarray([int(i) for i in v]) for k, v in lists.items()}
                   for d, lists in doc["predictions"].items()}
    assert vlbench.score(predictions, benchmark="mini-retrieval", bootstrap=0).scores == expected
    report = vlbench.validate(predictions, benchmark="mini-retrieval")
    assert report and report.valid and report.benchmark == "mini-retrieval"


@pytest.mark.parametrize(
    "damage",
    ["nan", "set", "cycle", "huge_int", "tuple_key", "same_key_twice", "bytes", "deep"],
)
def test_api_in_memory_damage_is_an_invalid_submission(damage: str) -> None:
    doc = copy.deepcopy(DOCS["mini-retrieval"])
    lists = doc["predictions"]["image_to_text"]
    key = next(iter(lists))
    if damage == "nan":
        lists[key][0] = float("nan")
    elif damage == "set":
        lists[key] = set(lists[key])
    elif damage == "cycle":
        lists[key].append(lists)
    elif damage == "huge_int":
        lists[key][0] = 10**5000
    elif damage == "tuple_key":
        lists[(1, 2)] = lists[key]
    elif damage == "same_key_twice":
        lists[int(key)] = lists[key]
    elif damage == "bytes":
        doc["meta"]["method"] = b"abc"
    elif damage == "deep":
        node: list = []
        doc["meta"]["extra"] = {"x": node}
        for _ in range(3000):
            node.append([])
            node = node[0]
    report = vlbench.validate(doc)
    assert not report and report.error_count >= 1 and report.errors
    with pytest.raises(InvalidSubmission) as info:
        vlbench.score(doc, bootstrap=0)
    assert info.value.issues.total >= 1 and "in-memory" in str(info.value)


def test_import_vlbench_is_light() -> None:
    code = ("import sys, vlbench; heavy = [m for m in ('numpy', 'jsonschema', 'torch', 'vlbench.tasks')"
            " if m in sys.modules]; assert not heavy, heavy; assert callable(vlbench.score)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --- fuzzing ------------------------------------------------------------------------------------

leaves = (st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False)
          | st.text(max_size=12) | st.builds(list) | st.builds(dict) | st.just("9" * 5000) | st.just(10**4000))


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k in list(node)[:4]:
            out += _paths(node[k], (*prefix, k))
    elif isinstance(node, list):
        for i in range(min(len(node), 3)):
            out += _paths(node[i], (*prefix, i))
    return out


PATHS = {b: _paths(doc) for b, doc in DOCS.items()}


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, Any]:
    """A mini submission with one to three places replaced, deleted, or given an odd key."""
    benchmark = draw(st.sampled_from(sorted(DOCS)))
    doc = copy.deepcopy(DOCS[benchmark])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS[benchmark]))
        value = draw(leaves)
        if not path:
            doc = value
            continue
        parent = doc
        try:
            for p in path[:-1]:
                parent = parent[p]
            action = draw(st.sampled_from(["set", "delete", "key"]))
            if action == "delete" and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif action == "key" and isinstance(parent, dict):
                parent[draw(st.text(max_size=8) | st.just("9" * 5000) | st.just("²"))] = value
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    return benchmark, doc


@FUZZ
@given(case=damaged(), bare=st.booleans())
def test_fuzz_damaged_submissions_through_the_cli(capsys, tmp_path: Path, case, bare: bool) -> None:
    benchmark, doc = case
    if bare and isinstance(doc, dict):
        doc = doc.get("predictions", doc)
    sub = tmp_path / "fuzz.json"
    sub.write_text(json.dumps(doc))
    out_dir = tmp_path / "out"
    argv = ["score", str(sub), "--bootstrap", "0", "--out", str(out_dir / "r.json")]
    code, out, err = run(capsys, *argv, *(["--benchmark", benchmark] if bare else []))
    assert_clean(code, out, err)
    assert (code == 0) == out_dir.exists()
    if out_dir.exists():
        for p in out_dir.iterdir():
            p.unlink()
        out_dir.rmdir()


@FUZZ
@given(case=damaged())
def test_fuzz_damaged_submissions_through_the_api(case) -> None:
    benchmark, doc = case
    try:
        report = vlbench.validate(doc)
    except UsageError:
        return
    if not report:
        assert report.error_count >= 1 and report.errors
        with pytest.raises(InvalidSubmission):
            vlbench.score(doc, bootstrap=0)


options = st.lists(
    st.tuples(
        st.sampled_from(["--bootstrap", "--seed", "--max-bytes", "--max-errors", "--max-decompressed",
                         "--benchmark", "--data-dir", "--references", "--format", "--json", "--debug",
                         "--strict", "--out"]),
        st.one_of(st.integers(-(10**15), 10**15).map(str), st.sampled_from(["0", "1", "3", "", "-", "1e3", "mini-retrieval"]),
                  st.text(max_size=10)),
    ),
    max_size=4,
)


@FUZZ
@given(command=st.sampled_from(["validate", "score", "compare", "tasks", "data", "import", "nope"]),
       target=st.sampled_from(["good", "bad", "folder", "missing", "dev_null", "text"]),
       opts=options, text=st.text(max_size=20))
def test_fuzz_options_and_paths(capsys, tmp_path: Path, command: str, target: str, opts, text: str) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    good = MINI["mini-retrieval"]
    path = {"good": str(good), "bad": str(write(work, {"vlbench": 1}, "bad.json")), "folder": str(work),
            "missing": str(work / "missing.json"), "dev_null": "/dev/null", "text": text}[target]
    argv = [command, path]
    for name, value in opts:
        if name in ("--json", "--debug", "--strict"):
            argv.append(name)
        elif name == "--out":
            argv += [name, str(work / "out" / (value.replace("/", "_").replace("\x00", "") or "r") )]
        elif name == "--bootstrap" and value.lstrip("-").isdigit() and 50 < int(value) <= 100_000:
            argv += [name, "50"]  # valid but slow: keep the run short
        else:
            argv += [name, value]
    before = listing(work)
    code, out, err = run(capsys, *argv)
    if "--debug" in argv:
        err = re.sub(r"Traceback \(most recent call last\):.*?(?=^error: )", "", err, flags=re.S | re.M)
    assert_clean(code, out, err)
    if code != 0:
        assert listing(work) == before, argv


@settings(max_examples=60, deadline=None)
@given(path=st.text(max_size=30))
def test_fuzz_any_path_string(path: str) -> None:
    try:
        vlbench.validate(path)
    except UsageError as exc:
        assert str(exc) and len(str(exc)) < 1000
