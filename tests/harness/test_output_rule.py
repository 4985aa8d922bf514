"""The output rule (harness/output_rule.py), and the engine's writers that follow it: `score --out`
(with its per-item file), `score --out-dir`, `vlbench.score(out=)`, `ResultRecord.save`,
`save_items` and `python -m vlbench.evalai pack`. The other writers' tests are beside their
modules (tests/tasks/grounding/test_importers.py, tests/tasks/mini/test_data_mini.py,
tests/harness/commands/test_data.py, tests/baselines/test_run.py, ...)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import vlbench
from tests.output_rule_checks import check_file_writer, listing
from vlbench import evalai
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.output_rule import (
    EVALAI_BUNDLE,
    FOLDER_MARKER,
    PER_ITEM,
    RESULT_RECORD,
    WRITTEN_SUBMISSION,
    FolderKind,
    check_folder_to_fill,
    folder_is_ours,
    leading_fields,
    replace_folder,
    target_problem,
)
from vlbench.results import ResultRecord, load_items, per_item_path, save_items

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "submissions" / "mini-retrieval" / "random.json"


def _code(call) -> int:  # noqa: ANN001
    try:
        call()
    except UsageError:
        return 2
    return 0


# --- telling a file vlbench wrote ---------------------------------------------------------------


def test_leading_fields_read_only_the_head(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1, "b": {"c": [1, 2]}, "big": "' + "x" * 5000 + '", "z": 2}')
    assert leading_fields(path) == {"a": 1, "b": {"c": [1, 2]}, "big": "x" * 5000, "z": 2}
    assert leading_fields(path, limit=40) == {"a": 1, "b": {"c": [1, 2]}}  # the rest lies past the head
    for text in ("[1, 2]", "not json", "", '{"a": 1,, "b": 2}', "{1: 2}"):
        path.write_text(text)
        assert leading_fields(path) in (None, {}, {"a": 1}), text
    assert leading_fields(tmp_path / "absent.json") is None


def test_kinds_tell_vlbench_files_from_others(tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    assert main(["score", str(MINI), "--out", str(record), "--bootstrap", "0"]) == 0
    items = per_item_path(record)
    assert RESULT_RECORD.recognizes(record) and PER_ITEM.recognizes(items)
    assert not RESULT_RECORD.recognizes(items) and not PER_ITEM.recognizes(record)
    # a per-item file is vlbench's by its tables even without its record
    record.unlink()
    assert PER_ITEM.recognizes(items)
    hand = tmp_path / "hand.json"
    hand.write_text(MINI.read_text())  # a submission someone made: the envelope alone is no stamp
    assert not WRITTEN_SUBMISSION.recognizes(hand) and not RESULT_RECORD.recognizes(hand)
    doc = json.loads(MINI.read_text())
    for stamp in ("recipe", "imported_from", "written_by"):
        doc["meta"]["extra"] = {stamp: {}}
        hand.write_text(json.dumps(doc))
        assert WRITTEN_SUBMISSION.recognizes(hand), stamp
    readme = tmp_path / "README.md"
    readme.write_text((REPO / "README.md").read_text())
    assert not any(k.recognizes(readme) for k in (RESULT_RECORD, PER_ITEM, WRITTEN_SUBMISSION, EVALAI_BUNDLE))


def test_refusals_are_one_sentence_naming_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text("{}")
    problem = target_problem(tmp_path / "notes.json", RESULT_RECORD)
    assert problem is not None and problem.count(". ") == 0 and "--force" in problem and "notes.json" in problem
    problem = target_problem(tmp_path / "nope" / "r.json", RESULT_RECORD, force=True)
    assert problem == f"cannot write {tmp_path / 'nope' / 'r.json'}: the folder {tmp_path / 'nope'} does not exist; create it first"
    assert target_problem(tmp_path / "nope", RESULT_RECORD) is None
    assert "is a folder" in target_problem(tmp_path, RESULT_RECORD)
    (tmp_path / "file").write_text("x")
    assert "is not a folder" in target_problem(tmp_path / "file" / "r.json", RESULT_RECORD, force=True)
    os.mkfifo(tmp_path / "fifo.json")
    assert "named pipe" in target_problem(tmp_path / "fifo.json", RESULT_RECORD)


def test_a_folder_to_fill_is_made_only_inside_an_existing_one(tmp_path: Path) -> None:
    assert check_folder_to_fill(tmp_path / "new") == tmp_path / "new"
    assert not (tmp_path / "new").exists()  # checking makes nothing
    with pytest.raises(UsageError, match="does not exist"):
        check_folder_to_fill(tmp_path / "a" / "b")
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        check_folder_to_fill(tmp_path / "f")


# --- folders written whole ----------------------------------------------------------------------

KIND = FolderKind("vlbench test writer")


def _build(files: dict[str, str]):  # noqa: ANN202
    def build(folder: Path) -> int:
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        return len(files)
    return build


def test_replace_folder_replaces_only_its_own(tmp_path: Path) -> None:
    target = tmp_path / "out"
    assert replace_folder(target, KIND, _build({"a.txt": "1", "sub/b.txt": "2"})) == 2
    assert folder_is_ours(target, KIND) and json.loads((target / FOLDER_MARKER).read_text())["files"] == ["a.txt", "sub/b.txt"]
    replace_folder(target, KIND, _build({"c.txt": "3"}))  # its own: replaced whole
    assert set(listing(target)) == {"c.txt", FOLDER_MARKER}
    (target / "mine.txt").write_text("mine")  # someone added a file: no longer wholly vlbench's
    before = listing(target)
    with pytest.raises(UsageError, match="--force"):
        replace_folder(target, KIND, _build({"d.txt": "4"}))
    assert listing(target) == before and [p.name for p in tmp_path.iterdir()] == ["out"]
    replace_folder(target, KIND, _build({"c.txt": "5"}), force=True)  # merged: nothing deleted
    assert (target / "mine.txt").read_text() == "mine" and (target / "c.txt").read_text() == "5"


def test_replace_folder_refusals_write_nothing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        replace_folder(tmp_path / "no" / "out", KIND, _build({"a": "1"}), force=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        replace_folder(tmp_path / "file", KIND, _build({"a": "1"}), force=True)
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(other, tmp_path / "link")
    with pytest.raises(UsageError, match="symbolic link"):
        replace_folder(tmp_path / "link", KIND, _build({"a": "1"}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "link", "other"] and not any(other.iterdir())
    replace_folder(tmp_path / "link", KIND, _build({"a": "1"}), force=True)  # into the folder it points to
    assert (tmp_path / "link").is_symlink() and (other / "a").read_text() == "1"


def test_a_failed_build_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "out"
    replace_folder(target, KIND, _build({"a.txt": "1"}))
    before = listing(target)

    def broken(folder: Path) -> None:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        replace_folder(target, KIND, broken)
    assert listing(target) == before and [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    replace_folder(tmp_path / "empty", KIND, _build({"a.txt": "1"}))
    assert (tmp_path / "empty" / "a.txt").read_text() == "1"


# --- the engine's writers -----------------------------------------------------------------------


def test_score_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def write(target: Path, force: bool) -> int:
        code = main(["score", str(MINI), "--out", str(target), "--bootstrap", "0", *(["--force"] if force else [])])
        capsys.readouterr()
        return code

    check_file_writer(tmp_path, write, beside=lambda p: [per_item_path(p)])


def test_score_out_refuses_someone_s_per_item_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.per_item.json").write_text("my notes")
    assert main(["score", str(MINI), "--out", str(tmp_path / "r.json"), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "r.per_item.json exists and is not a per-item file that vlbench wrote" in err
    assert listing(tmp_path) == {"r.per_item.json": b"my notes"}


def test_score_out_of_the_issue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's two cases: README.md replaced by a record, /nonexistent-dir made at the root."""
    readme = tmp_path / "README.md"
    readme.write_text("# my project\n")
    assert main(["score", str(MINI), "--out", str(readme), "--bootstrap", "0"]) == 2
    assert listing(tmp_path) == {"README.md": b"# my project\n"}
    missing = Path("/nonexistent-vlbench-dir")
    assert not missing.exists()
    assert main(["score", str(MINI), "--out", str(missing / "x.json"), "--bootstrap", "0"]) == 2
    assert not missing.exists()
    err = capsys.readouterr().err
    assert "README.md exists and is not a result record that vlbench wrote" in err
    assert f"the folder {missing} does not exist" in err


