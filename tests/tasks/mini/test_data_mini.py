"""`vlbench data mini` (tasks/mini/__init__.py): every file needed to make a submission to every
bundled mini benchmark, from the world that benchmark is made from; the output rule for its folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import vlbench
from tests.output_rule_checks import listing
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.output_rule import FOLDER_MARKER
from vlbench.tasks.flickr30k_entities import parse_annotation, read_sentences
from vlbench.tasks.mini import MINI_FOLDER, mini_benchmarks, world_of, write_mini_benchmark
from vlbench.tasks.mini.build import MiniConfig

TINY = MiniConfig(n_train=6, n_val=2, n_test=4, n_pool=60)


def _karpathy(world: Path) -> list[dict[str, Any]]:
    return json.loads((world / "dataset_mini.json").read_text())["images"]


def _image(world: Path, img: dict[str, Any]) -> Path:
    path = world / "images" / img["filepath"] / img["filename"]
    assert path.is_file(), path
    return path


def _submission(benchmark: str, world: Path) -> dict[str, Any]:
    """A submission to `benchmark` made only from what `vlbench data mini` wrote (every query's
    image opened, as a model would), with trivial predictions."""
    images = _karpathy(world)
    test = [img for img in images if img["split"] == "test"]
    test_captions = [s["sentid"] for img in test for s in img["sentences"]]
    task = vlbench.benchmarks()
    task = next(b.task for b in task if b.id == benchmark)
    if task == "retrieval":
        for img in test:
            _image(world, img)
        predictions: Any = {
            "image_to_text": {str(img["cocoid"]): test_captions[:10] for img in test},
            "text_to_image": {str(c): [img["cocoid"] for img in test[:10]] for c in test_captions},
        }
    elif task == "decorrelated_retrieval":
        gallery = [s["sentid"] for img in images for s in img["sentences"]]
        queries = json.loads((world / "decorrelated" / "queries.json").read_text())["queries"]
        for q in queries:
            assert (world / "decorrelated" / "images" / q["file_name"]).is_file()
        predictions = {"image_to_text": {str(q["id"]): gallery[:10] for q in queries}}
    elif task == "captioning":
        predictions = [{"image_id": img["cocoid"], "caption": "a star and a ring"} for img in test if _image(world, img)]
    else:  # grounding: a box over the whole image for every phrase whose chain has boxes
        predictions = {}
        entities = world / "flickr30k_entities"
        for img in test:
            _image(world, img)
            stem = str(img["cocoid"])
            ann = parse_annotation((entities / "Annotations" / f"{stem}.xml").read_bytes())
            whole = [0, 0, ann.width, ann.height]
            predictions[stem] = {
                str(i): {str(p.first_word_index): {"boxes": [whole]} for p in sentence.phrases if p.phrase_id in ann.boxes}
                for i, sentence in enumerate(read_sentences(entities, stem))
            }
    return {"vlbench": 1, "benchmark": benchmark, "task": task, "meta": {"method": "test"}, "predictions": predictions}


def test_every_mini_benchmark_can_be_submitted_to_from_what_data_mini_writes(mini_world_from_the_cli) -> None:
    benchmarks = mini_benchmarks()
    assert {"mini-retrieval", "mini-shapes-retrieval", "mini-decorrelated", "mini-captions", "mini-grounding"} <= set(benchmarks)
    for benchmark in benchmarks:
        world = mini_world_from_the_cli(world_of(benchmark))
        report = vlbench.validate(_submission(benchmark, world))
        assert report.valid, f"{benchmark}: {report}"
        assert not report.notes, f"{benchmark}: {report.notes}"  # every query covered, none left out
    assert json.loads((mini_world_from_the_cli("v3") / FOLDER_MARKER).read_text())["written_by"] == "vlbench data mini"


def test_the_world_is_chosen_by_benchmark_or_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert world_of("mini-decorrelated") == "v3" and world_of("mini-shapes-retrieval") == "v3"
    assert world_of("mini-retrieval") == "v2" and mini_benchmarks("v3") == ["mini-decorrelated", "mini-shapes-retrieval"]
    for argv, says in ((["--benchmark", "coco-5k"], "is not made from a mini world"),
                       (["--benchmark", "mini-decorrelated", "--world", "v2"], "is made from the v3 world, not v2")):
        assert main(["data", "mini", "--out", str(tmp_path / "w"), *argv]) == 2
        assert says in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["data", "mini", "--out", str(tmp_path / "w"), "--world", "v4"])
    assert exited.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_data_mini_refuses_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The command line's refusals come before the world is drawn: someone's folder, a file, a
    missing parent, a link."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("notes")
    (tmp_path / "file").write_text("x")
    os.symlink(mine, tmp_path / "link")
    for out in (mine, tmp_path / "file", tmp_path / "no" / "world", tmp_path / "link"):
        assert main(["data", "mini", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
    assert listing(tmp_path) == {"file": b"x", "link": b"-> " + str(mine).encode(), "mine": b"<folder>",
                                 "mine/notes.txt": b"notes"}


def test_write_mini_benchmark_replaces_only_its_own_folder(tmp_path: Path) -> None:
    out = tmp_path / "world"
    written = write_mini_benchmark(out, config=TINY)
    assert all(p.is_file() and out in p.parents for p in written)
    marked = set(json.loads((out / FOLDER_MARKER).read_text())["files"])
    assert marked == {p.relative_to(out).as_posix() for p in written}
    other = write_mini_benchmark(out, config=MiniConfig(n_train=3, n_val=1, n_test=2, n_pool=60, seed=5))
    files = {name for name, body in listing(out).items() if body != b"<folder>"}
    assert files == {p.relative_to(out).as_posix() for p in other} | {FOLDER_MARKER}  # replaced whole
    (out / "notes.txt").write_text("mine")
    before = listing(out)
    with pytest.raises(UsageError, match="did not write"):
        write_mini_benchmark(out, config=TINY)
    assert listing(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["world"]
    write_mini_benchmark(out, config=TINY, force=True)  # merged: the notes stay
    assert (out / "notes.txt").read_text() == "mine" and (out / "dataset_mini.json").is_file()


def test_a_world_written_before_folder_markers_is_recognised(tmp_path: Path) -> None:
    out = tmp_path / "world"
    write_mini_benchmark(out, config=TINY)
    (out / FOLDER_MARKER).unlink()
    assert MINI_FOLDER.legacy is not None and MINI_FOLDER.legacy(out)
    write_mini_benchmark(out, config=TINY)  # replaced, no --force
    (out / FOLDER_MARKER).unlink()
    (out / "images" / "train" / "holiday.jpg").write_bytes(b"jpeg")
    assert not MINI_FOLDER.legacy(out)
    with pytest.raises(UsageError):
        write_mini_benchmark(out, config=TINY)
