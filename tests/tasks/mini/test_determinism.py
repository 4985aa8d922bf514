"""Same seed, same bytes; a smaller world is a prefix of a larger one; another seed differs."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from vlbench.tasks.mini import write_mini_benchmark
from vlbench.tasks.mini.build import MiniConfig


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes_in_another_process(small_world, small_config, tmp_path: Path) -> None:
    out, written = small_world
    again = tmp_path / "again"
    # Another interpreter with another hash seed: no dependence on set or dict order.
    code = (
        "import sys; from pathlib import Path; from vlbench.tasks.mini import write_mini_benchmark; "
        "from vlbench.tasks.mini.build import MiniConfig; "
        "write_mini_benchmark(Path(sys.argv[1]), config=MiniConfig("
        f"n_train={small_config.n_train}, "
        f"n_val={small_config.n_val}, n_test={small_config.n_test}, n_pool={small_config.n_pool}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(again)], check=True, env=env)
    first = digests(out)
    assert first == digests(again)
    assert len(first) == len(written) + 1  # and the folder's marker (output_rule.FOLDER_MARKER)


def test_rewriting_the_same_folder_gives_the_same_files(
    small_world, small_config, tmp_path
) -> None:
    out, _ = small_world
    before = digests(out)
    target = tmp_path / "w"
    write_mini_benchmark(target, seed=1, config=MiniConfig(seed=1, n_train=12, n_val=3, n_test=12, n_pool=100))
    other = digests(target)
    write_mini_benchmark(target, config=small_config)
    # Stale files of the other world are gone; the folder now holds exactly this world.
    assert digests(target) == before
    assert other != before


def test_smaller_world_is_a_prefix(small_world, tmp_path: Path) -> None:
    out, _ = small_world
    small = tmp_path / "s"
    write_mini_benchmark(small, config=MiniConfig(n_train=10, n_val=2, n_test=3, n_pool=100))
    a, b = digests(small), digests(out)
    # Train ids start at 1 in both worlds, so the first train images are identical.
    for i in range(1, 11):
        name = f"images/train/mini_{i:06d}.png"
        assert a[name] == b[name]
        for sub in (
            f"flickr30k_entities/Annotations/{i}.xml",
            f"flickr30k_entities/Sentences/{i}.txt",
        ):
            assert a[sub] == b[sub]


def test_other_seed_other_world(tmp_path: Path) -> None:
    cfg = dict(n_train=5, n_val=1, n_test=1, n_pool=100)
    write_mini_benchmark(tmp_path / "a", config=MiniConfig(seed=0, **cfg), images=False)
    write_mini_benchmark(tmp_path / "b", config=MiniConfig(seed=7, **cfg), images=False)
    a, b = digests(tmp_path / "a"), digests(tmp_path / "b")
    assert a.keys() == b.keys()
    assert a["dataset_mini.json"] != b["dataset_mini.json"]
