"""The caption corpus the metrics share: PTB-tokenized strings, written from the pycocoevalcap 1.2 specification
(`shared/reference/caption_metrics.md` §2), vectorised with numpy. One module per metric family
reads it: `bleu.py`, `cider.py`, `rouge.py`; `meteor/scores.py` turns METEOR statistics into scores.

Inputs: `cands[i]` is the tokenized candidate of image i, `refs[i]` its list of tokenized
references. BLEU and CIDEr split tokens on any whitespace (`str.split()`), ROUGE-L on a
single space (`str.split(" ")`, so "" is one empty token), exactly as the reference does.

Design (speed; pycocoevalcap builds Python dicts of n-gram tuples per caption): tokens are
interned once to integer ids, captions laid out image by image (image i's candidate, then its
references), and each caption labelled with a code `image << slot_bits | slot` (slot 0: the
candidate). Every n-gram order is then indexed by one `np.sort` of int64 keys
(n-gram id << code bits | code): equal keys are one caption's occurrences of one n-gram, and
the entries of one (n-gram, image) are adjacent with the candidate's first. BLEU's clipping,
CIDEr's document frequency and the candidate's weight under each reference n-gram are read off
neighbouring entries: no hashing, no searchsorted, no Python loop over captions or n-grams.
ROUGE-L sorts (token, code, offset) once to build the match masks of a bit-parallel LCS.
Sums run in another order than the reference's dict order, so floats can differ in the last
bits (tests hold them to 1e-9).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from vlbench.backports import strict_zip

MAX_N = 4
KEY_BITS = 63  # int64 sort keys stay non-negative


def bit_width(bound: int) -> int:
    """Bits needed for the integers 0..bound-1."""
    return max(1, (int(bound) - 1).bit_length())



# ---------------------------------------------------------------------------------------------
# n-gram indexing shared by BLEU and CIDEr


@dataclass
class NGrams:
    """Distinct (caption, n-gram) pairs with their counts, for one order n.

    `cap[k]`, `gram[k]`, `count[k]`: caption label (its code in a `Layout`), n-gram id (dense
    per order, numbered in sorted order), count in that caption; sorted by (gram, caption).
    `first_position[g]`, when asked for: where n-gram id g first occurs in the flat tokens (what
    `ngram_texts` reads its words from)."""

    cap: np.ndarray
    gram: np.ndarray
    count: np.ndarray
    n_grams: int
    first_position: np.ndarray | None = None


def sort_keys(keys: np.ndarray, bound: int, key_bits: int = KEY_BITS) -> tuple[np.ndarray, np.ndarray]:
    """(stable argsort, sorted keys) of non-negative int64 keys below `bound`.

    When a key and its index fit together in `key_bits` bits, one `np.sort` of
    (key << b | index) does it: the index breaks ties, so the order is stable, and numpy's
    vectorised integer sort is about 3x faster than `np.argsort` here. Otherwise a plain stable
    argsort."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    b = bit_width(n)
    if bit_width(bound) + b <= key_bits:
        packed = np.sort((keys << b) | np.arange(n, dtype=np.int64))
        return packed & ((1 << b) - 1), packed >> b
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def first_of_runs(*columns: np.ndarray) -> np.ndarray:
    """True where any column differs from the previous entry (and at entry 0)."""
    n = len(columns[0])
    first = np.empty(n, dtype=bool)
    if n:
        first[0] = True
        np.not_equal(columns[0][1:], columns[0][:-1], out=first[1:])
        for c in columns[1:]:
            first[1:] |= c[1:] != c[:-1]
    return first


def _dense_ranks(keys: np.ndarray, bound: int, key_bits: int) -> tuple[np.ndarray, int]:
    """Dense ranks (0..k-1, in key order) of int64 keys below `bound`, and k."""
    order, skeys = sort_keys(keys, bound, key_bits)
    first = first_of_runs(skeys)
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.cumsum(first) - 1
    return ranks, int(first.sum())


