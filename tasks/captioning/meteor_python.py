"""Meteor 1.5 (`meteor-1.5.jar - - -stdio -l en -norm`) in Python: the 23 statistics per segment,
as the jar computes them, without Java.

Learnt from the jar's bytecode (`javap -c -p` on `edu/cmu/meteor/aligner/*` and
`edu/cmu/meteor/scorer/MeteorScorer`), then written here; the data files are read at run time from
the jar and the paraphrase table that pycocoevalcap installs. What the jar does, step by step:

* Words: each `|||` part of a SCORE line is trimmed, normalised (`paraphrase.normalize_line`),
  lower-cased and split on blanks (`paraphrase.meteor_tokens`); the last part is the hypothesis.
* Words are compared through Java's `String.hashCode()` (the aligner keeps only the hashes), so
  two different words with the same hash are an exact match to the jar; `java_hash` reproduces it.
* Matchers, in the order exact, stem, synonym, paraphrase, each appending to the match list of the
  reference position where a match starts (reference positions outer, hypothesis positions inner):
  exact: equal hashes; stem: equal hashes of the Snowball English stems (the `snowballstemmer`
  package; equal to the jar's `englishStemmer` on WordNet's 153k words, tested) and different word
  hashes; synonym: the WordNet synsets of the words (plus those of their base forms from the
  exception list or the jar's suffix rules, `_stem_synsets`) share one, and different word hashes;
  paraphrase: a table phrase starting at a reference position whose paraphrase occurs in the
  hypothesis, then the same from hypothesis positions into the reference, in the order of the
  phrase trie (shorter phrases first, then table order).
* If the hypothesis and reference have the same word hashes, only the exact matcher runs.
* A reference position with exactly one match, whose words are each covered by exactly one match
  on both sides, is fixed before the search.
* Beam search (beam 40) over reference positions: each partial alignment either takes one of the
  matches starting there (whose words are free) or skips the position. Partial alignments are
  ordered by weighted matched words (each match adds `int(count + length * weight)` on each side,
  with the search weights 1.0 exact, 0.5 stem, synonym and paraphrase, not the score's: the jar's
  scorer resets them; it truncates to int, so a one-word stem or synonym match adds nothing to
  an even count and one to an odd count), then fewer chunks,
  then smaller distance (sum of |reference start - hypothesis start|; the jar adds a taken match's
  distance to the parent partial, so later siblings inherit it), keeping the previous order on
  ties (a stable sort).
* Statistics of the best alignment: lengths, function words (`function/english.words`), content
  and function words matched per module on each side, chunks; with several references the first
  one with the strictly highest score (computed as `MeteorScorer.computeMetrics` does) wins.

One module, though long: the matchers, the beam search and the statistics are one algorithm read
off one bytecode, and their order of operations (which decides jar-equality) is only checkable
when read together.
"""

from __future__ import annotations

import gzip
import math
import multiprocessing
import os
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.jsonio import gc_paused
from vlbench.tasks.captioning import meteor_native, paraphrase, paraphrase_index
from vlbench.tasks.captioning.meteor_stats import (
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_DELTA,
    METEOR_GAMMA,
    METEOR_STATS,
    METEOR_WEIGHTS,
)

BEAM_SIZE = 40  # MeteorConfiguration's default
EXACT, STEM, SYNONYM, PARAPHRASE = range(4)
# The weights the beam search counts matches with: MeteorScorer.loadConfiguration builds the
# aligner with the task's weights (1.0 0.6 0.8 0.6), then overwrites them with 1.0 for exact and
# 0.5 for every other module (updateModuleWeights); the score still uses the task's weights.
SEARCH_WEIGHTS = (1.0, 0.5, 0.5, 0.5)

# SynonymDictionary.morph: suffix i is replaced by _ADD[i] (WordNet's detachment rules)
_SUFFIXES = ("s", "ses", "xes", "zes", "ches", "shes", "men", "ies", "s", "ies", "es", "es", "ed", "ed", "ing",
             "ing", "er", "est", "er", "est")
