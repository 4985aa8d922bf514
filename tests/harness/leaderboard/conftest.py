"""A small submissions folder on the bundled mini benchmarks, built once per test session, and the
guards that keep the leaderboard tests from hanging: a watchdog on every wait and no network."""

from __future__ import annotations

import contextlib
import faulthandler
import json
import shutil
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry

REPO = Path(__file__).resolve().parents[3]


@contextlib.contextmanager
def watchdog(seconds: int, what: str) -> Iterator[None]:
    """Fail instead of hanging. After `seconds`, SIGALRM raises TimeoutError in the main thread
    (which interrupts a blocking socket or pipe read); if the main thread is stuck where Python
    cannot run a handler, faulthandler prints every thread's stack and ends the process 60 s later,
    so a CI log shows where it stuck instead of stopping silently."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} took more than {seconds} s (test watchdog)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(seconds + 60, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


LOCAL_HOSTS = ("127.0.0.1", "::1", "localhost")


def forbid_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Any connection to a non-local address fails at once (and is recorded), so a mock that lets a
    real client through fails the test instead of waiting on DNS, timeouts and retries. Local
    connections stay allowed (chromedriver listens on 127.0.0.1)."""
    attempts: list[object] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def allowed(sock: socket.socket, address: object) -> bool:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return True
        host = address[0] if isinstance(address, tuple) else address
        if host in LOCAL_HOSTS:
            return True
        attempts.append(address)
        return False

    def connect(sock: socket.socket, address: object) -> None:
        if not allowed(sock, address):
            raise OSError(f"the test tried to reach the network ({address!r}); tests run offline")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: object) -> int:
        if not allowed(sock, address):
            return 101  # ENETUNREACH
        return real_connect_ex(sock, address)

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
        # name lookups come before any connect, and can wait on a resolver for many seconds
        if host not in (None, *LOCAL_HOSTS):
            attempts.append(host)
            raise socket.gaierror(socket.EAI_NONAME, f"the test tried to resolve {host!r}; tests run offline")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    # huggingface_hub reads these when first imported: no calls home, no retries on the network
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    return attempts


def write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def mini_random(benchmark_id: str, seed: int, meta: dict) -> dict:
    reg = registry()
    b = reg.benchmark(benchmark_id)
    task = reg.task_of(b)
    gt = task.load_ground_truth(b, locate_ground_truth(b, None))
    return {"vlbench": 1, "benchmark": b.id, "task": b.task, "meta": meta,
            "predictions": task.random_predictions(gt, b, seed=seed)}


