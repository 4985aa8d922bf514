"""caption-nn end to end on mini with a tiny random model, consensus re-ranking, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests.baselines.conftest import TINY
from vlbench.baselines.consensus import (
    DocumentFrequency,
    consensus_index,
    consensus_scores,
    tokenize,
)
from vlbench.cli import main
from vlbench.submission import validate
from vlbench.tasks.captioning.cider import cider_scores
from vlbench.tasks.captioning.corpus import Corpus


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def caption_run(tmp_path: Path, data_dir: Path, *sets: str, options: tuple[str, ...] = ()) -> list[str]:
    return ["baseline", "run", "caption-nn", "--benchmark", "mini-captions", "--out", str(tmp_path / "sub.json"),
            "--data-dir", str(data_dir), "--device", "cpu", "--quiet", *options, "--set", *TINY, *sets]


def test_consensus_scores_are_cider_d_against_the_rest_of_the_pool() -> None:
    """Each pool caption's score is vlbench's CIDEr-D of it against the other captions, with the
    train captions' document frequency (that CIDEr-D equals pycocoevalcap's given the same
    document frequency: tests/tasks/captioning/test_cider.py)."""
    rng = random.Random(3)
    words = ["a", "the", "red", "dog", "cat", "on", "of", "blue", "sits", "mat", "two", "stars"]

    def caption() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 10)))

    df = DocumentFrequency.of([[caption() for _ in range(5)] for _ in range(60)])
    pool = tokenize([caption() for _ in range(12)])
    got = consensus_scores(pool, df)
    for i, c in enumerate(pool):
        want, _ = cider_scores(Corpus.build([c], [pool[:i] + pool[i + 1 :]], ngram_positions=True), df)
        assert got[i] == pytest.approx(float(want[0]), abs=1e-12)
    assert consensus_index(pool, df) == int(np.argmax(got))


def test_duplicate_captions_tie_exactly_and_the_first_wins() -> None:
    df = DocumentFrequency.of([[t] for t in tokenize(["a red star", "a blue ring", "two red stars", "a dog"])])
    pool = tokenize(["a dog on a mat", "two red stars above a ring", "a red star", "two red stars above a ring"])
    scores = consensus_scores(pool, df)
    assert scores[1] == scores[3] and consensus_index(pool, df) == 1


def test_consensus_picks_the_caption_the_pool_agrees_with() -> None:
    pool = [
        "a purple cat sleeps on a sofa",
        "two red stars above a blue ring",
        "a red star above a blue ring",
        "two red stars above a ring",
        "an old man rides a green bicycle",
    ]
    documents = [[t] for t in tokenize(pool)] + [[t] for t in tokenize(["a dog", "a tree in a field", "a blue car"])]
    df = DocumentFrequency.of(documents)
    # the three star captions agree; the one sharing most n-grams with both other star captions wins
    assert consensus_index(tokenize(pool), df) == 1
    # the outliers are never chosen, whatever order the pool comes in
    reverse = pool[::-1]
    assert reverse[consensus_index(tokenize(reverse), df)] == pool[1]
    assert consensus_index(tokenize(["only one"]), df) == 0
    with pytest.raises(ValueError):
        consensus_index([], df)


def test_nearest_caption_submission_is_valid(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    code, out, err = run_cli(capsys, *caption_run(tmp_path, data_dir))
    assert code == 0, err
    validated = validate(tmp_path / "sub.json", data_dir=data_dir)
    assert validated.benchmark.id == "mini-captions"
    doc = json.loads((tmp_path / "sub.json").read_text())
    assert doc["meta"]["baseline"] == "caption-nn"
    train = {c["raw"] for img in json.loads((data_dir / "mini-world" / "dataset_mini.json").read_text())["images"]
             if img["split"] == "train" for c in img["sentences"]}
    assert all(p["caption"] in train for p in doc["predictions"])  # NN captions come from the train pool


def test_consensus_run_and_coco_results_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    coco = tmp_path / "coco_results.json"
    code, _, err = run_cli(capsys, *caption_run(tmp_path, data_dir, "extra.consensus=3", options=("--coco-results", str(coco))))
    assert code == 0, err
    validate(tmp_path / "sub.json", data_dir=data_dir)
    doc = json.loads((tmp_path / "sub.json").read_text())
    assert json.loads(coco.read_text()) == doc["predictions"]
    assert "consensus" in doc["meta"]["extra"]["caption_nn"]["mode"]
    assert doc["meta"]["method"] == "NN caption, consensus of 3 (Devlin et al.) tiny-vit-p8 none"
    assert "method" not in doc["meta"]["extra"]  # the variant's name went to meta.method only


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["train_split=nosuch"], "train caption pool is empty"),
        (["image_root=/no/such/folder"], "test images are missing"),
        (["extra.consensus=-2"], "extra.consensus=-2"),
        (["extra.coco_results=/no/such/dir/c.json"], "does not exist"),
    ],
)
def test_bad_input_exits_2_without_writing(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path,
                                           sets: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, *caption_run(tmp_path, data_dir, *sets))
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "sub.json").exists()


def test_coco_results_flag_is_for_captioning_recipes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "baseline", "run", "grounding-clip-regions", "--benchmark", "mini-grounding",
                           "--out", str(tmp_path / "sub.json"), "--coco-results", str(tmp_path / "c.json"))
    assert code == 2 and "--coco-results is for captioning recipes" in err


def test_a_run_from_a_vlbench_checkpoint_records_the_chain(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           data_dir: Path) -> None:
    """Weights trained by `clip-finetune` feed the captioner; its meta names the checkpoint's sha256,
    training settings and the command that trains it again; the method names the file, not its path."""
    import hashlib

    ckpt = tmp_path / "ckpt"
    code, _, err = run_cli(capsys, "baseline", "run", "clip-finetune", "--benchmark", "mini-retrieval", "--out",
                           str(tmp_path / "ft.json"), "--data-dir", str(data_dir), "--device", "cpu", "--quiet",
                           "--checkpoint-dir", str(ckpt), "--set", *TINY, "steps=2")
    assert code == 0, err
    weights = ckpt / "checkpoint.pt"
    sets = [s for s in TINY if not s.startswith("pretrained=")]
    code, _, err = run_cli(capsys, *caption_run(tmp_path, data_dir, *sets, f"pretrained={weights}"))
    assert code == 0, err
    meta = json.loads((tmp_path / "sub.json").read_text())["meta"]
    facts = meta["extra"]["recipe"]["pretrained_file"]
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert facts["sha256"] == digest and facts["vlbench_checkpoint"]["step"] == 2
    assert facts["vlbench_checkpoint"]["training_config"]["steps"] == 2
    assert f"--checkpoint-dir {ckpt}" in facts["vlbench_checkpoint"]["training_command"]
    assert meta["extra"]["recipe"]["model_config"]["embed_dim"] > 0
    assert meta["method"] == f"NN caption tiny-vit-p8 checkpoint.pt@{digest[:12]}"
