"""A per-run paraphrase table for Meteor 1.5: the entries of `paraphrase-en.gz` that can match
anything in this run's captions, so the JVM loads a few thousand entries instead of 5.27 million.

Why dropping the other entries changes nothing (read from the Meteor 1.5 bytecode: classes
`ParaphraseTransducer`, `ParaphraseMatcher`, `Aligner`, `MeteorScorer`, `Normalizer`):
- The table is read as line triples (probability, phrase, paraphrase); the probability line is read
  and discarded, and every paraphrase match gets the same fixed weight.
- Matching is by table membership only: for each position of one line of a segment, the phrases
  starting there are looked up in a trie, and a match is recorded where the paraphrase occurs in the
  other line (both directions). So an entry produces a match only if its phrase **and** its
  paraphrase occur, as contiguous token sequences, in the hypothesis or a reference of the segment.
  (An empty paraphrase "occurs" everywhere; an empty phrase is never looked up; both are kept.)
- The matches of an entry are appended in file order, and a filtered file keeps the relative order
  of the kept entries, so every match list, hence the beam search and the 23 statistics, is the
  same. Word ids differ between tables but are only compared for equality; words missing from the
  smaller table map to -1, which no table word has.
- The tokens are what `-norm` makes of each `|||`-separated part of a SCORE line:
  `Normalizer.normalizeLine(part.trim(), LANG_EN, keepPunctuation=true)`, then `toLowerCase()`,
  then `StringTokenizer` (splits on " \\t\\n\\r\\f"). `normalize_line` below reimplements it and is
  tested against the jar's own `edu.cmu.meteor.util.Normalizer` on adversarial strings.
- Lower-casing: Python's `str.lower` and Java's `toLowerCase` (English locale) can only differ on
  characters cased in one Unicode version and not the other, or by context rules (final sigma,
  dotted I) whose results (sigma, U+0307) do not occur in the table; the table's 86 distinct
  characters all have long-standing case mappings, so a caption token equals a table word under
  one lower-casing exactly when it does under the other.

The index (built once per paraphrase file, about 5-6 s on a loaded 2-core box, cached under the
vlbench data folder): the decompressed table, each entry's byte offset, and the 40-bit key of each
entry's phrase and paraphrase (`span_keys`: their first and last 8 UTF-8 bytes and byte length,
joined by single spaces, the table's own form; lines that are not in that form are keyed after
re-joining), with a Bloom filter of those keys. A run keys every n-gram (up to the longest table
phrase) of its normalised captions the same way, drops through the filter the keys that are surely
not table phrases, and looks up the rest; a key collision can only keep an extra entry.

One module, though long: the normaliser, the keys and the index decide together which table
entries can match this run's tokens (the keys must come from exactly the normaliser's tokens, the
index from exactly the keys); `meteor_python` reads its tokens from the same normaliser.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from vlbench.hashing import sha256_file
from vlbench.progress import stage

FORMAT = 3  # 2: span keys (first and last 8 bytes, length) instead of polynomial hashes; 3: a Bloom filter
# The index folders of earlier formats, by format: superseded once the current one is built.
_EARLIER_FOLDERS = {1: "index-{key}", 2: "index-v2-{key}"}
# The Meteor 1.5 jar that pycocoevalcap 1.2 ships: the argument above was checked on its bytecode,
# so the filtered table is only used with this exact jar.
METEOR_15_SHA256 = "1e57b4c72c0830ebe68558f1c799a624e96cbc1b6045c9f6330e26dcff6eafc2"

# --------------------------------------------------------------------------- normaliser (English)
# Character classes copied from the jar's constant pool (Normalizer 1.5).
_ALPHA = (
    "A-Za-z\u0160\u017d\u0161\u017e\u0178\xc0-\xd6\xd8-\xf6\xf8-\u017e\u0400-\u04ff\u0500-\u0527"
    "\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f"
)
_ALNUM = "0-9" + _ALPHA
_JAVA_SPACE = " \\t\\n\\x0b\\x0c\\r"  # java.util.regex \s (ASCII only by default)
_SEP_OTHER = re.compile(f"([^{_ALNUM}{_JAVA_SPACE}.'`,\\-\u2018\u2019])")
_MULTI_DOT = re.compile(r"\.([.]+)")
_MULTI_DOT2 = re.compile(r"DOTMULTI\.([^.])")
_COMMA = re.compile(r"([^0-9]),([^0-9])")  # \p{Digit} is [0-9] in java.util.regex
_COMMA2 = re.compile(r"([0-9]),([^0-9])")
_COMMA3 = re.compile(r"([^0-9]),([0-9])")
_QUOTE = re.compile("[`\u2018\u2019]")
_QUOTE2 = re.compile("[\u201c\u201d]|''")
_RM_DASH = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")
_CONT1 = re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])")
_CONT2 = re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])")
_CONT3 = re.compile(f"([{_ALPHA}])'([^{_ALPHA}])")
_CONT4 = re.compile(f"([{_ALPHA}])'([{_ALPHA}])")
_CONT5 = re.compile(r"([0-9])'([s])")
_NBP_ALPHA = re.compile(f"[{_ALPHA}]")
_LOWER_START = re.compile("[a-z]")  # ^[\p{Lower}]: ASCII
_DIGIT_START = re.compile("[0-9]")
_WHITE = re.compile("[ \u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\xa0]+")
_TOKEN_DELIMS = re.compile("[ \t\n\r\f]+")  # java.util.StringTokenizer's default delimiters


_JAVA_TRIMMED = "".join(map(chr, range(33)))


def java_trim(s: str) -> str:
    """String.trim(): strips every character <= U+0020 at both ends."""
    return s.strip(_JAVA_TRIMMED)


def string_tokens(s: str) -> list[str]:
    return [t for t in _TOKEN_DELIMS.split(s) if t]


@cache
def nonbreaking_prefixes(jar: str) -> dict[str, int]:
    """The jar's nonbreaking/english.prefixes: 1 = always nonbreaking, 2 = before a number only."""
    with zipfile.ZipFile(jar) as z:
        text = z.read("nonbreaking/english.prefixes").decode("utf-8")
    out: dict[str, int] = {}
    for line in re.split(r"\r\n|\r|\n", text):
        toks = string_tokens(line)
        if not toks or toks[0].startswith("#"):
            continue
        out[toks[0]] = 2 if len(toks) > 1 and toks[1] == "#NUMERIC_ONLY#" else 1
    return out


