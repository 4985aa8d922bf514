"""Meteor 1.5's aligner (`meteor-1.5.jar - - -stdio -l en -norm`) in Python: the 23 statistics of
a hypothesis against one reference, as the jar computes them, without Java.

Learnt from the jar's bytecode (`javap -c -p` on `edu/cmu/meteor/aligner/*` and
`edu/cmu/meteor/scorer/MeteorScorer`), then written here; the data files are read at run time from
the jar and the paraphrase table that pycocoevalcap installs. What the jar does, step by step:

* Words (`python_meteor.py`): each `|||` part of a SCORE line is trimmed, normalised
  (`paraphrase.normalize_line`), lower-cased and split on blanks (`paraphrase.meteor_tokens`);
  the last part is the hypothesis.
* Words are compared through Java's `String.hashCode()` (the aligner keeps only the hashes), so
  two different words with the same hash are an exact match to the jar; `resources.java_hash`
  reproduces it.
* Matchers, in the order exact, stem, synonym, paraphrase, each appending to the match list of the
  reference position where a match starts (reference positions outer, hypothesis positions inner):
  exact: equal hashes; stem: equal hashes of the Snowball English stems (the `snowballstemmer`
  package; equal to the jar's `englishStemmer` on WordNet's 153k words, tested) and different word
  hashes; synonym: the WordNet synsets of the words (plus those of their base forms from the
  exception list or the jar's suffix rules, `MeteorResources.synonym_sets`) share one, and different word hashes;
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
  one with the strictly highest score (`segment_score`, computed as `MeteorScorer.computeMetrics`
  does) wins (`python_meteor.py` and the C aligner, `native.py`, make that choice for a run).

The C extension `_meteor_align.c` does the same, bit for bit; this module stays its oracle.

One module, though long: the matchers, the beam search and the statistics are one algorithm read
off one bytecode, and their order of operations (which decides jar-equality) is only checkable
when read together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vlbench.tasks.captioning.meteor.resources import MeteorResources, java_hash
from vlbench.tasks.captioning.meteor.scores import (
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_DELTA,
    METEOR_GAMMA,
    METEOR_WEIGHTS,
)

BEAM_SIZE = 40  # MeteorConfiguration's default
EXACT, STEM, SYNONYM, PARAPHRASE = range(4)
# The weights the beam search counts matches with: MeteorScorer.loadConfiguration builds the
# aligner with the task's weights (1.0 0.6 0.8 0.6), then overwrites them with 1.0 for exact and
# 0.5 for every other module (updateModuleWeights); the score still uses the task's weights.
SEARCH_WEIGHTS = (1.0, 0.5, 0.5, 0.5)


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