def make_submissions(root: Path) -> Path:
    """mini-retrieval: three random rankings (different seeds) with hostile metadata; mini-decorrelated:
    the shipped random entry (per-group breakdown); one invalid file; the reported rows; a reference list."""
    write_json(root / "mini-retrieval" / "alpha.json", mini_random("mini-retrieval", 1, {
        "method": "Alpha & \"friends\" 'x'", "team": "a|b & c", "url": "https://example.org/a?x=1&y=2",
        "paper": "https://example.org/paper?a=1&b=2", "reference": True}))
    write_json(root / "mini-retrieval" / "beta.json", mini_random("mini-retrieval", 2, {
        "method": "Beta", "team": "=cmd", "url": "http://example.org/beta"}))
    write_json(root / "mini-retrieval" / "gamma.json", mini_random("mini-retrieval", 3, {"method": "Gamma"}))
    write_json(root / "mini-retrieval" / "broken.json", {"vlbench": 1, "benchmark": "mini-retrieval"})
    (root / "mini-decorrelated").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "submissions" / "mini-decorrelated" / "random.json", root / "mini-decorrelated" / "gamma.json")
    (root / "reported").mkdir()
    shutil.copy(REPO / "submissions" / "reported" / "odmap_paper.json", root / "reported" / "odmap_paper.json")
    (root / "REFERENCE_ENTRIES").write_text("# maintainers' list\nmini-retrieval/gamma.json\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def built_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The constructed folder, built and published once: returns the leaderboard folder."""
    from vlbench.leaderboard import build_and_publish

    root = tmp_path_factory.mktemp("lb")
    subs = make_submissions(root / "submissions")
    with watchdog(300, "building the browser test's leaderboard"):
        build_and_publish(subs, root / "leaderboard", resamples=200, quiet=True)
    return root / "leaderboard"


def add_seeds(root: Path) -> Path:
    """Three seeds of one method on mini-retrieval (seed 0, 1 and 10: "seed 1" must not match seed 10),
    and a retired version of mini-decorrelated."""
    for seed in (0, 1, 10):
        write_json(root / "mini-retrieval" / f"delta-seed{seed}.json",
                   mini_random("mini-retrieval", 100 + seed, {"method": f"Delta arm 1 (seed {seed})", "team": "D"}))
    retired = REPO / "submissions" / "retired" / "mini-decorrelated@1.0" / "random.json"
    (root / "retired" / "mini-decorrelated@1.0").mkdir(parents=True)
    shutil.copy(retired, root / "retired" / "mini-decorrelated@1.0" / "old.json")
    return root


@pytest.fixture(scope="session")
def page_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`built_board`'s submissions plus seeds and a retired version: returns the leaderboard folder."""
    from vlbench.leaderboard import build_and_publish

    root = tmp_path_factory.mktemp("page")
    subs = add_seeds(make_submissions(root / "submissions"))
    with watchdog(300, "building the page test's leaderboard"):
        build_and_publish(subs, root / "leaderboard", resamples=200, quiet=True)
    return root / "leaderboard"


def copy_submission(source: Path, target: Path, **meta: object) -> None:
    """A committed submission copied into a test folder, with `meta` fields replaced."""
    doc = json.loads(source.read_text(encoding="utf-8"))
    doc["meta"].update(meta)
    write_json(target, doc)


NEWCOMER = "New \"CLIP\" & co's run"  # a single run on both v3 boards; quotes and & to escape


def make_visitor_submissions(root: Path) -> Path:
    """What a visitor meets: two methods with three seeds each (the committed mini-odmap runs) on the
    two boards of the v3 world, a newcomer's single run of one model on both, the chance floors
    (listed with `floor`), the v2 world's runs of the same method names on mini-retrieval (which
    must not pair with the v3 ones), and mini-grounding, where the floor scores above the
    contender on the merged-box columns."""
    committed = REPO / "submissions"
    floors = []
    for board in ("mini-decorrelated", "mini-shapes-retrieval"):
        for arm in ("biased", "synthetic"):
            for seed in (0, 1, 2):
                name = f"mini-odmap-{arm}-seed{seed}.json"
                copy_submission(committed / board / name, root / board / name)
        # a model no seed group has: unbiased seed 2, as a newcomer's own single run
        copy_submission(committed / board / "mini-odmap-unbiased-seed2.json", root / board / "newcomer.json",
                        method=NEWCOMER, team="newcomers", reference=False)
        copy_submission(committed / board / "random.json", root / board / "random.json")
        floors.append(f"{board}/random.json floor")
    for seed in (0, 1, 2):
        name = f"mini-odmap-biased-seed{seed}.json"
        copy_submission(committed / "mini-retrieval" / name, root / "mini-retrieval" / name)
    for name in ("grounding-clip-regions.json", "random.json"):
        copy_submission(committed / "mini-grounding" / name, root / "mini-grounding" / name)
    floors.append("mini-grounding/random.json floor")
    (root / "REFERENCE_ENTRIES").write_text("# maintainers' list\n" + "\n".join(floors) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def visitor_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make_visitor_submissions`, built and published once: returns the leaderboard folder (the
    submissions are in its sibling `submissions/`)."""
    from vlbench.leaderboard import build_and_publish

    root = tmp_path_factory.mktemp("visitor")
    subs = make_visitor_submissions(root / "submissions")
    with watchdog(300, "building the visitor's leaderboard"):
        build_and_publish(subs, root / "leaderboard", resamples=200, quiet=True)
    return root / "leaderboard"
