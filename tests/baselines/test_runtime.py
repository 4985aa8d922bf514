"""One runtime for every recipe step: precision, device and process layout decided in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.baselines.runtime import (
    Distributed,
    autocast,
    barrier,
    device_type,
    init_distributed_device,
    is_distributed,
    resolve_device,
    uses_bf16,
    world_from_env,
)
from vlbench.errors import UsageError

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("precision", "device", "bf16"),
    [("auto", "cpu", False), ("auto", "cuda", True), ("auto", "cuda:1", True), ("bf16", "cpu", True),
     ("bf16", "cuda", True), ("fp32", "cpu", False), ("fp32", "cuda:0", False)],
)
def test_precision_on_each_device(precision: str, device: str, bf16: bool) -> None:
    assert uses_bf16(precision, device) is bf16


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="fp16"):
        uses_bf16("fp16", "cpu")


def test_autocast_computes_in_the_chosen_precision() -> None:
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    with autocast("bf16", "cpu"):
        assert (a @ b).dtype == torch.bfloat16
    for precision in ("fp32", "auto"):
        with autocast(precision, "cpu"):
            assert (a @ b).dtype == torch.float32
    assert device_type("cuda:3") == "cuda" and device_type("cpu") == "cpu"


def _linear_output_dtypes(module) -> tuple[set, list]:
    seen: set = set()
    hooks = [m.register_forward_hook(lambda _m, _i, out: seen.add(out.dtype))
             for m in module.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))]
    return seen, hooks


@pytest.fixture(scope="module")
def tiny():
    from vlbench.baselines.models import load_model

    torch.manual_seed(0)
    return load_model("tiny-vit-p8", "none", "cpu")


TEXTS = ["a red circle left of a blue square", "two green triangles", "a yellow star", "an empty picture"]


def test_retrieval_text_encoding_honours_precision(tiny) -> None:
    from vlbench.baselines.retrieve import embed_texts

    seen, hooks = _linear_output_dtypes(tiny.model)
    try:
        found = {}
        for precision in ("bf16", "fp32", "auto"):
            seen.clear()
            found[precision] = embed_texts(tiny.model, tiny.tokenizer, TEXTS, device="cpu", precision=precision,
                                           batch_size=8, progress=False)
            assert seen == ({torch.bfloat16} if precision == "bf16" else {torch.float32}), precision
            assert found[precision].dtype == torch.float32
    finally:
        for hook in hooks:
            hook.remove()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        direct = tiny.model.encode_text(tiny.tokenizer(TEXTS), normalize=True).float()
    torch.testing.assert_close(found["bf16"], direct, rtol=0, atol=0)
    assert not torch.equal(found["bf16"], found["fp32"])  # bf16 rounding shows in the embeddings
    assert torch.equal(found["auto"], found["fp32"])  # auto on a CPU is fp32


def test_retrieval_image_encoding_honours_precision(tiny, tmp_path: Path) -> None:
    from PIL import Image

    from vlbench.baselines.retrieve import embed_images

    paths = []
    for i, colour in enumerate([(200, 30, 30), (20, 180, 60), (10, 10, 240)]):
        paths.append(tmp_path / f"{i}.png")
        Image.new("RGB", (40, 32), colour).save(paths[-1])
    seen, hooks = _linear_output_dtypes(tiny.model)
    try:
        bf16 = embed_images(tiny.model, tiny.preprocess, paths, device="cpu", precision="bf16", batch_size=2,
                            progress=False)
        assert seen == {torch.bfloat16}
        seen.clear()
        fp32 = embed_images(tiny.model, tiny.preprocess, paths, device="cpu", precision="fp32", batch_size=2,
                            progress=False)
        assert seen == {torch.float32}
    finally:
        for hook in hooks:
            hook.remove()
    assert bf16.dtype == fp32.dtype == torch.float32 and bf16.shape == fp32.shape
    assert (bf16 * fp32).sum(dim=1).min() > 0.99  # the same unit vectors, rounded


def test_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device(None) == resolve_device("auto") == resolve_device("") == "cpu"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(UsageError, match="no CUDA device"):
        resolve_device("cuda:0")
    with pytest.raises(UsageError, match="expected cpu, cuda or cuda:N"):
        resolve_device("tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:1") == "cuda:1"


def test_process_layout_from_torchrun(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert world_from_env() == Distributed() and Distributed().main
    monkeypatch.setenv("SLURM_NTASKS", "4")  # a scheduler's variables alone start nothing
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert init_distributed_device("cpu") == ("cpu", Distributed())
    assert not is_distributed()
    barrier()  # a single process waits for nobody
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    layout = world_from_env()
    assert layout == Distributed(rank=3, world_size=4, local_rank=1) and not layout.main