def normalize_line(line: str, nbp: dict[str, int]) -> str:
    """Normalizer.normalizeLine(line, LANG_EN, true) of Meteor 1.5, step by step. A step is skipped
    when the text lacks the character that every match of its pattern needs (it would change
    nothing): most captions have no dot, comma, quote or dash."""
    s = _SEP_OTHER.sub(r" \1 ", " " + line + " ")
    if ".." in s:
        s = _MULTI_DOT.sub(r" DOTMULTI\1", s)
    while "DOTMULTI." in s:
        s = _MULTI_DOT2.sub(r"DOTDOTMULTI \1", s)
        s = s.replace("DOTMULTI.", "DOTDOTMULTI")
    if "," in s:
        s = _COMMA.sub(r"\1 , \2", s)
        s = _COMMA2.sub(r"\1 , \2", s)
        s = _COMMA3.sub(r"\1 , \2", s)
    if "`" in s or "\u2018" in s or "\u2019" in s:
        s = _QUOTE.sub("'", s)
    if "''" in s or "\u201c" in s or "\u201d" in s:
        s = _QUOTE2.sub(' " ', s)
    if "-" in s or "\u2013" in s:
        s = s.replace("\u2013", "-").replace("--", "-")
        s = _RM_DASH.sub(r"\1 \2", s)
    if "'" in s:
        s = _CONT1.sub(r"\1 ' \2", s)
        s = _CONT2.sub(r"\1 ' \2", s)
        s = _CONT3.sub(r"\1 ' \2", s)
        s = _CONT4.sub(r"\1 '\2", s)
        s = _CONT5.sub(r"\1 '\2", s)
    words = string_tokens(s)
    if "." not in s:  # the loop below only changes words that end in a dot
        s = "".join(w + " " for w in words)
    else:
        parts: list[str] = []
        last = len(words) - 1
        for i, w in enumerate(words):
            if len(w) > 1 and w.endswith("."):
                pre = w[:-1]
                kind = nbp.get(pre)
                if "." in pre and _NBP_ALPHA.search(pre):
                    parts.append(w.replace(".", ""))
                elif kind == 1 or (i < last and _LOWER_START.match(words[i + 1])):  # noqa: SIM114 (the jar's branches)
                    parts.append(w)
                elif kind == 2 and i < last and _DIGIT_START.match(words[i + 1]):
                    parts.append(w)
                else:
                    parts.append(pre + " .")
            else:
                parts.append(w)
            parts.append(" ")
        s = "".join(parts)
    while "DOTDOTMULTI" in s:
        s = s.replace("DOTDOTMULTI", "DOTMULTI.")
    s = s.replace("DOTMULTI", ".")
    return java_trim(_WHITE.sub(" ", s))