def test_score_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    submissions = [str(MINI), str(REPO / "submissions" / "mini-captions" / "random.json")]

    def score(folder: Path, force: bool = False) -> int:
        code = main(["score", *submissions, "--out-dir", str(folder), "--bootstrap", "0", *(["--force"] if force else [])])
        capsys.readouterr()
        return code

    records = {"mini-retrieval-random.json", "mini-captions-random.json"}
    out = tmp_path / "out"
    assert score(out) == 0 and score(out) == 0  # made inside an existing folder; then its own records replaced
    assert records <= set(listing(out))
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "mini-captions-random.json").write_text("mine")
    assert score(theirs) == 2 and listing(theirs) == {"mini-captions-random.json": b"mine"}
    assert score(theirs, force=True) == 0 and RESULT_RECORD.recognizes(theirs / "mini-captions-random.json")
    links = tmp_path / "links"
    links.mkdir()
    os.symlink(out / "mini-retrieval-random.json", links / "mini-retrieval-random.json")
    assert score(links) == 2 and set(listing(links)) == {"mini-retrieval-random.json"}
    assert score(links, force=True) == 0 and not (links / "mini-retrieval-random.json").is_symlink()
    assert score(tmp_path / "no" / "new") == 2 and not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("x")
    assert score(tmp_path / "file", force=True) == 2 and (tmp_path / "file").read_text() == "x"


def test_api_out(tmp_path: Path) -> None:
    def write(target: Path, force: bool) -> int:
        return _code(lambda: vlbench.score(MINI, bootstrap=0, out=target, force=force))

    check_file_writer(tmp_path, write, beside=lambda p: [per_item_path(p)])
    with pytest.raises(UsageError, match=r"pass force=True"):
        (tmp_path / "x.json").write_text("x")
        vlbench.score(MINI, bootstrap=0, out=tmp_path / "x.json")


def test_record_save_and_save_items(tmp_path: Path) -> None:
    record = vlbench.score(MINI, bootstrap=0, out=tmp_path / "r.json")
    items = load_items(tmp_path / "r.per_item.json")
    (tmp_path / "saved").mkdir()
    check_file_writer(tmp_path / "saved", lambda t, f: _code(lambda: record.save(t, force=f)))
    assert ResultRecord.load(tmp_path / "saved" / "ours" / "out.json").scores == record.scores
    (tmp_path / "items").mkdir()
    check_file_writer(tmp_path / "items", lambda t, f: _code(lambda: save_items(t, items, force=f)))


def test_evalai_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def write(target: Path, force: bool) -> int:
        code = evalai.main(["pack", "mini-retrieval", "--out", str(target), "--bootstrap", "0",
                            *(["--force"] if force else [])])
        capsys.readouterr()
        return code

    check_file_writer(tmp_path, write)
    assert EVALAI_BUNDLE.recognizes(tmp_path / "ours" / "out.json")
