"""The filtered paraphrase table (`paraphrase.py`): the normaliser against the jar's own
`Normalizer`, the index against a brute-force filter, and the jar's per-segment statistics with a
filtered table against the same jar with the whole table, on adversarial captions."""

from __future__ import annotations

import gzip
import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import EDGE_CANDS, EDGE_REFS, generated_set, needs_java
from gen import adversarial_caption, realistic_caption
from meteor_index import real_index_cache as _real_index_cache

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.java import java_command, meteor_jar
from vlbench.tasks.captioning.meteor import MeteorProcess, score_line
from vlbench.tasks.captioning.meteor import paraphrase as P

ALPHABET = list("aAbZz09 .,'`-\u2018\u2019\u201c\u201d\u2013\u2014\"!?;:()[]$%&/\\@#*+=<>|~^_ éÉßøØŠžЖжꙀᴀ") + [
    "\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\t", "DOTMULTI", "DOTDOTMULTI", "Mr.", "U.S.", "p.m.", "No.",
    "No. 5", "e.g.", "Inc.", "St.", "...", "..", "--", "''", "'s", "n't", "1990's", "1,000", "3.5", "|||", "İ", "Σ",
]



@pytest.fixture(autouse=True)
def _jar_backend(monkeypatch):
    """These tests are about the jar path's filtered table (the Python path has its own tests)."""
    monkeypatch.setenv("VLBENCH_METEOR", "jar")


def _strings(n_random: int = 1500, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 25))) for _ in range(n_random)]
    out += [adversarial_caption(rng) for _ in range(500)] + [realistic_caption(rng) for _ in range(300)]
    out += EDGE_CANDS + [r for rs in EDGE_REFS for r in rs]
    out += ["a man 's dog", "it 's a well-known t-shirt", "u.s. army", "mr. smith", "no. 5 bus", "e.g. this"]
    return [s.replace("\n", " ").replace("\r", " ") for s in out]  # the jar reads lines


def jar_normalize(lines: list[str]) -> list[str]:
    """`Normalizer.normalizeLine(line, en, keepPunctuation=true)`, by the jar's own main()."""
    cmd = [*java_command(), "-Dsun.stdout.encoding=UTF-8", "-cp", str(meteor_jar()),
           "edu.cmu.meteor.util.Normalizer", "en", "true"]
    res = subprocess.run(cmd, input="".join(s + "\n" for s in lines).encode("utf-8"), capture_output=True, check=True)
    out = res.stdout.decode("utf-8").split("\n")
    assert out[-1] == "" and len(out) == len(lines) + 1
    return out[:-1]


@pytest.fixture(scope="module")
def normalised():
    lines = _strings()
    return lines, jar_normalize(lines)


@needs_java
def test_normaliser_matches_the_jar(normalised):
    lines, theirs = normalised
    nbp = P.nonbreaking_prefixes(str(meteor_jar()))
    bad = [(s, t, P.normalize_line(s, nbp)) for s, t in strict_zip(lines, theirs) if P.normalize_line(s, nbp) != t]
    assert not bad, bad[:5]
    # and the words the aligner sees (lower-cased, StringTokenizer), fast path included
    for s, t in strict_zip(lines, theirs):
        assert P.meteor_tokens(s, nbp) == P.string_tokens(t.lower())


def test_score_parts_split_like_java():
    assert P.score_parts("SCORE ||| a b ||| c|||d ||| hyp") == ["a b", "c", "d", "hyp"]
    assert P.score_parts("SCORE ||| ref ||| ") == ["ref", ""]
    assert P.score_parts("SCORE ||| ref |||") == ["ref"]  # Java's split drops trailing empty strings
    assert P.score_parts(score_line("", ["x"])) == ["x", ""]


def test_ngram_keys_match_phrase_keys():
    toks = [["a", "man", "café"], [], ["b"], ["a", "very-long-word", "another-long-word"]]
    got = set(P.ngram_keys(toks, 2).tolist())
    grams = ["", "a", "man", "café", "a man", "man café", "b", "very-long-word", "another-long-word",
             "a very-long-word", "very-long-word another-long-word"]
    want = {P.bytes_key(s.encode()) for s in grams}
    assert got == want  # "café b" would cross a list boundary; "a man café" is longer than 2


