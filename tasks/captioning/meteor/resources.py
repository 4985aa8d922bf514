"""The jar's English word data, read from the Meteor 1.5 jar that pycocoevalcap ships: function
words (`function/english.words`), WordNet synsets and their exception list (`synonym/`), the
Snowball English stemmer (the jar's `englishStemmer`; the `snowballstemmer` package, equal to it
on WordNet's 153k words, tested), the normaliser's nonbreaking prefixes; and Java's
`String.hashCode()`, through which the jar compares words (two different words with the same
hash are an exact match to it).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.meteor import paraphrase

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
        for sfx, add in strict_zip(_SUFFIXES, _ADD):
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

def read_lines(data: bytes, encoding: str = "utf-8") -> list[str]:
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
        function_words = frozenset(read_lines(z.read("function/english.words")))
        exc = read_lines(z.read("synonym/english.exceptions"))
        syn = read_lines(z.read("synonym/english.synsets"))
    bases: dict[str, list[str]] = {}
    for k in range(0, len(exc) - 1, 2):
        for form in paraphrase.string_tokens(exc[k + 1]):
            bases.setdefault(form, []).append(exc[k])
    # the synset ids stay text until a word needs them (most of WordNet's words never occur)
    synsets = dict(zip(syn[0::2], syn[1::2]))
    return MeteorResources(function_words, synsets, bases, paraphrase.nonbreaking_prefixes(jar),
                           _stemmer())
