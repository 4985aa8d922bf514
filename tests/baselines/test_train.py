"""The train loop: resume after a kill, 2 processes = 1 process, checkpoints keyed by config."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from vlbench.baselines.config import resolve
from vlbench.baselines.models import load_model
from vlbench.baselines.train import StopTraining, batch_indices, epoch_order, lr_at, schedule, train
from vlbench.errors import UsageError

torch = pytest.importorskip("torch")

SETTINGS = {"model": "tiny-vit-p8", "pretrained": "none", "workers": 0, "batch_size": 16, "steps": 6,
            "checkpoint_every": 2, "lr": 1e-3}


def fresh(seed: int = 0):
    torch.manual_seed(seed)
    return load_model("tiny-vit-p8", "none", "cpu")


def weights(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_resume_after_a_kill_gives_the_same_weights(tmp_path: Path, mini_pairs: list) -> None:
    config = resolve(SETTINGS)
    whole = train(fresh(), mini_pairs, config, device="cpu", checkpoint_dir=tmp_path / "a", progress=False)
    with pytest.raises(StopTraining):
        train(fresh(), mini_pairs, config, device="cpu", checkpoint_dir=tmp_path / "b", stop_after=3, progress=False)
    # the kill came after step 3; the last checkpoint is from step 2, so step 3 is redone
    resumed = train(fresh(), mini_pairs, config, device="cpu", checkpoint_dir=tmp_path / "b", progress=False)
    assert resumed.resumed_from == 2 and resumed.steps == 6
    a, b = weights(whole.model), weights(resumed.model)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    log = (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()
    assert log, "the JSONL log was written"


def test_a_checkpoint_of_another_configuration_is_refused(tmp_path: Path, mini_pairs: list) -> None:
    train(fresh(), mini_pairs, resolve({**SETTINGS, "steps": 2}), device="cpu", checkpoint_dir=tmp_path, progress=False)
    with pytest.raises(UsageError, match="written by another configuration"):
        train(fresh(), mini_pairs, resolve({**SETTINGS, "steps": 2, "lr": 5e-4}), device="cpu", checkpoint_dir=tmp_path,
              progress=False)
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(UsageError, match="cannot be read"):
        train(fresh(), mini_pairs, resolve({**SETTINGS, "steps": 2}), device="cpu", checkpoint_dir=tmp_path, progress=False)


def test_schedule_and_order() -> None:
    c = resolve({"batch_size": 10, "epochs": 3, "lr": 1.0, "lr_halve_every_epochs": 2})
    assert schedule(c, 105) == (10, 30)
    assert [lr_at(c, s, 10) for s in (0, 19, 20, 39, 40)] == [1.0, 1.0, 0.5, 0.5, 0.25]
    with pytest.raises(UsageError, match="larger than the training set"):
        schedule(c, 5)
    with pytest.raises(UsageError, match="divisible"):
        schedule(resolve({"batch_size": 10}), 100, world=3)


def test_groups_stay_together_and_ranks_split_the_global_batch(mini_pairs: list) -> None:
    from vlbench.baselines.data import Pair

    # two images with 3 captions each, one of them with two edited copies (group "a")
    pairs = [Pair(Path("a.png"), f"a{k}", "a") for k in range(3)] + [Pair(Path("b.png"), f"b{k}", "b") for k in range(3)]
    pairs += [Pair(Path("a_no_x.png"), "ax", "a"), Pair(Path("a_no_y.png"), "ay", "a")]
    for epoch in range(5):
        order = epoch_order(pairs, seed=1, epoch=epoch, group_batches=True)
        assert sorted(order) == list(range(len(pairs)))
        images = [pairs[i].image for i in order]
        # the hard-negative unit: one pair of a.png next to both edits, never a.png twice in it
        at = images.index(Path("a_no_x.png"))
        unit = set(images[max(0, at - 2): at + 3])
        assert {Path("a_no_x.png"), Path("a_no_y.png")} <= unit and Path("a.png") in unit
        run = next(images[j: j + 3] for j in range(len(images) - 2) if set(images[j: j + 3]) == {
            Path("a.png"), Path("a_no_x.png"), Path("a_no_y.png")})
        assert len(run) == 3
    assert epoch_order(pairs, 1, 0, True) != epoch_order(pairs, 1, 1, True)
    assert epoch_order(pairs, 1, 0, True) == epoch_order(pairs, 1, 0, True)
    from vlbench.baselines.runtime import Distributed

    c = resolve({"batch_size": 16})
    one = batch_indices(mini_pairs, c, 3, 4, Distributed())
    two = batch_indices(mini_pairs, c, 3, 4, Distributed(0, 2)) + batch_indices(mini_pairs, c, 3, 4, Distributed(1, 2))
    assert one == two and len(one) == 16


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Every wait of the 2-process test is bounded, so a machine where the processes cannot meet (a
# hostname that does not resolve to this machine, a firewall, no loopback) fails the test in
# minutes instead of hanging the suite: gloo's own default timeout is 30 minutes per collective.
RENDEZVOUS_TIMEOUT_S = 60
SPAWN_TIMEOUT_S = 300


def loopback_env() -> dict[str, str]:
    """Rendezvous and gloo on the loopback interface, whatever the hostname resolves to."""
    env = {"MASTER_ADDR": "127.0.0.1"}
    names = {name for _, name in socket.if_nameindex()} if hasattr(socket, "if_nameindex") else set()
    loopback = next((n for n in ("lo", "lo0") if n in names), None)
    if loopback:
        env["GLOO_SOCKET_IFNAME"] = loopback
    return env


def _worker(rank: int, world: int, port: int, pairs: list, out: str) -> None:
    from datetime import timedelta

    os.environ.update(loopback_env(), MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    # initialised here with a timeout (init_distributed keeps an existing group): a peer that never
    # arrives ends this process with an error instead of a 30-minute wait
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                         timeout=timedelta(seconds=RENDEZVOUS_TIMEOUT_S))
    from vlbench.baselines.runtime import init_distributed

    dist = init_distributed("cpu")
    result = train(fresh(), pairs, resolve({**SETTINGS, "steps": 3}), device="cpu", checkpoint_dir=None, dist=dist,
                   progress=False)
    if rank == 0:
        torch.save(weights(result.model), out)
    torch.distributed.destroy_process_group()


def spawn_bounded(fn, args: tuple, nprocs: int, timeout_s: float) -> None:
    """`mp.spawn` whose join gives up after `timeout_s`: the processes are killed and the test
    fails (an error in a process is raised as mp.spawn does)."""
    import time

    import torch.multiprocessing as mp

    context = mp.spawn(fn, args=args, nprocs=nprocs, join=False)
    deadline = time.monotonic() + timeout_s
    try:
        while not context.join(timeout=max(0.1, min(5.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                pytest.fail(f"{nprocs} gloo processes did not finish within {timeout_s:.0f} s; killed")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
                process.join(10)


def test_two_gloo_processes_match_one_with_the_same_global_batch(tmp_path: Path, mini_pairs: list) -> None:
    out = tmp_path / "two.pt"
    spawn_bounded(_worker, (2, _free_port(), mini_pairs, str(out)), 2, SPAWN_TIMEOUT_S)
    two = torch.load(out)
    one = train(fresh(), mini_pairs, resolve({**SETTINGS, "steps": 3}), device="cpu", checkpoint_dir=None,
                progress=False).model
    other = fresh().model
    other.load_state_dict(two)
    other.eval()
    # Compare what the models compute, not every weight: the attention key biases have zero true
    # gradient (softmax ignores them), so Adam turns their round-off gradients into +-lr steps
    # that differ between runs without changing any output. Gradients are summed in another
    # order (the all-reduce), so outputs agree to fp32 round-off amplified by 3 Adam steps.
    loaded = fresh()
    images = torch.stack([loaded.preprocess(_image(p.image)) for p in mini_pairs[:16]])
    texts = loaded.tokenizer([p.caption for p in mini_pairs[:16]])
    with torch.no_grad():
        for encode, x in (("encode_image", images), ("encode_text", texts)):
            torch.testing.assert_close(getattr(other, encode)(x), getattr(one, encode)(x), rtol=1e-4, atol=1e-5)
    assert not torch.equal(one.encode_text(texts), fresh().model.encode_text(texts)), "training moved the model"


def _image(path: Path):
    from PIL import Image

    with Image.open(path) as im:
        return im.convert("RGB")


def _stuck(rank: int) -> None:
    import time

    time.sleep(600)  # a process that never reaches the rendezvous


def test_a_stuck_spawn_fails_the_test_instead_of_hanging() -> None:
    with pytest.raises(pytest.fail.Exception, match="did not finish within 1 s"):
        spawn_bounded(_stuck, (), 2, timeout_s=1)
