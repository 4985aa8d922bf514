from __future__ import annotations

import json
import shutil
import sys
import types
import zipfile

import pytest

from tests.conftest import deviation_expected
from vlbench.errors import UsageError
from vlbench.registry import registry
from vlbench.source_check import SourceDeviation
from vlbench.tasks.grounding import TASK


def bench(name="flickr30k-entities-test"):
    return registry().benchmark(name)


def prepare(benchmark, source, data_dir):
    """The hand tree is not the official release: prepared deliberately, with --force, which warns
    (asserted) where the benchmark has a release to match (the mini one has none)."""
    if benchmark.option("source") is None:
        return TASK.prepare(benchmark, source, data_dir, force=True)
    with deviation_expected(benchmark.id):
        return TASK.prepare(benchmark, source, data_dir, force=True)


def test_prepare_from_folder_is_deterministic(hand_tree, tmp_path):
    (a,) = prepare(bench(), str(hand_tree), tmp_path / "a")
    (b,) = prepare(bench(), str(hand_tree), tmp_path / "b")
    assert a == tmp_path / "a" / "flickr30k-entities-test" / "ground_truth.json"
    assert a.read_bytes() == b.read_bytes()
    doc = json.loads(a.read_text())
    assert doc["split"] == "test" and doc["images"]["id"] == ["100", "200"]
    assert len(doc["phrases"]["image"]) == 7


def test_val_split_and_mini_world_layout(hand_tree, tmp_path):
    world = tmp_path / "world"
    shutil.copytree(hand_tree, world / "flickr30k_entities")
    (path,) = prepare(bench("mini-grounding"), str(world), tmp_path / "d")
    assert path.parent.name == "mini-grounding"
    (val,) = prepare(bench("flickr30k-entities-val"), str(hand_tree), tmp_path / "d")
    doc = json.loads(val.read_text())
    assert doc["split"] == "val" and doc["images"]["id"] == ["200"]


def test_prepare_unpacks_the_official_annotations_zip(hand_tree, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    with zipfile.ZipFile(repo / "annotations.zip", "w") as z:
        for sub in ("Sentences", "Annotations"):
            for f in sorted((hand_tree / sub).iterdir()):
                z.write(f, f"{sub}/{f.name}")
        z.writestr("../evil.txt", "x")
    shutil.copy(hand_tree / "test.txt", repo / "test.txt")
    (path,) = prepare(bench(), str(repo), tmp_path / "d")
    (ref,) = prepare(bench(), str(hand_tree), tmp_path / "e")
    # The same ground truth; only the recorded --force source path differs.
    doc, ref_doc = json.loads(path.read_text()), json.loads(ref.read_text())
    assert doc.pop("source_check")["source"] == str(repo)
    assert ref_doc.pop("source_check")["source"] == str(hand_tree)
    assert doc == ref_doc
    assert not (tmp_path / "d" / "evil.txt").exists()


def test_prepare_from_a_hub_id_uses_snapshot_download(hand_tree, tmp_path, monkeypatch):
    calls = []

    def fake_snapshot_download(repo_id, repo_type, allow_patterns):
        calls.append((repo_id, repo_type))
        return str(hand_tree)

    monkeypatch.setitem(
        sys.modules, "huggingface_hub",
        types.SimpleNamespace(snapshot_download=fake_snapshot_download),
    )
    (path,) = prepare(bench(), "someone/flickr30k-entities", tmp_path / "d")
    assert calls == [("someone/flickr30k-entities", "dataset")]
    assert json.loads(path.read_text())["benchmark"] == "flickr30k-entities-test"


def test_hub_failure_and_missing_tree_are_usage_errors(tmp_path, monkeypatch):
    def failing(**kwargs):
        raise OSError("offline")

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(snapshot_download=failing))
    with pytest.raises(UsageError, match="offline"):
        TASK.prepare(bench(), "someone/missing", tmp_path / "d", force=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no Flickr30k Entities tree"):
        TASK.prepare(bench(), str(tmp_path / "empty"), tmp_path / "d", force=True)


def test_a_source_other_than_the_release_is_refused_with_every_difference(hand_tree, tmp_path):
    with pytest.raises(UsageError) as exc:
        TASK.prepare(bench(), str(hand_tree), tmp_path / "d")
    text = str(exc.value)
    for line in ("images in the split file: expected 1,000, found 2",
                 "sentences with a boxed phrase: expected 4,969, found 3",
                 "phrases whose chain has a box: expected 14,481, found 7",
                 "sha256 of the split's image ids: expected 4f475d558a80"):
        assert line in text
    assert "--force" in text and not (tmp_path / "d").exists()
    # The deviation is reported as a warning (the command line prints it; see test_cli)
    with pytest.warns(SourceDeviation, match="--force"):
        (path,) = TASK.prepare(bench(), str(hand_tree), tmp_path / "d", force=True)
    record = json.loads(path.read_text())["source_check"]
    assert record["forced"] is True and len(record["deviations"]) == 4


def test_the_mini_world_has_no_release_to_match(hand_tree, tmp_path):
    (path,) = TASK.prepare(bench("mini-grounding"), str(hand_tree), tmp_path / "d")
    assert "source_check" not in json.loads(path.read_text())
