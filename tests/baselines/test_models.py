"""Weights for the recipes: vlbench's own training checkpoints load as `pretrained`, other files
are never unpickled as code, and the network probe is bounded."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from vlbench.baselines import models
from vlbench.baselines.config import resolve
from vlbench.baselines.models import load_model, vlbench_checkpoint
from vlbench.baselines.train import train
from vlbench.errors import UsageError

torch = pytest.importorskip("torch")

SETTINGS = {"model": "tiny-vit-p8", "pretrained": "none", "workers": 0, "batch_size": 16, "steps": 2, "lr": 1e-3}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, mini_pairs: list) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("ckpt")
    torch.manual_seed(0)
    result = train(load_model("tiny-vit-p8", "none", "cpu"), mini_pairs, resolve(SETTINGS), device="cpu",
                   checkpoint_dir=folder, progress=False)
    return folder / "checkpoint.pt", {k: v.detach().clone() for k, v in result.model.state_dict().items()}


def test_a_training_checkpoint_loads_as_pretrained_weights(trained: tuple[Path, dict]) -> None:
    path, weights = trained
    loaded = load_model("tiny-vit-p8", str(path), "cpu")
    state = loaded.model.state_dict()
    assert state.keys() == weights.keys()
    for key, value in weights.items():
        assert torch.equal(state[key], value), key
    assert loaded.pretrained == str(path)


def test_a_checkpoint_of_another_model_is_refused(trained: tuple[Path, dict]) -> None:
    with pytest.raises(UsageError, match="holds a tiny-vit-p8 model, not mini-vit-p8"):
        load_model("mini-vit-p8", str(trained[0]), "cpu")


def test_only_vlbench_checkpoints_are_recognised(tmp_path: Path, trained: tuple[Path, dict]) -> None:
    assert vlbench_checkpoint(str(trained[0])) is not None
    plain = tmp_path / "plain.pt"
    torch.save({"weight": torch.zeros(2)}, plain)
    assert vlbench_checkpoint(str(plain)) is None  # a plain state dict goes to open_clip's loader
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x80\x04not a pickle")
    assert vlbench_checkpoint(str(garbage)) is None

    class Payload:  # a pickle that would run code when loaded without weights_only
        def __reduce__(self) -> tuple:
            return (Path(tmp_path / "ran").write_text, ("code ran",))

    evil = tmp_path / "evil.pt"
    torch.save({"model": Payload(), "config_digest": "x"}, evil)
    assert vlbench_checkpoint(str(evil)) is None
    assert not (tmp_path / "ran").exists()


def test_the_network_probe_is_bounded_and_honours_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def stuck(*args: object, **kwargs: object) -> socket.socket:
        release.wait(60)  # a resolver that never answers (released at the end of the test)
        raise OSError("unreachable")

    monkeypatch.setattr(models.socket, "create_connection", stuck)
    try:
        assert models._online(timeout=0.2) is False
    finally:
        release.set()
    calls = []
    monkeypatch.setattr(models.socket, "create_connection", lambda *a, **k: calls.append(a))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert models._online() is False and calls == []