_ADD = ("", "s", "x", "z", "ch", "sh", "man", "y", "", "y", "e", "", "e", "", "e", "", "", "", "e", "e")


SYNSET_IDS = re.compile("[0-9]+(?: [0-9]+)*")  # a synset line as the jar's file writes them


def java_hash(word: str) -> int:
    """Java's String.hashCode (over UTF-16 code units, 32-bit overflow; a lone surrogate is one
    unit, as in a Java string)."""
    h = 0
    data = word.encode("utf-16-le", "surrogatepass")
    for k in range(0, len(data), 2):
        h = (31 * h + (data[k] | data[k + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hashes(words: Sequence[str]) -> np.ndarray:
    """`java_hash` of every word (int32), vectorised: each UTF-16 code unit times the power of 31
    its position gives, summed per word, all modulo 2**32 (numpy's uint32 arithmetic wraps). A
    lone surrogate is one code unit, as in a Java string."""
    encoded = [w.encode("utf-16-le", "surrogatepass") for w in words]
    lengths = np.fromiter((len(e) // 2 for e in encoded), dtype=np.int64, count=len(encoded))
    out = np.zeros(len(encoded), dtype=np.uint32)
    if not lengths.any():
        return out.view(np.int32)
    units = np.frombuffer(b"".join(encoded), dtype="<u2").astype(np.uint32)
    ends = np.cumsum(lengths)
    powers = np.ones(int(lengths.max()), dtype=np.uint32)
    np.cumprod(np.full(len(powers) - 1, 31, dtype=np.uint32), out=powers[1:])
    owner_end = np.repeat(ends, lengths)
    units *= powers[owner_end - 1 - np.arange(len(units))]
    nonempty = lengths > 0
    out[nonempty] = np.add.reduceat(units, (ends - lengths)[nonempty], dtype=np.uint32)
    return out.view(np.int32)


@dataclass
class MeteorResources:
    """The English data of the Meteor 1.5 jar, read from the jar itself."""

    function_words: frozenset[str]
    synsets: dict[str, str]  # word -> its synset ids, as the file's text (parsed by `_synsets_of`)
    bases: dict[str, list[str]]
    nbp: dict[str, int]
    stemmer: Any  # the Snowball English stemmer: PyStemmer's (C) when installed, else snowballstemmer's
    _stem_memo: dict[str, int] = field(default_factory=dict)
    _syn_memo: dict[str, frozenset[int]] = field(default_factory=dict)

    def stem(self, word: str) -> str:
        """The Snowball English stem. PyStemmer takes UTF-8, which a lone surrogate (one UTF-16
        unit, a valid Java string) is not: such words go to the Python stemmer (equal to the
        compiled one on everything else)."""
        try:
            return self.stemmer.stemWord(word)
        except UnicodeEncodeError:
            return _python_stemmer().stemWord(word)

    def stems(self, words: Sequence[str]) -> list[str]:
        try:
            return self.stemmer.stemWords(words)
        except UnicodeEncodeError:
            return [self.stem(w) for w in words]

    def stem_hash(self, word: str) -> int:
        h = self._stem_memo.get(word)
        if h is None:
            h = self._stem_memo[word] = java_hash(self.stem(word))
        return h

    def _synsets_of(self, word: str) -> frozenset[int]:
        """getSynSets(word): the word's synset ids (empty when WordNet lacks the word)."""
        text = self.synsets.get(word)
        if text is None:
            return frozenset()
        if SYNSET_IDS.fullmatch(text):  # the jar's file throughout (tested): one split, no regex
            return frozenset(map(int, text.split(" ")))
        return frozenset(int(x) for x in paraphrase.string_tokens(text))

    def _morph(self, word: str) -> str:
        suffix = "ful" if word.endswith("ful") else ""
        if word.endswith("ss") or len(word) <= 2:
            return word
        for sfx, add in zip(_SUFFIXES, _ADD, strict=True):
            if word.endswith(sfx):
                base = word[: len(word) - len(sfx)] + add
                if base in self.synsets:
                    return base + suffix
        return ""

    def synonym_sets(self, word: str) -> frozenset[int]:
        """getSynSets(word) | getStemSynSets(word)."""
        out = self._syn_memo.get(word)
        if out is None:
            own = self._synsets_of(word)
            bases = self.bases.get(word)
            if bases is not None:
                stem_sets: frozenset[int] = frozenset().union(*(self._synsets_of(b) for b in bases))
            else:
                stem_sets = self._synsets_of(self._morph(word))
            out = self._syn_memo[word] = own | stem_sets
        return out


def _lines(data: bytes, encoding: str = "utf-8") -> list[str]:
    """BufferedReader.readLine over the whole file (line ends \\n, \\r or \\r\\n)."""
    text = data.decode(encoding)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _stemmer() -> Any:
    """PyStemmer's English stemmer (Snowball 2.2.0 in C), else snowballstemmer's (the same in
    Python; importing that package loads all its languages, which is why it comes second)."""
    try:
        import Stemmer  # PyStemmer, in the `captions` extra
    except ImportError:
        return _python_stemmer()
    return Stemmer.Stemmer("english")


@cache
def _python_stemmer() -> Any:
    import snowballstemmer  # the `captions` extra

    return snowballstemmer.EnglishStemmer()


@cache
def load_resources(jar: str) -> MeteorResources:
    with zipfile.ZipFile(jar) as z:
        function_words = frozenset(_lines(z.read("function/english.words")))
        exc = _lines(z.read("synonym/english.exceptions"))
        syn = _lines(z.read("synonym/english.synsets"))
    bases: dict[str, list[str]] = {}
    for k in range(0, len(exc) - 1, 2):
        for form in paraphrase.string_tokens(exc[k + 1]):
            bases.setdefault(form, []).append(exc[k])
    # the synset ids stay text until a word needs them (most of WordNet's words never occur)
    synsets = dict(zip(syn[0::2], syn[1::2], strict=False))
    return MeteorResources(function_words, synsets, bases, paraphrase.nonbreaking_prefixes(jar),
                           _stemmer())


class ParaphraseTrie:
    """The jar's ParaphraseTransducer over a set of table entries (phrase, paraphrase), in table
    order: `paths(words, i)` lists (phrase length, entry) for the phrases starting at i, shorter
    phrases first and, for one phrase, in table order."""

    def __init__(self, entries: Sequence[tuple[tuple[str, ...], tuple[str, ...]]]) -> None:
        self.root: dict = {}
        self.paraphrases: list[tuple[str, ...]] = []
        for phrase, para in entries:
            node = self.root
            for w in phrase:
                node = node.setdefault(w, {})
            node.setdefault(None, []).append(len(self.paraphrases))
            self.paraphrases.append(para)

    def paths(self, words: Sequence[str], start: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        node = self.root
        for k in range(start, len(words)):
            node = node.get(words[k])
            if node is None:
                break
            for e in node.get(None, ()):
                out.append((k - start + 1, e))
        return out


def read_entries(index: paraphrase_index.ParaphraseIndex, entries: np.ndarray) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The (phrase, paraphrase) words of the given table entries, in table order."""
    if len(entries) == 0:
        return []
    text = index.triples(entries).decode("utf-8")
    # Each triple is three lines, each ending in a newline (the index build checked the table: no
    # carriage returns, a line count that is a multiple of 3, a final newline added).
    lines = text.split("\n")
    if "\t" in text or "\f" in text or "  " in text or "\n " in text or " \n" in text or text.startswith(" "):
        words = [tuple(paraphrase.string_tokens(line)) for line in lines]
    else:  # the shipped table: words joined by single spaces, as StringTokenizer reads them
        words = [tuple(line.split(" ")) if line else () for line in lines]
    return list(zip(words[1::3], words[2::3]))


def load_full_table(table_gz: Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every entry of a paraphrase table (for small tables, e.g. in tests)."""
    with gzip.open(table_gz, "rb") as g:
        lines = _lines(g.read())
    return [(tuple(paraphrase.string_tokens(lines[k + 1])), tuple(paraphrase.string_tokens(lines[k + 2])))
            for k in range(0, len(lines) - 2, 3)]


# A match: (ref start, ref length, hyp start, hyp length, module)
Match = tuple[int, int, int, int, int]


class _Partial:
    __slots__ = ("matches", "w1", "w2", "all1", "all2", "chunks", "idx", "last_end", "distance", "used1", "used2")

    def copy(self) -> _Partial:
        p = _Partial.__new__(_Partial)
        p.matches = self.matches.copy()
        p.w1, p.w2, p.all1, p.all2 = self.w1, self.w2, self.all1, self.all2
        p.chunks, p.idx, p.last_end, p.distance = self.chunks, self.idx, self.last_end, self.distance
        p.used1, p.used2 = self.used1, self.used2
        return p


def _mask(start: int, length: int) -> int:
    return ((1 << length) - 1) << start


def _add_match(p: _Partial, m: Match) -> None:
    start, length, mstart, mlength, module = m
    w = SEARCH_WEIGHTS[module]
    p.w1 = int(p.w1 + mlength * w)  # the jar: (int) (matches1 + matchLength * weight)
    p.w2 = int(p.w2 + length * w)
    p.all1 += mlength
    p.all2 += length
    if p.last_end != -1 and mstart != p.last_end:
        p.chunks += 1
    p.idx = start + length
    p.last_end = mstart + mlength


def _sort_key(p: _Partial) -> tuple[int, int, int]:
    return (-(p.w1 + p.w2), p.chunks, p.distance)


class Aligner:
    """Aligns a hypothesis (line 1) with a reference (line 2) as the jar's Aligner does."""

    def __init__(self, resources: MeteorResources, trie: ParaphraseTrie | None) -> None:
        self.res = resources
        self.trie = trie
        self._info: dict[str, tuple[int, int, frozenset[int]]] = {}
        self._hyp: Sequence[str] | None = None
        self._hyp_side: tuple = ()

    def _word_info(self, word: str) -> tuple[int, int, frozenset[int]]:
        """(hash code, hash code of the stem, synonym sets) of a word, once per run."""
        info = self._info.get(word)
        if info is None:
            res = self.res
            info = self._info[word] = (java_hash(word), res.stem_hash(word), res.synonym_sets(word))
        return info

    def _hyp_indexes(self, w1: Sequence[str]) -> tuple:
        """The hypothesis side's inverted indexes (kept while one hypothesis meets its references)."""
        if w1 is self._hyp:
            return self._hyp_side
        info = [self._word_info(w) for w in w1]
        h1 = [x[0] for x in info]
        by_hash: dict[int, list[int]] = {}
        by_stem: dict[int, list[int]] = {}
        by_synset: dict[int, list[int]] = {}
        for i, (h, sh, syn) in enumerate(info):
            by_hash.setdefault(h, []).append(i)
            by_stem.setdefault(sh, []).append(i)
            for k in syn:
                by_synset.setdefault(k, []).append(i)
        self._hyp = w1
        self._hyp_side = (h1, by_hash, by_stem, by_synset)
        return self._hyp_side

    def matches(self, w1: Sequence[str], w2: Sequence[str]) -> tuple[list[list[Match]], list[int], list[int]]:
        """The stage's match lists (indexed by reference position) and coverage counts, in the
        jar's order: module by module; reference position outer, hypothesis position inner
        (positions looked up through inverted indexes instead of the jar's double loops)."""
        n1, n2 = len(w1), len(w2)
        h1, by_hash, by_stem, by_synset = self._hyp_indexes(w1)
        info2 = [self._word_info(w) for w in w2]
        h2 = [x[0] for x in info2]
        stage: list[list[Match]] = [[] for _ in range(n2)]
        cov1 = [0] * n1
        cov2 = [0] * n2
        for j in range(n2):
            for i in by_hash.get(h2[j], ()):
                stage[j].append((j, 1, i, 1, EXACT))
                cov1[i] += 1
                cov2[j] += 1
        if n1 == n2 and h1 == h2:
            return stage, cov1, cov2
        for j in range(n2):
            hj = h2[j]
            for i in by_stem.get(info2[j][1], ()):
                if h1[i] != hj:
                    stage[j].append((j, 1, i, 1, STEM))
                    cov1[i] += 1
                    cov2[j] += 1
        if by_synset:
            for j in range(n2):
                syn = info2[j][2]
                if not syn:
                    continue
                hits: set[int] = set()
                for k in syn:
                    found = by_synset.get(k)
                    if found is not None:
                        hits.update(found)
                hj = h2[j]
                for i in sorted(hits):
                    if h1[i] != hj:
                        stage[j].append((j, 1, i, 1, SYNONYM))
                        cov1[i] += 1
                        cov2[j] += 1
        if self.trie is not None:
            self._paraphrase_matches(w1, w2, stage, cov1, cov2)
        return stage, cov1, cov2

    def _paraphrase_matches(self, w1: Sequence[str], w2: Sequence[str], stage: list[list[Match]],
                            cov1: list[int], cov2: list[int]) -> None:
        trie = self.trie
        assert trie is not None
        root = trie.root
        paras = trie.paraphrases
        n1, n2 = len(w1), len(w2)

        def add(m: Match) -> None:
            stage[m[0]].append(m)
            for k in range(m[3]):
                cov1[m[2] + k] += 1
            for k in range(m[1]):
                cov2[m[0] + k] += 1

        t1, t2 = tuple(w1), tuple(w2)
        # Two loops that mirror each other on purpose: the jar runs the reference-side pass to the
        # end before the hypothesis-side one, and that order of `add` calls is what makes the match
        # lists (hence the beam search) equal to the jar's; one merged loop would hide it.
        for j in range(n2):
            if w2[j] not in root:
                continue
            for length, e in trie.paths(w2, j):
                para = paras[e]
                k = len(para)
                for i in range(n1 - k + 1) if k else range(n1):
                    if t1[i : i + k] == para:
                        add((j, length, i, k, PARAPHRASE))
        for i in range(n1):
            if w1[i] not in root:
                continue
            for length, e in trie.paths(w1, i):
                para = paras[e]
                k = len(para)
                for j in range(n2 - k + 1) if k else range(n2):
                    if t2[j : j + k] == para:
                        add((j, k, i, length, PARAPHRASE))

    def align(self, w1: Sequence[str], w2: Sequence[str]) -> list[Match | None]:
        """The matches of the best alignment, indexed by reference position."""
        stage, cov1, cov2 = self.matches(w1, w2)
        n2 = len(w2)
        first = _Partial.__new__(_Partial)
        first.matches = [None] * n2
        first.w1 = first.w2 = first.all1 = first.all2 = first.chunks = first.idx = first.distance = 0
        first.last_end = -1
        first.used1 = first.used2 = 0
        for j in range(n2):
            if len(stage[j]) == 1:
                m = stage[j][0]
                if all(cov2[j + k] == 1 for k in range(m[1])) and all(cov1[m[2] + k] == 1 for k in range(m[3])):
                    first.matches[j] = m
                    first.used2 |= _mask(j, m[1])
                    first.used1 |= _mask(m[2], m[3])
        if all(not ms or (len(ms) == 1 and first.matches[j] is ms[0]) for j, ms in enumerate(stage)):
            # every match is fixed: the search has a single path, which takes them all
            return first.matches
        return self._resolve(stage, first).matches

    def _resolve(self, stage: list[list[Match]], first: _Partial) -> _Partial:
        n2 = len(stage)
        nxt = [first]
        for i in range(n2 + 1):
            prev = sorted(nxt, key=_sort_key)
            nxt = []
            for p in prev[:BEAM_SIZE]:
                if i == n2:
                    if p.last_end != -1:
                        p.chunks += 1
                    nxt.append(p)
                    continue
                if p.used2 >> i & 1:
                    if i < p.idx:
                        nxt.append(p)
                        continue
                    m = p.matches[p.idx]
                    if m is None:
                        continue  # the jar drops such a partial alignment
                    _add_match(p, m)
                    p.distance += abs(m[0] - m[2])
                    nxt.append(p)
                    continue
                for m in stage[i]:
                    start, length, mstart, mlength, _ = m
                    if p.used2 & _mask(start, length) or p.used1 & _mask(mstart, mlength):
                        continue
                    c = p.copy()
                    c.used2 |= _mask(start, length)
                    c.used1 |= _mask(mstart, mlength)
                    c.matches[i] = m
                    _add_match(c, m)
                    p.distance += abs(start - mstart)  # sic: the parent's, as the jar does
                    nxt.append(c)
                if p.last_end != -1:
                    p.chunks += 1
                    p.last_end = -1
                p.idx += 1
                nxt.append(p)
            if not nxt:
                nxt.append(prev[0])  # the jar: "skipping matches until possible to continue"
        nxt.sort(key=_sort_key)
        return nxt[0]

    def stats(self, w1: Sequence[str], w2: Sequence[str]) -> list[float]:
        """The 23 statistics of hypothesis `w1` against reference `w2`."""
        matches = self.align(w1, w2)
        fw = self.res.function_words
        f1 = [w.lower() in fw for w in w1]
        f2 = [w.lower() in fw for w in w2]
        content1 = [0] * 4
        content2 = [0] * 4
        func1 = [0] * 4
        func2 = [0] * 4
        for m in matches:
            if m is None:
                continue
            start, length, mstart, mlength, module = m
            for k in range(mlength):
                if f1[mstart + k]:
                    func1[module] += 1
                else:
                    content1[module] += 1
            for k in range(length):
                if f2[start + k]:
                    func2[module] += 1
                else:
                    content2[module] += 1
        count1, count2, chunks = _count_and_chunks(matches)
        out = [float(len(w1)), float(len(w2)), float(sum(f1)), float(sum(f2))]
        for k in range(4):
            out += [float(content1[k]), float(content2[k]), float(func1[k]), float(func2[k])]
        out += [float(chunks), float(count1), float(count2)]
        return out


def _count_and_chunks(matches: list[Match | None]) -> tuple[int, int, int]:
    count1 = count2 = chunks = 0
    last_end = -1
    i = 0
    n = len(matches)
    while i < n:
        m = matches[i]
        if m is None:
            if last_end != -1:
                chunks += 1
                last_end = -1
            i += 1
            continue
        start, length, mstart, mlength, _ = m
        count1 += mlength
        count2 += length
        if last_end != -1 and mstart != last_end:
            chunks += 1
        if length == 0:
            raise RuntimeError("a paraphrase match of no reference words in an alignment (the jar would loop)")
        i = start + length
        last_end = mstart + mlength
    if last_end != -1:
        chunks += 1
    return count1, count2, chunks


def segment_score(s: Sequence[float]) -> float:
    """MeteorScorer.computeMetrics's score, in its order of operations (used to pick the best
    reference exactly as the jar does)."""
    d = METEOR_DELTA
    t_wl = d * (s[0] - s[2]) + (1.0 - d) * s[2]
    r_wl = d * (s[1] - s[3]) + (1.0 - d) * s[3]
    t_wm = 0.0
    r_wm = 0.0
    for k, w in enumerate(METEOR_WEIGHTS):
        t_wm += s[4 + 4 * k] * w * d
    for k, w in enumerate(METEOR_WEIGHTS):
        r_wm += s[5 + 4 * k] * w * d
    for k, w in enumerate(METEOR_WEIGHTS):
        t_wm += s[6 + 4 * k] * w * (1.0 - d)
    for k, w in enumerate(METEOR_WEIGHTS):
        r_wm += s[7 + 4 * k] * w * (1.0 - d)
    try:
        p = t_wm / t_wl
    except ZeroDivisionError:
        p = math.nan if t_wm == 0 else math.copysign(math.inf, t_wm)
    try:
        r = r_wm / r_wl
    except ZeroDivisionError:
        r = math.nan if r_wm == 0 else math.copysign(math.inf, r_wm)
    fmean = _jdiv(1.0, _jdiv(1.0 - METEOR_ALPHA, p) + _jdiv(METEOR_ALPHA, r))
    t_total = sum(s[4 + 4 * k] + s[6 + 4 * k] for k in range(4))
    r_total = sum(s[5 + 4 * k] + s[7 + 4 * k] for k in range(4))
    if t_total == s[0] and r_total == s[1] and s[20] == 1.0:
        frag = 0.0
    else:
        frag = _jdiv(s[20], (s[21] + s[22]) / 2.0)
    penalty = METEOR_GAMMA * _jpow(frag, METEOR_BETA)
    score = fmean * (1.0 - penalty)
    if math.isnan(score):
        return 0.0
    return max(score, 0.0)


def _jdiv(a: float, b: float) -> float:
    """Java double division (IEEE: x/0 is inf or NaN)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _jpow(a: float, b: float) -> float:
    if math.isnan(a):
        return math.nan
    if math.isinf(a):
        return math.inf
    return math.pow(a, b)


class PythonMeteor:
    """The jar's statistics for (hypothesis, references) pairs, in Python."""

    def __init__(self, jar: Path, table: Path | None,
                 index: paraphrase_index.ParaphraseIndex | paraphrase_index.IndexBuild | None,
                 entries: Sequence[tuple[tuple[str, ...], tuple[str, ...]]] | None = None) -> None:
        self.jar = str(jar)
        self.res = load_resources(self.jar)
        self.table = table
        self.index = index
        self.entries = entries  # a fixed table (tests); else filtered from `index` per run
        self.last_table_entries: int | None = None
        self._build: paraphrase_index.IndexBuild | None = None  # a first run's index build, once waited for
        self.workers = max(1, min(2, os.cpu_count() or 1))  # as the jar path's JVMs

    def _tokens(self, lines: Sequence[str]) -> list[list[list[str]]]:
        nbp = self.res.nbp
        plain = paraphrase.PLAIN_PART.fullmatch
        memo: dict[str, list[str]] = {}  # only for the normaliser's parts: the others are cheaper to redo
        out = []
        for line in lines:
            seg = []
            for part in paraphrase.score_parts(line):
                if plain(part) and "DOTMULTI" not in part:  # `meteor_tokens`'s fast path, inlined
                    seg.append(part.lower().split())
                    continue
                toks = memo.get(part)
                if toks is None:
                    toks = memo[part] = paraphrase.meteor_tokens(part, nbp)
                seg.append(toks)
            out.append(seg)
        return out

    def _ngram_keys(self, token_lists: list[list[str]]) -> list[np.ndarray]:
        """The run's n-gram keys by length, up to the index's longest phrase; on the first run on
        a machine, whose index is still being built, up to the likely longest one (`_table_entries`
        keys any longer ones once the index says how long its phrases are)."""
        index = self.index
        if isinstance(index, paraphrase_index.IndexBuild):
            return paraphrase.ngram_key_groups(token_lists, paraphrase_index.LIKELY_MAX_N)
        assert index is not None
        return paraphrase.ngram_key_groups(token_lists, index.max_n)

    def _table_entries(self, token_lists: list[list[str]], groups: list[np.ndarray]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The table entries that can match among these words (waits for a first run's index)."""
        index = self.index
        if isinstance(index, paraphrase_index.IndexBuild):
            self._build = index
            index = self.index = index.result()
            if index.max_n >= len(groups):
                groups = paraphrase.ngram_key_groups(token_lists, index.max_n)
        assert index is not None
        return read_entries(index, index.keep(np.concatenate(groups[: index.max_n + 1])))

    def stats_of_lines(self, lines: Sequence[str]) -> np.ndarray:
        """Statistics for SCORE lines (`meteor.score_line`): the last part is the hypothesis.
        Everything that does not need the paraphrase table comes first: a first run's index is
        built meanwhile."""
        # a run makes millions of small lists and strings (its words) that reference counting
        # frees; the cycle collector's passes over them found nothing and took about 0.1 s of a
        # 5,000-image run (perf)
        with gc_paused():
            return self._stats_of_lines(lines)

    def _stats_of_lines(self, lines: Sequence[str]) -> np.ndarray:
        segments = self._tokens(lines)
        for n, seg in enumerate(segments):
            if not seg:
                raise ValueError(f"statement {n} has no hypothesis")
        native = meteor_native.use_native()
        from_index = self.entries is None and self.index is not None
        flat = [toks for seg in segments for toks in seg] if from_index else []
        groups = self._ngram_keys(flat) if from_index else []
        run = meteor_native.run_arguments(self.res, segments) if native else None
        if self.entries is not None:
            entries = self.entries
        elif self.index is not None:
            entries = self._table_entries(flat, groups)
        else:
            entries = []
        self.last_table_entries = len(entries)
        if run is not None:  # the same algorithm in C: no workers needed
            return meteor_native.native_stats(run.with_table(entries))
        aligner = Aligner(self.res, ParaphraseTrie(entries) if entries else None)
        k = self.workers if len(segments) >= PARALLEL_MIN_SEGMENTS else 1
        if k > 1 and "fork" in multiprocessing.get_all_start_methods():
            if self._build is not None:  # no fork while its thread writes the index files
                self._build.wait()
            return _parallel_stats(aligner, segments, k)
        return _segment_stats(aligner, segments)


# Below this many segments one process is faster than starting workers.
PARALLEL_MIN_SEGMENTS = 1000
_WORK: tuple[Aligner, list[list[list[str]]]] | None = None  # what forked workers inherit


def _segment_stats(aligner: Aligner, segments: Sequence[Sequence[Sequence[str]]]) -> np.ndarray:
    """The jar's statistics of each segment: of its first reference with the strictly highest
    score."""
    out = np.zeros((len(segments), METEOR_STATS), dtype=np.float64)
    for n, seg in enumerate(segments):
        hyp, refs = seg[-1], seg[:-1]
        best: list[float] | None = None
        best_score = -1.0
        for ref in refs:
            st = aligner.stats(hyp, ref)
            sc = segment_score(st)
            if sc > best_score:
                best, best_score = st, sc
        if best is not None:
            out[n] = best
    return out


def _work_slice(bounds: tuple[int, int]) -> np.ndarray:
    assert _WORK is not None
    aligner, segments = _WORK
    return _segment_stats(aligner, segments[bounds[0] : bounds[1]])


def _parallel_stats(aligner: Aligner, segments: list[list[list[str]]], k: int) -> np.ndarray:
    """Segments are independent: `k` forked processes take contiguous slices (the aligner and
    its data are inherited, not pickled)."""
    global _WORK
    n = len(segments)
    bounds = [(n * i // k, n * (i + 1) // k) for i in range(k)]
    _WORK = (aligner, segments)
    try:
        with multiprocessing.get_context("fork").Pool(k) as pool:
            parts = pool.map(_work_slice, bounds)
    finally:
        _WORK = None
    return np.concatenate(parts, axis=0)