def score_parts(line: str) -> list[str]:
    """The hypothesis and references the jar reads from one SCORE line: String.split("\\|\\|\\|")
    (trailing empty strings removed), every part after the first, trimmed. (A literal separator
    splits left to right without overlaps, as Java's regex split does here.)"""
    parts = line.split("|||")
    while parts and parts[-1] == "":
        parts.pop()
    return [p.strip(_JAVA_TRIMMED) for p in parts[1:]]


PLAIN_PART = re.compile("[A-Za-z0-9 ]*")


def meteor_tokens(text: str, nbp: dict[str, int]) -> list[str]:
    """The words Meteor aligns for one hypothesis or reference under `-norm`."""
    if PLAIN_PART.fullmatch(text) and "DOTMULTI" not in text:
        # Only ASCII letters, digits and spaces: no rule of the normaliser applies (each needs a
        # character outside this set: punctuation, a quote, a dash, a dot or a non-ASCII letter;
        # except the final un-escaping, which turns a literal "DOTMULTI" into "."), so it only
        # collapses the spaces. Most PTB-tokenized captions take this path.
        return text.lower().split()
    return string_tokens(normalize_line(text, nbp).lower())


# --------------------------------------------------------------------------- keys
# A phrase's key mixes its first 8 bytes, its last 8 bytes (zero where the phrase is shorter) and
# its byte length. Why not a hash of every byte: the first use on a machine keys all 10.5 million
# lines of the table (272 MB), and gathering 16 bytes per line costs a small fraction of reading
# every byte as uint64. Two different phrases share a key
# only when they agree on all three, which, like any hash collision, can only keep an extra entry
# (harmless: an entry matches only where its phrase and paraphrase occur).
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0x165667B19E3779F9)
_FMIX = np.uint64(0xFF51AFD7ED558CCD)
KEY_BITS = 40  # the index packs a key and a 24-bit line number into one uint64 to sort them
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _padded(buf: np.ndarray) -> np.ndarray:
    """`buf` with 8 zero bytes before and 16 after: every span's first and last 8 bytes are then
    one row of a strided view."""
    padded = np.zeros(len(buf) + 24, dtype=np.uint8)
    padded[8 : 8 + len(buf)] = buf
    return padded


