"""The Python API (harness/api.py): a keyword for every command-line option that changes what is
scored, and errors that name the public function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vlbench
from vlbench.cli import build_parser, main
from vlbench.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "submissions" / "mini-retrieval" / "random.json"

# Options of `vlbench score` that change nothing about what is scored or written for one file.
DISPLAY_ONLY = {"help", "json", "verbose", "out_dir", "submission"}
# The command line's name for an option, where the API's differs.
API_NAME = {"input_format": "format"}


def _score_options() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["score"]
    return {API_NAME.get(a.dest, a.dest) for a in sub._actions} - DISPLAY_ONLY


def test_every_score_option_has_an_api_keyword() -> None:
    from vlbench.api import _INPUT_KEYWORDS, _OWN_KEYWORDS

    assert _score_options() == set(_INPUT_KEYWORDS) | set(_OWN_KEYWORDS["score"])
    validate = next(a for a in build_parser()._actions if a.dest == "command").choices["validate"]
    assert {API_NAME.get(a.dest, a.dest) for a in validate._actions} - DISPLAY_ONLY == set(_INPUT_KEYWORDS)


@pytest.mark.parametrize(("function", "keyword", "says"), [
    ("score", "subsett", "did you mean 'subset'?"),
    ("score", "boot", "did you mean 'bootstrap'?"),
    ("validate", "bootstrap", "its keywords: benchmark, data_dir"),
    ("validate", "refrences", "did you mean 'references'?"),
])
def test_a_wrong_keyword_names_the_public_function(function: str, keyword: str, says: str) -> None:
    with pytest.raises(TypeError) as raised:
        getattr(vlbench, function)(MINI, **{keyword: 1})
    message = str(raised.value)
    assert message.startswith(f"vlbench.{function}() got an unexpected keyword argument {keyword!r}") and says in message
    assert "_options" not in message


@pytest.fixture
def part_of_a_caption_set(tmp_path: Path) -> tuple[Path, Path]:
    """A COCO captions file of the mini test images, and results that caption 40 of its 250."""
    compact = json.loads((REPO / "tasks" / "mini" / "data" / "captions" / "references.json").read_text())
    images = [{"id": i} for i, _ in compact["images"]]
    annotations = [{"image_id": i, "id": 10 * i + k, "caption": c}
                   for i, caps in compact["images"] for k, c in enumerate(caps)]
    refs = tmp_path / "captions_test.json"
    refs.write_text(json.dumps({"images": images, "annotations": annotations}))
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": i, "caption": caps[0]} for i, caps in compact["images"][:40]]))
    return refs, results


def test_subset_is_a_keyword(part_of_a_caption_set: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    refs, results = part_of_a_caption_set
    record = vlbench.score(results, references=refs, subset=True, bootstrap=0)
    assert record.n["images"] == 40 and record.scores["BLEU-4"] > 0.9
    assert main(["score", str(results), "--references", str(refs), "--subset", "--bootstrap", "0", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["scores"] == record.scores and cli["n"] == record.n
    with pytest.raises(UsageError, match="subset=True needs references=FILE"):
        vlbench.score(results, subset=True, benchmark="mini-captions")
    with pytest.raises(UsageError, match="subset must be True or False"):
        vlbench.score(results, references=refs, subset="yes")


def test_part_of_a_caption_set_without_subset_points_to_it(part_of_a_caption_set: tuple[Path, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    refs, results = part_of_a_caption_set
    assert main(["score", str(results), "--references", str(refs), "--bootstrap", "0"]) == 1
    err = capsys.readouterr().err
    assert "210 of 250 images have no caption" in err and "add --subset (subset=True in Python)" in err
    report = vlbench.validate(results, references=refs)
    assert not report and "subset=True" in report.errors[0].hint
