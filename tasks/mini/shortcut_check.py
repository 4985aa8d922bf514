"""Check that the mini world's shortcut is learnable: `python -m vlbench.tasks.mini.shortcut_check`.

Trains a tiny CLIP from scratch on the biased train split (a 4-layer CNN on 64x64 images and a
bag-of-words text encoder, symmetric InfoNCE), ranks the whole train+val+test caption gallery for
each object-removed test query, and scores the result with vlbench on `mini-decorrelated` (and
the standard `mini-retrieval` test split). A model that learned "star implies ring" scores far
lower on partner removals than on their matched controls. Needs torch (the baselines extra); runs
on CPU in minutes. This is a design check of the world, not a reference baseline.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlbench.backports import strict_zip
from vlbench.tasks.karpathy import read_karpathy

SIDE = 64
MAX_TOKENS = 16


def _image(path: Path):
    import torch

    a = np.asarray(
        Image.open(path).convert("RGB").resize((SIDE, SIDE), Image.BILINEAR), dtype=np.float32
    )
    return torch.from_numpy(a / 255.0).permute(2, 0, 1)


def _models(vocab_size: int):
    import torch
    from torch import nn
    from torch.nn import functional as F

    class ImageEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c = [3, 32, 64, 128, 128]
            layers: list[nn.Module] = []
            for i in range(4):
                layers += [nn.Conv2d(c[i], c[i + 1], 3, 2, 1), nn.BatchNorm2d(c[i + 1]), nn.ReLU()]
            self.convs = nn.Sequential(*layers)
            self.fc = nn.Linear(128, 128)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.normalize(self.fc(self.convs(x).mean((2, 3))), dim=-1)

    class TextEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab_size + 1, 128, padding_idx=0)
            self.mlp = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128))

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            m = (ids > 0).float().unsqueeze(-1)
            return F.normalize(self.mlp((self.emb(ids) * m).sum(1) / m.sum(1).clamp(min=1)), dim=-1)

    return ImageEncoder(), TextEncoder()


def train_and_rank(
    world: Path, epochs: int = 30, seed: int = 0, batch: int = 128
) -> dict[str, Any]:
    """Train on `world`'s train split; return the decorrelated and retrieval predictions."""
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    ds = read_karpathy(json.loads((world / "dataset_mini.json").read_text()))
    vocab: dict[str, int] = {}
    for im in ds:
        for s in im.sentences:
            for t in s.tokens:
                vocab.setdefault(t, len(vocab) + 1)

    def ids(tokens: Sequence[str]) -> list[int]:
        out = [vocab.get(t, 0) for t in tokens][:MAX_TOKENS]
        return out + [0] * (MAX_TOKENS - len(out))

    train = [im for im in ds if im.split == "train"]
    x_train = torch.stack([_image(world / "images" / "train" / im.filename) for im in train])
    img_enc, txt_enc = _models(len(vocab))
    logit_scale = torch.nn.Parameter(torch.tensor(2.6))
    params = [*img_enc.parameters(), *txt_enc.parameters(), logit_scale]
    opt = torch.optim.Adam(params, lr=2e-3)
    for epoch in range(epochs):
        perm = torch.from_numpy(rng.permutation(len(train)))
        for b in range(0, len(train), batch):
            idx = perm[b : b + batch].tolist()
            text = torch.tensor(
                [ids(train[i].sentences[int(rng.integers(5))].tokens) for i in idx]
            )
            logits = logit_scale.exp().clamp(max=100) * img_enc(x_train[idx]) @ txt_enc(text).T
            y = torch.arange(len(idx))
            loss = (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y)) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch + 1}/{epochs}: loss {loss.item():.3f}", flush=True)

    img_enc.eval()
    txt_enc.eval()
    with torch.no_grad():
        sents = [s for im in ds for s in im.sentences]
        gallery = torch.cat(
            [
                txt_enc(torch.tensor([ids(s.tokens) for s in sents[i : i + 4096]]))
                for i in range(0, len(sents), 4096)
            ]
        )
        sentids = [str(s.sentid) for s in sents]
        queries = json.loads((world / "decorrelated" / "queries.json").read_text())["queries"]
        q_emb = img_enc(
            torch.stack(
                [_image(world / "decorrelated" / "images" / q["file_name"]) for q in queries]
            )
        )
        top = (q_emb @ gallery.T).topk(10, dim=1).indices.tolist()
        decorrelated = {
            str(q["id"]): [sentids[j] for j in row] for q, row in strict_zip(queries, top)
        }

        test = [im for im in ds if im.split == "test"]
        t_img = img_enc(
            torch.stack([_image(world / "images" / "test" / im.filename) for im in test])
        )
        t_sents = [s for im in test for s in im.sentences]
        sim = t_img @ txt_enc(torch.tensor([ids(s.tokens) for s in t_sents])).T
        i2t = {
            str(im.cocoid): [str(t_sents[j].sentid) for j in row]
            for im, row in strict_zip(test, sim.topk(10, dim=1).indices.tolist())
        }
        t2i = {
            str(s.sentid): [str(test[k].cocoid) for k in row]
            for s, row in strict_zip(t_sents, sim.T.topk(10, dim=1).indices.tolist())
        }
    return {
        "mini-decorrelated": {"image_to_text": decorrelated},
        "mini-retrieval": {"image_to_text": i2t, "text_to_image": t2i},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--world", help="a folder written by `vlbench data mini` (default: write one)"
    )
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="where to write the two submissions (default: a temp folder)")
    args = parser.parse_args(argv)

    from vlbench.output_rule import WRITTEN_SUBMISSION, check_file_target, check_folder_to_fill
    from vlbench.scoring import score_file
    from vlbench.tasks.mini import write_mini_benchmark

    if args.out:  # the output rule, before any work: the folder's parent exists, no file of someone's replaced
        for bid in ("mini-decorrelated", "mini-retrieval"):
            if check_folder_to_fill(args.out, "--out").is_dir():
                check_file_target(Path(args.out) / f"{bid}-tiny-clip.json", WRITTEN_SUBMISSION)
    with tempfile.TemporaryDirectory(prefix="vlbench-mini-check-") as tmp:
        world = Path(args.world) if args.world else Path(tmp) / "world"
        if not (world / "images" / "train").is_dir():
            write_mini_benchmark(world)
        out = Path(args.out) if args.out else Path(tmp) / "submissions"
        out.mkdir(exist_ok=True)
        predictions = train_and_rank(world, args.epochs, args.seed)
        tasks = {"mini-decorrelated": "decorrelated_retrieval", "mini-retrieval": "retrieval"}
        for bid, preds in predictions.items():
            meta = {
                "method": f"tiny CLIP from scratch on mini train ({args.epochs} epochs)",
                "reference": False,
                "baseline": None,
                "extra": {"written_by": "python -m vlbench.tasks.mini.shortcut_check"},
            }
            path = out / f"{bid}-tiny-clip.json"
            doc = {
                "vlbench": 1,
                "benchmark": bid,
                "task": tasks[bid],
                "meta": meta,
                "predictions": preds,
            }
            path.write_text(json.dumps(doc))
            scores = score_file(path, bootstrap=0).result.scores
            shown = ", ".join(f"{k} {v:.3f}" for k, v in scores.items() if v is not None)
            print(f"{bid}: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