# ----------------------------------------------------------------------------- synthetic tables
def _write_table(path: Path, entries: list[tuple[str, str, str]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as f:
        for prob, a, b in entries:
            f.write(f"{prob}\n{a}\n{b}\n")


def _adversarial_set(n: int, seed: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    cands, refs = generated_set(n, seed=seed, adversarial_share=0.5)
    strings = _strings(200, seed)
    for i in range(0, n, 3):
        cands[i] = rng.choice(strings)
        refs[i] = [*refs[i][:2], rng.choice(strings), "a ||| split reference"]
    cands += EDGE_CANDS
    refs += EDGE_REFS
    return cands, refs


def _synthetic_table(cands, refs, seed: int) -> list[tuple[str, str, str]]:
    """Entries built from the jar's own words for these captions (so the filter has real matches
    to keep and to lose), paired across images, plus entries that cannot match."""
    rng = random.Random(seed)
    texts = [p for h, r in strict_zip(cands, refs) for p in P.score_parts(score_line(h, r))]
    word_lists = [P.string_tokens(t.lower()) for t in jar_normalize(texts)]
    word_lists = [w for w in word_lists if w]
    grams = []
    for w in word_lists:
        for _ in range(3):
            n = rng.randint(1, min(4, len(w)))
            i = rng.randrange(len(w) - n + 1)
            grams.append(" ".join(w[i : i + n]))
    entries = []
    for k in range(3000):
        a, b = rng.choice(grams), rng.choice(grams)
        if k % 5 == 0:
            b = b + " zzqx"  # occurs nowhere
        entries.append((f"{rng.random():.6f}", a, b))
    return entries


@needs_java
def test_filtered_table_gives_the_jars_statistics_synthetic(tmp_path):
    cands, refs = _adversarial_set(240, seed=11)
    table = tmp_path / "para.gz"
    _write_table(table, _synthetic_table(cands, refs, seed=11))
    with MeteorProcess(filtered=False, table=table) as plain:
        want = plain.stats(cands, refs)
    for shards in (1, 2):
        with MeteorProcess(table=table, cache=tmp_path / "cache", shards=shards) as proc:
            got = proc.stats(cands, refs)
            assert proc.index is not None and proc.warning is None
            assert 0 < proc.last_table_entries < 3000
        np.testing.assert_array_equal(got, want)
    assert want[:, 16:20].sum() > 0  # the paraphrase stage matched: the table is not inert here


@needs_java
def test_filtered_table_gives_the_jars_statistics_real_table(real_index_cache):
    """The real 5.27M-entry table: filtered (index cached for the session) and plain."""
    cands, refs = _adversarial_set(150, seed=3)
    with MeteorProcess(cache=real_index_cache) as proc:
        got = proc.stats(cands, refs)
        assert proc.index is not None and proc.warning is None
        kept = proc.last_table_entries
    with MeteorProcess(filtered=False) as plain:
        want = plain.stats(cands, refs)
    np.testing.assert_array_equal(got, want)
    assert 0 < kept < 100_000
    # paraphrase matches happened (module 3's match counts are columns 16..19)
    assert want[:, 16:20].sum() > 0


@needs_java
def test_fallback_when_the_index_cannot_be_built(tmp_path):
    table = tmp_path / "t.gz"
    _write_table(table, [("0.5", "a man", "a guy")])
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.warns(RuntimeWarning, match="full paraphrase table"):
        proc = MeteorProcess(table=table, cache=blocker / "cache").start()  # cache dir not creatable
    with proc:
        assert proc.index is None and "unavailable" in proc.warning
        got = proc.stats(["a man rides a horse"], [["a guy rides a horse"]])
    with MeteorProcess(table=table, cache=tmp_path / "cache") as ok:
        want = ok.stats(["a man rides a horse"], [["a guy rides a horse"]])
        assert ok.index is not None
    np.testing.assert_array_equal(got, want)
    assert want[0, 16:20].sum() > 0  # "a man" / "a guy" matched as paraphrases


@needs_java
def test_java_and_python_lower_casing_agree_on_table_characters(tmp_path, real_table_chars):
    """Where Java's toLowerCase (English) and Python's str.lower differ (characters cased only in
    newer Unicode versions), neither result contains a character of the paraphrase table, so a
    caption word matches a table word under one exactly when it does under the other."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not installed")
    src = tmp_path / "Lower.java"
    src.write_text(
        "public class Lower { public static void main(String[] a) throws Exception {"
        " java.io.PrintStream o = new java.io.PrintStream(new java.io.BufferedOutputStream(System.out), false, \"UTF-8\");"
        " for (int c = 0; c <= 0x10FFFF; c++) { if (c >= 0xD800 && c <= 0xDFFF) continue;"
        " String s = new String(Character.toChars(c)); String l = s.toLowerCase(java.util.Locale.ENGLISH);"
        " if (!l.equals(s)) { o.print(Integer.toHexString(c)); l.codePoints().forEach(x -> o.print(\" \" + Integer.toHexString(x)));"
        " o.print('\\n'); } } o.flush(); } }"
    )
    subprocess.run([javac, "-d", str(tmp_path), str(src)], check=True, capture_output=True)
    out = subprocess.run([*java_command(), "-cp", str(tmp_path), "Lower"], check=True, capture_output=True).stdout
    java_lower = {}
    for line in out.decode("utf-8").splitlines():
        c, *low = line.split()
        java_lower[int(c, 16)] = "".join(chr(int(x, 16)) for x in low)
    differ = []
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        j = java_lower.get(c, chr(c))
        if j != chr(c).lower():
            differ.append(c)
            assert not (set(j) | set(chr(c).lower())) & real_table_chars, hex(c)
    assert len(differ) < 200  # a handful of recently encoded letters, not a systematic difference
    # context rules: final sigma and dotted capital I lower-case to characters absent from the table
    assert not {"\u03c3", "\u03c2", "\u0307"} & real_table_chars


@pytest.fixture(scope="module")
def real_index_cache() -> Path:
    return _real_index_cache()


@pytest.fixture(scope="module")
def real_table_chars() -> set[str]:
    raw = gzip.decompress((meteor_jar().parent / "data" / "paraphrase-en.gz").read_bytes())
    chars = {chr(x) for x in range(128)}
    for m in re.finditer(rb"[\x80-\xff]+", raw):
        chars.update(m.group().decode("utf-8"))
    return chars
