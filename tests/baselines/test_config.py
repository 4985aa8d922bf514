from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlbench.baselines import config as cfg
from vlbench.errors import UsageError


def test_set_pairs_take_each_fields_type() -> None:
    got = cfg.parse_set(["batch_size=32", "lr=1e-4", "compile=true", "train_split=train,restval", "model=RN50", "extra.consensus=5"])
    assert got == {"batch_size": 32, "lr": 1e-4, "compile": True, "train_split": ("train", "restval"), "model": "RN50",
                   "extra": {"consensus": 5}}
    c = cfg.resolve(got)
    assert c.batch_size == 32 and c.extra == {"consensus": 5}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("batch_sise=3", "unknown setting 'batch_sise'"),
        ("batch_size=abc", "batch_size='abc': expected an integer"),
        ("batch_size=2.5", "expected an integer"),
        ("lr=fast", "expected a number"),
        ("lr=nan", "expected a number"),
        ("compile=maybe", "expected true or false"),
        ("noequals", "expected key=value"),
    ],
)
def test_bad_set_pairs_are_usage_errors(pair: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cfg.parse_set([pair])


def test_every_invalid_value_is_listed_in_one_message() -> None:
    with pytest.raises(UsageError) as err:
        cfg.resolve({"batch_size": 0, "lr": -1.0, "optimizer": "sgd", "synthetic_fill": "paint"})
    text = str(err.value)
    for part in ("batch_size must be at least 1", "lr must be positive", "optimizer must be adam", "synthetic_fill must be"):
        assert part in text


def test_config_files_json_and_toml(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"batch_size": 8, "train_split": ["train"]}))
    (tmp_path / "b.toml").write_text('batch_size = 4\nlr = 0.001\nmodel = "tiny-vit-p8"\n')
    assert cfg.read_config_file(tmp_path / "a.json") == {"batch_size": 8, "train_split": ("train",)}
    assert cfg.read_config_file(tmp_path / "b.toml") == {"batch_size": 4, "lr": 0.001, "model": "tiny-vit-p8"}
    (tmp_path / "c.json").write_text('{"batch_size": "x"}')
    with pytest.raises(UsageError, match="expected an integer"):
        cfg.read_config_file(tmp_path / "c.json")
    (tmp_path / "d.json").write_text("[1]")
    with pytest.raises(UsageError, match="at the top level"):
        cfg.read_config_file(tmp_path / "d.json")


def test_training_digest_ignores_inference_settings() -> None:
    a = cfg.resolve({"topk": 10})
    assert a.digest(cfg.TRAINING_KEYS) == cfg.resolve({"topk": 50, "workers": 0}).digest(cfg.TRAINING_KEYS)
    assert a.digest(cfg.TRAINING_KEYS) != cfg.resolve({"lr": 1e-5}).digest(cfg.TRAINING_KEYS)
    assert set(cfg.TRAINING_KEYS) <= set(cfg.KEYS)