def _padded_span_keys(padded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return _span_key(_first_bytes(padded, starts), _last_bytes(padded, ends), ends - starts)


def _first_bytes(padded: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The 8 bytes from each start (little-endian uint64), for `_padded` text."""
    rows = np.lib.stride_tricks.sliding_window_view(padded, 8)  # one row gather per position
    return np.ascontiguousarray(rows[starts + 8]).view("<u8").reshape(-1)


def _last_bytes(padded: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The 8 bytes before each end."""
    rows = np.lib.stride_tricks.sliding_window_view(padded, 8)
    return np.ascontiguousarray(rows[ends]).view("<u8").reshape(-1)


def _span_key(first: np.ndarray, last: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The key of spans from their `_first_bytes`, `_last_bytes` and byte lengths (the inputs
    are left unchanged)."""
    first = first & _LOW_BYTES[np.minimum(length, 8)]  # a span's own bytes only
    final = last * _M2
    final[length < 8] = 0  # the first bytes already hold all of a short span
    key = first * _M1
    key ^= (final >> np.uint64(7)) | (final << np.uint64(57))
    key ^= length.astype(np.uint64) * _M3
    key ^= key >> np.uint64(33)
    key *= _FMIX
    key ^= key >> np.uint64(29)
    return key >> np.uint64(64 - KEY_BITS)


def span_keys(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The KEY_BITS-bit key of every byte span buf[start:end] (uint8 `buf`; spans within it)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return np.zeros(0, dtype=np.uint64)
    return _padded_span_keys(_padded(buf), starts, ends)


def bytes_key(b: bytes) -> int:
    """The key of one phrase's bytes (as `span_keys` computes it)."""
    buf = np.frombuffer(b, dtype=np.uint8)
    return int(span_keys(buf, np.array([0]), np.array([len(b)]))[0])


def ngram_keys(token_lists: Iterable[Sequence[str]], max_n: int) -> np.ndarray:
    """Keys of every n-gram (n = 0..max_n) of each token list, joined by single spaces, as
    `bytes_key` computes them (unsorted, with repeats); vectorised over positions.

    The lists are keyed in their own text form: tokens joined by spaces, lists by newlines
    (Meteor's tokens never hold either: StringTokenizer split them off), so the token spans are
    read off the separators' positions, with no per-token Python work."""
    text = "\n".join(" ".join(toks) for toks in token_lists) + "\n"
    buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    newline = buf == 10
    sep = np.flatnonzero(newline | (buf == 32))
    starts = np.empty(len(sep), dtype=np.int64)
    starts[:1] = 0
    starts[1:] = sep[:-1] + 1
    token = sep > starts  # an empty list leaves an empty span between two newlines
    line = np.cumsum(newline[sep]) - newline[sep]  # the list each span belongs to
    tok_start, tok_end, tok_line = starts[token], sep[token], line[token]
    padded = _padded(buf)
    zero = np.zeros(1, dtype=np.int64)
    out = [_padded_span_keys(padded, zero, zero)]  # the empty phrase
    # every n-gram starts at a token's start and ends at a token's end: their bytes are read once
    first_bytes, last_bytes = _first_bytes(padded, tok_start), _last_bytes(padded, tok_end)
    n = len(tok_start)
    for k in range(max_n):
        if n - k <= 0:
            break
        first = np.flatnonzero(tok_line[: n - k] == tok_line[k:])  # k+1 tokens of one list
        out.append(_span_key(first_bytes[first], last_bytes[first + k], tok_end[first + k] - tok_start[first]))
    return np.concatenate(out)


# --------------------------------------------------------------------------- index
BLOOM_BITS = 26  # 2^26 bits (8 MiB); with two probes per key, about 0.6% false positives at 2.6M phrases


def _bloom_probes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two bit positions per key: its top and its bottom BLOOM_BITS bits (the keys are already
    well mixed)."""
    mask = np.uint64((1 << BLOOM_BITS) - 1)
    return keys >> np.uint64(KEY_BITS - BLOOM_BITS), keys & mask


def bloom_filter(keys: np.ndarray) -> np.ndarray:
    bits = np.zeros(1 << BLOOM_BITS, dtype=bool)
    for probe in _bloom_probes(keys):
        bits[probe] = True
    return np.packbits(bits, bitorder="little")


def bloom_contains(bloom: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """False where a key is surely not among the filter's keys."""
    out = np.ones(len(keys), dtype=bool)
    for probe in _bloom_probes(keys):
        out &= (bloom[probe >> np.uint64(3)] >> (probe & np.uint64(7)).astype(np.uint8)) & 1 == 1
    return out


def _sorted_distinct(keys: np.ndarray) -> np.ndarray:
    """np.unique by hand: numpy 2's np.unique imports numpy.ma (about 40 ms) on first use."""
    keys = np.sort(keys)
    if len(keys):
        keys = keys[np.concatenate([np.ones(1, dtype=bool), keys[1:] != keys[:-1]])]
    return keys


@dataclass
class ParaphraseIndex:
    root: Path
    phrases: np.ndarray  # sorted distinct phrase hashes (uint64)
    left: np.ndarray  # per entry: position of its phrase hash in `phrases` (int32)
    right: np.ndarray  # per entry: position of its paraphrase hash
    starts: np.ndarray  # per entry: byte offset of its triple in table.txt; one sentinel at the end
    max_n: int
    bloom: np.ndarray  # a Bloom filter of `phrases` (uint8 bits; `bloom_bits`)

    @classmethod
    def load(cls, root: Path) -> ParaphraseIndex:
        meta = json.loads((root / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            raise ValueError("index format changed")
        arr = {k: np.load(root / f"{k}.npy", mmap_mode="r") for k in ("phrases", "left", "right", "starts")}
        # read whole: every run touches most of their pages, and one read beats a page fault each
        for k in ("left", "right", "bloom"):
            arr[k] = np.load(root / f"{k}.npy")
        return cls(root, arr["phrases"], arr["left"], arr["right"], arr["starts"], int(meta["max_n"]), arr["bloom"])

    def keep(self, hashes: np.ndarray) -> np.ndarray:
        """Indices of the entries whose phrase and paraphrase hashes are both in `hashes` (any
        order, repeats allowed)."""
        present = np.zeros(len(self.phrases) + 1, dtype=bool)
        # A run has millions of n-gram keys and few are table phrases: the Bloom filter drops most
        # of them in one vectorised pass, so only the rest are sorted and searched.
        hashes = _sorted_distinct(hashes[bloom_contains(self.bloom, hashes)])
        pos = np.searchsorted(self.phrases, hashes)
        pos_c = np.minimum(pos, len(self.phrases) - 1)
        hit = self.phrases[pos_c] == hashes
        present[pos_c[hit]] = True
        return np.flatnonzero(present[self.left] & present[self.right])

    def write_subset(self, entries: np.ndarray, out: Path) -> None:
        """The kept entries' original line triples, in file order, gzipped (level 1)."""
        with open(self.root / "table.txt", "rb") as f:
            data = np.memmap(f, dtype=np.uint8, mode="r")
            starts = np.asarray(self.starts)
            chunks = [data[starts[e] : starts[e + 1]].tobytes() for e in entries.tolist()]
            del data
        with gzip.open(out, "wb", compresslevel=1) as g:
            g.write(b"".join(chunks))


_COMPRESSED_BLOCK = 1 << 21  # 2 MiB of gzip at a time: about 9 MiB of table text


def _block_line_keys(buf: np.ndarray, text: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Line ends, keys and token counts of the complete lines of one block (`buf` ends with a
    newline)."""
    nl = np.flatnonzero(buf == 10)
    line_start = np.concatenate([np.zeros(1, dtype=np.int64), nl[:-1] + 1])
    keys = span_keys(buf, line_start, nl)
    space = buf == 32
    spaces = np.add.reduceat(space.view(np.uint8), line_start, dtype=np.int32)  # per line
    n_tok = np.where(nl > line_start, spaces + 1, 0)
    # Lines that are not tokens joined by single spaces (leading, trailing or repeated delimiters,
    # tabs, form feeds) are re-joined the way StringTokenizer reads them. The shipped table has none.
    odd = (buf == 9) | (buf == 12)
    delim = space | odd
    nonempty = nl > line_start
    lead = nonempty & delim[np.minimum(line_start, len(buf) - 1)]
    trail = nonempty & delim[np.maximum(nl - 1, 0)]
    if odd.any() or (delim[:-1] & delim[1:]).any() or lead.any() or trail.any():
        odd[np.flatnonzero(delim[:-1] & delim[1:])] = True
        suspect = set(np.searchsorted(nl, np.flatnonzero(odd)).tolist())
        suspect.update(np.flatnonzero(lead | trail).tolist())
        for ln in sorted(suspect):
            toks = string_tokens(text[line_start[ln] : nl[ln]].decode("utf-8"))
            keys[ln] = bytes_key(" ".join(toks).encode("utf-8"))
            n_tok[ln] = len(toks)
    return nl, keys, n_tok


def _inflated_ahead(f: BinaryIO, inflate: Any) -> Iterator[tuple[bytes, bytes]]:
    """(compressed block, its decompressed bytes) of the file, in order, each block decompressed
    in a thread while the caller works on the one before (zlib releases the GIL: on two cores the
    first build overlaps gunzip with the keying)."""
    from concurrent.futures import ThreadPoolExecutor

    def step() -> tuple[bytes, bytes]:
        block = f.read(_COMPRESSED_BLOCK)
        return block, (inflate.decompress(block) if block else inflate.flush())

    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(step)
        while True:
            block, data = ahead.result()
            if block:
                ahead = pool.submit(step)
            yield block, data
            if not block:
                return


def build_index(table_gz: Path, root: Path) -> None:
    """Decompress the table into `root/table.txt` block by block, hash every phrase and paraphrase
    line, and write the index into `root` (a fresh folder; the caller renames it into place).
    Streaming keeps the memory to the per-line arrays (about 130 MB for the shipped table), not
    the whole decompressed text."""
    import codecs
    import zlib

    inflate = zlib.decompressobj(wbits=31)  # a gzip stream
    utf8 = codecs.getincrementaldecoder("utf-8")("strict")  # where this fails Java would read U+FFFD
    hash_parts: list[np.ndarray] = []
    start_parts: list[np.ndarray] = []
    max_n = 0
    carry = b""
    offset = 0  # byte offset of `carry` in the decompressed table
    lines = 0
    with open(table_gz, "rb") as f, open(root / "table.txt", "wb") as out:
        for block, data in _inflated_ahead(f, inflate):
            if block and not data:
                continue
            if data:
                utf8.decode(data)
                if b"\r" in data:
                    raise ValueError("the paraphrase table has carriage returns")  # Java ends lines there too
                out.write(data)
            text = carry + data
            end = text.rfind(b"\n") + 1
            if not block:
                if inflate.unused_data or not inflate.eof:
                    raise ValueError("the paraphrase table is not one complete gzip stream")
                utf8.decode(b"", final=True)
                if len(text) > end:  # no final newline: the last line ends the table
                    out.write(b"\n")
                    text += b"\n"
                    end = len(text)
            if end:
                buf = np.frombuffer(text, dtype=np.uint8, count=end)
                nl, h, n_tok = _block_line_keys(buf, text[:end])
                starts = offset + np.concatenate([np.zeros(1, dtype=np.int64), nl[:-1] + 1])
                # the block's lines by role: every third is a probability, the others a phrase or
                # a paraphrase
                probability = np.zeros(len(nl), dtype=bool)
                probability[(-lines) % 3 :: 3] = True
                phrase = ~probability
                hash_parts.append(h[phrase])
                if phrase.any():
                    max_n = max(max_n, int(n_tok[phrase].max()))
                start_parts.append(starts[probability])
                lines += len(nl)
                offset += end
                carry = text[end:]
            else:
                carry = text
            if not block:
                break
    if lines % 3:
        raise ValueError(f"the paraphrase table has {lines} lines, not a multiple of 3")
    hashes = np.concatenate(hash_parts) if hash_parts else np.zeros(0, dtype=np.uint64)
    del hash_parts
    n_entries = lines // 3
    # np.unique(return_inverse=True) by hand, with int32 ids, freeing as it goes (memory peak);
    # the order by one np.sort of key and line number packed together (faster than argsort)
    if len(hashes) < 1 << (64 - KEY_BITS):
        packed = hashes << np.uint64(64 - KEY_BITS)
        packed |= np.arange(len(hashes), dtype=np.uint64)
        del hashes
        packed.sort()
        order = (packed & np.uint64((1 << (64 - KEY_BITS)) - 1)).astype(np.int64)
        hashes = packed >> np.uint64(64 - KEY_BITS)
        del packed
    else:
        order = np.argsort(hashes)
        hashes = hashes[order]
    first = np.empty(len(hashes), dtype=bool)
    first[:1] = True
    np.not_equal(hashes[1:], hashes[:-1], out=first[1:])
    np.save(root / "phrases.npy", hashes[first])
    np.save(root / "bloom.npy", bloom_filter(hashes[first]))
    del hashes
    ids = np.cumsum(first, dtype=np.int32)
    ids -= 1
    del first
    inv = np.empty(len(ids), dtype=np.int32)
    inv[order] = ids
    del order, ids
    # the lines alternate phrase, paraphrase: left = phrases, right = paraphrases
    np.save(root / "left.npy", inv[0::2])
    np.save(root / "right.npy", inv[1::2])
    del inv
    starts_all = np.concatenate([*start_parts, np.array([offset], dtype=np.int64)])
    np.save(root / "starts.npy", starts_all)
    if not n_entries:
        max_n = 0
    meta = {"format": FORMAT, "entries": n_entries, "max_n": max_n, "table_bytes": offset}
    (root / "meta.json").write_text(json.dumps(meta))


def cache_root() -> Path:
    env = os.environ.get("VLBENCH_METEOR_CACHE")
    if env:
        return Path(env)
    data = os.environ.get("VLBENCH_DATA")
    return (Path(data) if data else Path.home() / ".cache" / "vlbench") / "meteor"


def _source_key(table_gz: Path, cache: Path) -> str:
    """sha256 and size of the table, with the sha256 remembered per (path, size, mtime)."""
    st = table_gz.stat()
    stamp = f"{table_gz.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo = cache / "sha256-memo.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    sha = known.get(stamp)
    if not isinstance(sha, str):
        sha = sha256_file(table_gz)
        known = {stamp: sha}
        try:
            cache.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".memo-{os.getpid()}")
            tmp.write_text(json.dumps(known))
            os.replace(tmp, memo)
        except OSError:
            pass
    return index_key(sha, st.st_size)


def index_key(sha256: str, size: int) -> str:
    return f"{sha256[:32]}-{size}"


def ensure_index(table_gz: Path, cache: Path | None = None) -> ParaphraseIndex:
    """The index of `table_gz`, built on first use (atomically: a temporary folder renamed)."""
    cache = cache or cache_root()
    key = _source_key(table_gz, cache)
    root = cache / f"index-v{FORMAT}-{key}"
    if not (root / "meta.json").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
        try:
            with stage("building the METEOR paraphrase index (once per machine)"):
                build_index(table_gz, tmp)
            try:
                os.rename(tmp, root)
            except OSError:
                if not (root / "meta.json").is_file():  # not a concurrent build that won
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        for fmt, folder in _EARLIER_FOLDERS.items():
            _remove_earlier_format(cache / folder.format(key=key), fmt)
    return ParaphraseIndex.load(root)


def _remove_earlier_format(old: Path, fmt: int) -> None:
    """The same table's index in an earlier format (about 360 MB), superseded: removed when it is
    one that vlbench wrote (its meta.json says that format, and it holds only vlbench's files);
    anything else is left alone."""
    try:
        meta = json.loads((old / "meta.json").read_text())
    except (OSError, ValueError):
        return
    names = {"meta.json", "table.txt", "phrases.npy", "left.npy", "right.npy", "starts.npy"}
    if isinstance(meta, dict) and meta.get("format") == fmt and {p.name for p in old.iterdir()} <= names:
        shutil.rmtree(old, ignore_errors=True)


def run_token_lists(lines: Iterable[str], jar: str) -> list[list[str]]:
    """Meteor's words for every hypothesis and reference of the given SCORE lines."""
    nbp = nonbreaking_prefixes(jar)
    out: list[list[str]] = []
    memo: dict[str, list[str]] = {}
    for line in lines:
        for part in score_parts(line):
            toks = memo.get(part)
            if toks is None:
                toks = memo[part] = meteor_tokens(part, nbp)
            out.append(toks)
    return out


def write_filtered_table(index: ParaphraseIndex, lines: Sequence[str], jar: str, out: Path) -> int:
    """Write the entries that can match in these SCORE lines to `out` (gzip); returns their count."""
    hashes = ngram_keys(run_token_lists(lines, jar), index.max_n)
    entries = index.keep(hashes)
    index.write_subset(entries, out)
    return len(entries)
