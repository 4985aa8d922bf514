"""The jar's word data as `meteor/resources.py` reads it, against the jar: Java's string hash, the
Snowball stemmer (compiled and pure Python), the synset lines."""

from __future__ import annotations

import dataclasses
import random
import shutil
import subprocess

import numpy as np
import pytest
from conftest import needs_java

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.java import meteor_jar
from vlbench.tasks.captioning.meteor.resources import (
    SYNSET_IDS,
    java_hash,
    java_hashes,
    load_resources,
)


def test_java_hash_codes():
    assert java_hash("") == 0
    assert java_hash("a") == 97
    assert java_hash("Aa") == java_hash("BB") == 2112
    assert java_hash("hello") == 99162322
    assert java_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE
    assert java_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # two UTF-16 code units


@needs_java
@pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")
def test_snowball_stemmer_equals_the_jars(tmp_path):
    """snowballstemmer's English stemmer against the jar's englishStemmer on every word of
    WordNet (the synonym file) and its exception list."""
    jar = str(meteor_jar())
    res = load_resources(jar)
    words = sorted(set(res.synsets) | set(res.bases) | {w for bs in res.bases.values() for w in bs})
    src = tmp_path / "Stem.java"
    src.write_text(
        "import java.io.*; import org.tartarus.snowball.ext.englishStemmer;\n"
        "public class Stem { public static void main(String[] a) throws Exception {\n"
        " BufferedReader r = new BufferedReader(new InputStreamReader(System.in, \"UTF-8\"));\n"
        " PrintStream o = new PrintStream(new BufferedOutputStream(System.out), false, \"UTF-8\");\n"
        " englishStemmer s = new englishStemmer(); String l;\n"
        " while ((l = r.readLine()) != null) { s.setCurrent(l); s.stem(); o.println(s.getCurrent()); }\n"
        " o.flush(); } }\n"
    )
    subprocess.run(["javac", "-cp", jar, "-d", str(tmp_path), str(src)], check=True, capture_output=True)
    out = subprocess.run(["java", "-cp", f"{jar}:{tmp_path}", "Stem"], input="\n".join(words).encode() + b"\n",
                         capture_output=True, check=True).stdout.decode("utf-8").split("\n")[:-1]
    assert len(out) == len(words) > 100_000
    diff = [(w, j) for w, j in strict_zip(words, out) if res.stemmer.stemWord(w) != j]  # type: ignore[attr-defined]
    assert not diff, diff[:10]


def test_compiled_stemmer_equals_the_pure_python_one():
    """PyStemmer (Snowball 2.2.0 in C, which snowballstemmer hands out when installed) against
    snowballstemmer's own Python English stemmer (tested against the jar above): WordNet's words
    and generated ones, non-ASCII included. No Java needed."""
    stemmer_c = pytest.importorskip("Stemmer")
    import snowballstemmer

    res = load_resources(str(meteor_jar()))
    rng = random.Random(3)
    alphabet = "abcdefghijklmnopqrstuvwxyzyYéèüßñçøæ'-0123456789"
    words = sorted(set(res.synsets) | set(res.bases))
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(30_000)]
    words += ["".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(1, 8))) for _ in range(10_000)]
    pure = snowballstemmer.EnglishStemmer()
    compiled = stemmer_c.Stemmer("english")
    got = compiled.stemWords(words)
    diff = [(w, c) for w, c in strict_zip(words, got) if pure.stemWord(w) != c]
    assert not diff, diff[:10]
    assert type(res.stemmer) is type(compiled)  # what the Python METEOR uses when PyStemmer is there


def test_java_hashes_equal_java_hash_word_by_word():
    rng = random.Random(4)
    pools = [(32, 126), (160, 0xD7FF), (0xD800, 0xDFFF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    words = ["", "a", "Aa", "BB", "polygenelubricants", "\U0001f600", "x" * 500]
    words += ["".join(chr(rng.randint(*rng.choice(pools))) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    assert java_hashes(words).tolist() == [java_hash(w) for w in words]
    assert java_hashes(words).dtype == np.int32 and java_hashes([]).tolist() == []
    assert java_hash("a\ud800") == 97 * 31 + 0xD800  # a lone surrogate is one UTF-16 unit, as in Java


def test_stems_of_words_the_compiled_stemmer_cannot_take():
    """A lone surrogate cannot be UTF-8 (PyStemmer's input): such words are stemmed in Python, the
    others by the compiled stemmer, one by one or in a batch alike."""
    import snowballstemmer

    res = load_resources(str(meteor_jar()))
    words = ["running", "ab\ud800cd", "\udfffings", "cats", "runnings\ud83d"]
    pure = snowballstemmer.EnglishStemmer()
    want = [pure.stemWord(w) for w in words]
    assert res.stems(words) == want and [res.stem(w) for w in words] == want
    assert res.stems(["running", "cats"]) == ["run", "cat"]


def test_the_jars_synset_lines_are_ids_joined_by_single_spaces():
    """What lets `_synsets_of` split on single spaces: every synset line of the jar's file has that
    form (other forms go through StringTokenizer's split, as the jar reads them)."""
    res = load_resources(str(meteor_jar()))
    assert len(res.synsets) > 100_000
    assert all(SYNSET_IDS.fullmatch(text) for text in res.synsets.values())
    odd = dataclasses.replace(res, synsets={"odd": "\t12  34\f"}, _stem_memo={}, _syn_memo={})
    assert odd._synsets_of("odd") == frozenset({12, 34})