def index_ngram_ids(
    tok: np.ndarray,
    lengths: np.ndarray,
    v: int,
    max_n: int = MAX_N,
    labels: np.ndarray | None = None,
    key_bits: int = KEY_BITS,
    positions: bool = False,
) -> list[NGrams]:
    """Per order n = 1..max_n, the distinct (caption, n-gram) pairs and counts of every caption,
    from flat token ids (`tok`, ids < v), caption lengths and non-negative caption labels
    (default: the caption index; captions that share a label count as one caption, a document).
    `positions`: also where each n-gram first occurs (`NGrams.first_position`).

    The n-gram at position p is the integer G_n(p) = G_{n-1}(p) * v + tok[p + n - 1] while that
    fits beside the label in `key_bits`; past that, G_{n-1} is first replaced by its dense rank
    (fewer values than positions), so any n and v work (G_n itself is ranked if even that does
    not fit). (G_n << label bits | label) is sorted once per order; runs of equal keys are the
    (caption, n-gram) pairs."""
    total = len(tok)
    n_caps = len(lengths)
    labels = np.arange(n_caps, dtype=np.int64) if labels is None else labels.astype(np.int64, copy=False)
    label_bits = bit_width(int(labels.max(initial=0)) + 1)
    label_of = np.repeat(labels, lengths)
    # tokens left in the caption from each position (the n-gram at p exists if remaining >= n)
    remaining = np.repeat(lengths, lengths) - (
        np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    v = max(1, int(v))
    grams = tok.astype(np.int64, copy=True)
    bound = v
    out: list[NGrams] = []
    for n in range(1, max_n + 1):
        valid = None if n == 1 else remaining >= n
        if n > 1:
            if bit_width(bound * v) + label_bits > key_bits:
                # G * v would not fit beside the label: rank G first (cheaper than ranking G * v
                # later, since (G, position) still packs into one sortable int64)
                grams, bound = _dense_ranks(grams, bound, key_bits)
            m = max(total - (n - 1), 0)
            grams[:m] = grams[:m] * v + tok[n - 1 :]
            grams[m:] = 0  # no n-gram starts there (keeps every value below the bound)
            bound *= v
        if bit_width(bound) + label_bits > key_bits:
            ranks, bound = _dense_ranks(grams if valid is None else grams[valid], bound, key_bits)
            if valid is None:
                grams = ranks
            else:
                grams = np.zeros(total, dtype=np.int64)
                grams[valid] = ranks
        keys = (grams << label_bits) | label_of
        if valid is not None:
            keys = keys[valid]
        keys.sort()
        first = first_of_runs(keys)
        starts = np.flatnonzero(first)
        count = np.diff(np.append(starts, len(keys)))
        entry = keys[starts]
        gram = entry >> label_bits
        new_gram = first_of_runs(gram)
        dense = np.cumsum(new_gram) - 1
        first_position = None
        if positions:
            # each position's n-gram id: its value's rank among the distinct values (ascending)
            at = np.arange(total, dtype=np.int64) if valid is None else np.flatnonzero(valid)
            ids = np.searchsorted(gram[new_gram], grams[at])
            first_position = np.empty(int(new_gram.sum()), dtype=np.int64)
            first_position[ids[::-1]] = at[::-1]  # the last write wins: the first occurrence
        out.append(NGrams(cap=entry & ((1 << label_bits) - 1), gram=dense, count=count,
                          n_grams=int(new_gram.sum()), first_position=first_position))
    return out


def ngram_texts(captions: Sequence[str], lengths: np.ndarray, grams: NGrams, n: int) -> list[str]:
    """The text ("w1 w2 ...") of each n-gram id of one order `n`, indexed with positions, read
    from the captions the index was built on (their tokens split on whitespace, `lengths` of
    them each): what identifies an n-gram across indexes."""
    if grams.first_position is None:
        raise ValueError("the n-grams were indexed without positions (positions=True)")
    starts = np.cumsum(lengths) - lengths
    caption = np.searchsorted(starts, grams.first_position, side="right") - 1
    offset = grams.first_position - starts[caption]
    split: dict[int, list[str]] = {}
    out = []
    for c, o in zip(caption.tolist(), offset.tolist()):
        tokens = split.get(c)
        if tokens is None:
            tokens = split[c] = captions[c].split()
        out.append(" ".join(tokens[o : o + n]))
    return out


def token_ids(token_lists: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat token ids, lengths, vocabulary size); ids in order of first appearance."""
    flat = [w for toks in token_lists for w in toks]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(flat))}
    tok = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    return tok, lengths, len(vocab)


def word_ids(joined: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat token ids, tokens per line, vocabulary size) of a text whose lines hold tokens
    separated by single spaces (no other whitespace, as `_single_spaced` checks).

    Numpy over the UTF-8 bytes instead of a dict lookup per token (twice as fast): a token of at
    most 8 bytes is exactly the big-endian integer of its bytes (no NUL byte: UTF-8 text has one
    only for U+0000, and then the dict path is used); longer tokens go through a dict."""
    buf = joined.encode("utf-8")
    if b"\x00" in buf:
        tok, lengths, v = token_ids([line.split() for line in joined.split("\n")])
        return tok, lengths, v
    b = np.frombuffer(b"\n" + buf + b"\n" * 8, dtype=np.uint8)  # newline padding on both ends
    sep = (b == ord(" ")) | (b == ord("\n"))
    word = ~sep
    starts = np.flatnonzero(word[1:] & sep[:-1]) + 1
    ends = np.flatnonzero(word[:-1] & sep[1:]) + 1
    length = ends - starts
    # 8 bytes from every offset, read as big-endian integers (an overlapping strided view)
    eight = np.ndarray(shape=(len(b) - 7,), dtype=">u8", buffer=b, strides=(1,))
    short = length <= 8
    drop = (8 * (8 - np.minimum(length, 8))).astype(np.uint64)  # bytes past the token's end
    key = np.where(short, eight[starts].astype(np.uint64) >> drop, 0)
    order = np.argsort(key)
    first = first_of_runs(key[order])
    tok = np.empty(len(key), dtype=np.int64)
    tok[order] = np.cumsum(first) - 1
    v = int(first.sum())
    long_words = np.flatnonzero(~short)
    if len(long_words):
        # key 0 (no short token has it: they are non-empty, without NUL) stood for the long ones
        tok -= 1
        v -= 1
        vocab: dict[bytes, int] = {}
        raw = b.tobytes()
        spans = strict_zip(starts[long_words].tolist(), ends[long_words].tolist())
        ids = [vocab.setdefault(raw[s:e], len(vocab)) for s, e in spans]
        tok[long_words] = np.array(ids, dtype=np.int64) + v
        v += len(vocab)
    newlines = np.flatnonzero(b[1 : len(buf) + 1] == ord("\n")) + 1
    lengths = np.diff(np.concatenate(([0], np.searchsorted(starts, newlines), [len(starts)])))
    return tok, lengths, v


@dataclass
class Layout:
    """Captions in image-major order: image i's candidate, then its references in order.

    Caption c has the code `image << slot_bits | slot` (slot 0: the candidate, 1..: the
    references), increasing with c. References are numbered image by image, as `refs` lists
    them."""

    n_images: int
    slot_bits: int
    cap_code: np.ndarray  # per caption
    cand_cap: np.ndarray  # caption index of each image's candidate
    ref_cap: np.ndarray  # caption index of each reference
    ref_image: np.ndarray  # image of each reference
    code_ref: np.ndarray  # per code: reference index, -1 for a candidate or an unused code

    @classmethod
    def of(cls, refs_per_image: np.ndarray) -> Layout:
        n = len(refs_per_image)
        per = refs_per_image.astype(np.int64) + 1
        slot_bits = bit_width(int(per.max(initial=1)))
        cand_cap = np.cumsum(per) - per
        cap_image = np.repeat(np.arange(n, dtype=np.int64), per)
        slot = np.arange(len(cap_image), dtype=np.int64) - np.repeat(cand_cap, per)
        is_ref = slot > 0
        ref_cap = np.flatnonzero(is_ref)
        cap_code = (cap_image << slot_bits) | slot
        code_ref = np.full(n << slot_bits, -1, dtype=np.int64)
        code_ref[cap_code[ref_cap]] = np.arange(len(ref_cap), dtype=np.int64)
        return cls(n, slot_bits, cap_code, cand_cap, ref_cap, cap_image[ref_cap], code_ref)

    @property
    def n_codes(self) -> int:
        return self.n_images << self.slot_bits


def image_major(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
    flat: list[str] = []
    for c, rs in strict_zip(cands, refs):
        flat.append(c)
        flat.extend(rs)
    return flat


@dataclass
class Corpus:
    """Candidates and references of a scored set, indexed once for all the n-gram metrics."""

    n_images: int
    ref_image: np.ndarray  # image index of each reference (references in the order of `refs`)
    cand_len: np.ndarray
    ref_len: np.ndarray
    grams: list[NGrams]  # `cap` is the caption's code in `layout`
    layout: Layout

    # the flat token ids of all captions in layout order, for ROUGE-L's reuse
    tok: np.ndarray | None = None
    lengths: np.ndarray | None = None
    vocab_size: int = 0
    single_spaced: bool = False  # every caption is "" or tokens joined by single spaces
    captions: list[str] | None = None  # in layout order, kept with the n-grams' positions

    @classmethod
    def build(cls, cands: Sequence[str], refs: Sequence[Sequence[str]], ngram_positions: bool = False) -> Corpus:
        """`ngram_positions`: keep what `ngram_texts` needs (where each n-gram occurs)."""
        layout = Layout.of(np.fromiter(map(len, refs), dtype=np.int64, count=len(refs)))
        flat = image_major(cands, refs)
        joined = "\n".join(flat)
        single_spaced = joined.count("\n") == len(flat) - 1 and _single_spaced(joined)
        if single_spaced:
            tok, lengths, v = word_ids(joined)
        else:
            tok, lengths, v = token_ids([c.split() for c in flat])
        return cls(
            n_images=len(cands),
            ref_image=layout.ref_image,
            cand_len=lengths[layout.cand_cap],
            ref_len=lengths[layout.ref_cap],
            grams=index_ngram_ids(tok, lengths, v, labels=layout.cap_code, positions=ngram_positions),
            layout=layout,
            tok=tok,
            lengths=lengths,
            vocab_size=v,
            # then str.split(" ") gives the same tokens as str.split(), except "" -> [""]
            single_spaced=single_spaced,
            captions=flat if ngram_positions else None,
        )

    def ngram_texts(self, k: int) -> list[str]:
        """The text of each n-gram id of order k + 1 (a corpus built with `ngram_positions`)."""
        if self.captions is None:
            raise ValueError("the corpus was built without its n-grams' positions (ngram_positions=True)")
        assert self.lengths is not None
        return ngram_texts(self.captions, self.lengths, self.grams[k], k + 1)

    @cached_property
    def groups(self) -> list[_Groups]:
        """The (n-gram, image) grouping of every order, shared by BLEU and CIDEr."""
        return [_Groups.of(g, self.layout) for g in self.grams]

    def split(self, g: NGrams) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(candidate image, gram, count), (reference index, image, gram, count) of one order."""
        ref = self.layout.code_ref[g.cap]
        is_cand = ref < 0
        c = (g.cap[is_cand] >> self.layout.slot_bits, g.gram[is_cand], g.count[is_cand])
        r_idx = ref[~is_cand]
        r = (r_idx, self.ref_image[r_idx], g.gram[~is_cand], g.count[~is_cand])
        return c, r


_IRREGULAR_SPACE = re.compile(r"[^\S\n ]|  |^ | $", re.MULTILINE)
def _single_spaced(joined: str) -> bool:
    """No line of `joined` has a leading, trailing or double space, or other whitespace."""
    if joined.isascii():  # numpy over the bytes: several times faster than substring scans
        b = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        if len(b) == 0:
            return True
        space = b == ord(" ")
        sep = space | (b == ord("\n"))
        # str.split()'s other ASCII whitespace: \t \x0b \x0c \r and \x1c-\x1f
        other = ((b >= 0x09) & (b <= 0x0D) & (b != ord("\n"))) | ((b >= 0x1C) & (b <= 0x1F))
        return not (
            space[0] or space[-1] or other.any() or (space[1:] & sep[:-1]).any() or (space[:-1] & sep[1:]).any()
        )
    if "  " in joined or "\n " in joined or " \n" in joined or joined[:1] == " " or joined[-1:] == " ":
        return False
    return _IRREGULAR_SPACE.search(joined) is None


@dataclass
class _Groups:
    """One order's entries split into (n-gram, image) groups; the candidate's entry, when the
    candidate has the n-gram, is its group's first (codes are image-major, slot 0 first)."""

    image: np.ndarray  # per entry
    is_cand: np.ndarray  # per entry
    start: np.ndarray  # per entry: True at a group's first entry
    shared: np.ndarray  # reference entries whose group starts with a candidate entry (sorted)
    cand_of: np.ndarray  # per shared entry: that candidate entry

    @classmethod
    def of(cls, g: NGrams, layout: Layout) -> _Groups:
        image = g.cap >> layout.slot_bits
        is_cand = (g.cap & ((1 << layout.slot_bits) - 1)) == 0
        start = first_of_runs(g.gram, image)
        head = np.maximum.accumulate(np.where(start, np.arange(len(start), dtype=np.int64), 0))
        shared = np.flatnonzero(is_cand[head] & ~is_cand)
        return cls(image, is_cand, start, shared, head[shared])
