/*
 * _paraphrase_scan: the two passes over Meteor's paraphrase table that `paraphrase_table.py` and
 * `paraphrase_index.py` also have in numpy (which stays the oracle in the tests): keying every line
 * of the decompressed table, and picking the entries whose phrase and paraphrase keys are both
 * among a run's n-gram keys.
 *
 * Why C: the first METEOR run on a machine keys all 15.8 million lines (272 MB) of the table while
 * the caller prepares the run's words on the other core; numpy needs several passes and large
 * temporaries for it (most of a 4-second build), one pass here is a fraction of the table's
 * decompression. The keys must equal `paraphrase.span_keys` bit for bit (tested). The lines are read
 * off bit masks of 64 bytes at a time (`masks64`), not word by word: a loop over each line's words
 * ends at a branch the CPU cannot predict, once per line (every 17 bytes on average); keying the
 * whole table took 0.39 s that way against 0.25 s now (median of 7).
 *
 * One file, though over 400 lines: an extension module is one compilation unit, and both passes
 * share the key mixing that must equal `paraphrase.span_keys` bit for bit.
 *
 * Python API (buffers: C-contiguous, e.g. bytes or numpy arrays):
 *   scan_lines(text, first_line, starts, keys, suspects)
 *       -> (consumed, n_starts, n_keys, max_tokens, carriage_return, bad_utf8, n_suspects)
 *     Reads the complete lines of `text` (each ending in a newline) while the arrays have room;
 *     `consumed`: the bytes of the lines read (up to and including a newline). Line i of the table (i = first_line + i in text) is a
 *     probability when i % 3 == 0, else a phrase (1) or paraphrase (2). Writes, in order:
 *       starts   int64:  the byte offset (in text) of each probability line;
 *       keys     uint64: the key of each phrase and paraphrase line (paraphrase.span_keys);
 *       suspects int64:  for each phrase or paraphrase line that is not tokens joined by single
 *                        spaces (a tab or form feed, a leading, trailing or repeated blank), two
 *                        values: the position of its key in `keys` and the line's offset in text
 *                        (n_suspects pairs): the caller re-keys it as StringTokenizer reads it.
 *     A line that finds no room is left for the next call (suspects need two values per phrase or
 *     paraphrase line). max_tokens: the most tokens of a phrase or paraphrase line that is not
 *     suspect; carriage_return: whether a '\r' occurs (Java ends a line there too); bad_utf8: the
 *     offset of the first byte that is not strict UTF-8 (Python's decoder), or -1.
 *   matching_entries(key_blocks, run_keys) -> bytes of int64
 *     key_blocks: a sequence of uint64 arrays, one stream of keys split anywhere, two per entry
 *     (phrase key, paraphrase key); the indices of the entries whose two keys both occur in
 *     run_keys (any order, repeats allowed), ascending.
 * The GIL is released during both passes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BITS 40
static const uint64_t M1 = 0x9E3779B97F4A7C15ULL, M2 = 0xC2B2AE3D27D4EB4FULL, M3 = 0x165667B19E3779F9ULL,
                      FMIX = 0xFF51AFD7ED558CCDULL;

/* Little-endian whatever the machine: the numpy keys view the bytes as "<u8". */
static inline uint64_t load_le(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    for (size_t k = 0; k < n; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* paraphrase._span_key: the first 8 bytes (fewer for a short span), the last 8 bytes (only when the
 * span has at least 8), the length; mixed. */
static inline uint64_t load8(const uint8_t *p);
static inline uint64_t load_part(const uint8_t *p, size_t n, const uint8_t *end, uint64_t fill);

/* `end`: the end of the readable buffer (a short span's word is read whole where it fits). */
static inline uint64_t span_key(const uint8_t *s, size_t len, const uint8_t *end) {
    uint64_t first = len < 8 ? load_part(s, len, end, 0) : load8(s);
    uint64_t final = len < 8 ? 0 : load8(s + len - 8) * M2;
    uint64_t key = first * M1;
    key ^= (final >> 7) | (final << 57);
    key ^= (uint64_t)len * M3;
    key ^= key >> 33;
    key *= FMIX;
    key ^= key >> 29;
    return key >> (64 - KEY_BITS);
}

/* Length of the strict UTF-8 sequence at p (p < end, *p >= 0x80), or 0 when it is not one. */
static inline size_t utf8_sequence(const uint8_t *p, const uint8_t *end) {
    uint8_t c = p[0];
    size_t n;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;      /* overlong */
        else if (c == 0xED) hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;      /* overlong */
        else if (c == 0xF4) hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if ((size_t)(end - p) < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return n;
}

static inline int is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\f'; }

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define LOWS 0x7F7F7F7F7F7F7F7FULL

static inline uint64_t load8(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if PY_BIG_ENDIAN
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* 0x80 in each byte of w that equals the byte c (exact: no borrow crosses bytes). */
static inline uint64_t bytes_equal(uint64_t w, uint8_t c) {
    uint64_t x = w ^ (ONES * c);
    return ~(((x & LOWS) + LOWS) | x) & HIGHS;
}

/* The first n < 8 bytes of p as a word, the rest `fill`; reads 8 bytes where that stays before
 * `end`. */
static inline uint64_t load_part(const uint8_t *p, size_t n, const uint8_t *end, uint64_t fill) {
    if (n == 0) return fill;
    uint64_t keep = ((uint64_t)1 << (8 * n)) - 1;
    uint64_t w = p + 8 <= end ? load8(p) : load_le(p, n);
    return (w & keep) | (fill & ~keep);
}

static inline int ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    for (; !(x & 1); x >>= 1) n++;
    return n;
#endif
}

/* Sixty-four bytes at a time: a bit per byte for the newlines, the spaces, and the bytes that send
 * a line to the byte loop (>= 0x80, or a control character other than the newline). */
typedef struct {
    uint64_t nl, sp, odd;
} Masks;

static inline int popcount64(uint64_t x) { /* __builtin_popcountll is a libgcc call on baseline x86-64 */
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * ONES) >> 56);
}

/* VLBENCH_SCAN_PORTABLE: the tests build the portable masks on x86 too (they are what ARM runs). */
#if defined(__SSE2__) && !defined(VLBENCH_SCAN_PORTABLE)
#include <emmintrin.h>
static inline Masks masks64(const uint8_t *p) {
    const __m128i newline = _mm_set1_epi8('\n'), space = _mm_set1_epi8(' '), low = _mm_set1_epi8(0x20);
    Masks m = {0, 0, 0};
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        m.nl |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * i);
        m.sp |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, space)) << (16 * i);
        /* signed: bytes >= 0x80 are negative, so below 0x20 too */
        m.odd |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmplt_epi8(v, low)) << (16 * i);
    }
    m.odd &= ~m.nl;
    return m;
}
#else
/* A bit per byte from a `bytes_equal`-style mask (0x80 in a flagged byte): the multiply moves byte
 * k's flag to bit 56 + k, with no carries (every partial product lands on its own bit). */
static inline uint64_t gather_flags(uint64_t flags) { return ((flags >> 7) * 0x0102040810204080ULL) >> 56; }

static inline Masks masks64(const uint8_t *p) {
    Masks m = {0, 0, 0};
    for (int i = 0; i < 8; i++) {
        uint64_t w = load8(p + 8 * i);
        uint64_t nl = bytes_equal(w, '\n');
        m.nl |= gather_flags(nl) << (8 * i);
        m.sp |= gather_flags(bytes_equal(w, ' ')) << (8 * i);
        uint64_t odd = (w & HIGHS) | bytes_equal(w & (ONES * 0xE0), 0); /* >= 0x80, or < 0x20 */
        m.odd |= gather_flags(odd & ~nl) << (8 * i);
    }
    return m;
}
#endif

/* ------------------------------------------------------------------------------------------ */

static int get_buffer(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t itemsize, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (itemsize > 1 && view->len % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s must hold whole %zd-byte items", name, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

typedef struct {
    const uint8_t *text;
    Py_ssize_t len;
    long long first_line;
    int64_t *starts;
    Py_ssize_t starts_room;
    uint64_t *keys;
    Py_ssize_t keys_room;
    int64_t *suspects;
    Py_ssize_t suspects_room; /* int64 values */
    Py_ssize_t n_starts, n_keys, n_suspects; /* written so far */
    /* results */
    Py_ssize_t consumed;
    long long max_tokens;
    int carriage_return;
    Py_ssize_t bad_utf8;
} Scan;

/* One line by the byte loop: validation, flags, spaces. */
static void slow_line(Scan *s, Py_ssize_t start, Py_ssize_t end, long long *spaces, int *suspect) {
    const uint8_t *text = s->text;
    uint8_t prev = '\n';
    long long n = 0;
    int odd = 0;
    for (Py_ssize_t i = start; i < end;) {
        uint8_t c = text[i];
        if (c < 0x80) {
            if (c == ' ') {
                n++;
                if (is_blank(prev) || prev == '\n') odd = 1; /* repeated or leading */
            } else if (c == '\t' || c == '\f') {
                odd = 1;
            } else if (c == '\r') {
                s->carriage_return = 1;
            }
            prev = c;
            i++;
            continue;
        }
        size_t k = utf8_sequence(text + i, text + end);
        if (k == 0) {
            if (s->bad_utf8 < 0) s->bad_utf8 = i;
            k = 1;
        }
        prev = 0x80;
        i += (Py_ssize_t)k;
    }
    if (end > start && is_blank(prev)) odd = 1; /* trailing */
    *spaces = n;
    *suspect = odd;
}

/* Line `len` bytes at `line_start` (a newline follows it): recorded. 0 when there is no room for it
 * (the caller stops before it). */
static inline int take_line(Scan *s, Py_ssize_t line_start, size_t len, long long spaces, int odd, int repeated,
                            int role) {
    const uint8_t *p = s->text + line_start;
    if (role == 0 ? s->n_starts >= s->starts_room : s->n_keys >= s->keys_room) return 0;
    int suspect = repeated || (len > 0 && (p[0] == ' ' || p[len - 1] == ' '));
    if (odd) slow_line(s, line_start, line_start + (Py_ssize_t)len, &spaces, &suspect);
    if (role != 0 && suspect && 2 * s->n_suspects + 1 >= s->suspects_room) return 0;
    if (role == 0) {
        s->starts[s->n_starts++] = line_start;
    } else {
        s->keys[s->n_keys] = span_key(p, len, s->text + s->len);
        if (suspect) {
            s->suspects[2 * s->n_suspects] = s->n_keys;
            s->suspects[2 * s->n_suspects + 1] = line_start;
            s->n_suspects++;
        } else {
            long long tokens = len > 0 ? spaces + 1 : 0;
            if (tokens > s->max_tokens) s->max_tokens = tokens;
        }
        s->n_keys++;
    }
    return 1;
}

static void scan(Scan *s) {
    const uint8_t *text = s->text;
    const Py_ssize_t len = s->len;
    int role = (int)(s->first_line % 3);
    s->bad_utf8 = -1;
    s->max_tokens = 0;
    s->carriage_return = 0;
    s->n_starts = s->n_keys = s->n_suspects = 0;
    Py_ssize_t line_start = 0;
    /* the current line so far, in the chunks before this one */
    long long line_spaces = 0;
    uint64_t line_odd = 0, line_repeated = 0, space_before = 0;
    uint8_t tail[64];
    for (Py_ssize_t base = 0; base < len; base += 64) {
        Masks m;
        if (len - base >= 64) {
            m = masks64(text + base);
        } else { /* padding: neither a newline, a space nor odd */
            memset(tail, 'a', sizeof(tail));
            memcpy(tail, text + base, (size_t)(len - base));
            m = masks64(tail);
        }
        uint64_t repeated = m.sp & ((m.sp << 1) | space_before); /* a space after a space */
        space_before = m.sp >> 63;
        uint64_t from = ~0ULL; /* this chunk's bytes of the current line: from its start on */
        for (uint64_t nl = m.nl; nl; nl &= nl - 1) {
            int i = ctz64(nl);
            uint64_t in_line = from & (((uint64_t)1 << i) - 1);
            if (!take_line(s, line_start, (size_t)(base + i - line_start), line_spaces + popcount64(m.sp & in_line),
                           (line_odd | (m.odd & in_line)) != 0, (line_repeated | (repeated & in_line)) != 0, role))
                goto done;
            role = role == 2 ? 0 : role + 1;
            line_start = base + i + 1;
            line_spaces = 0;
            line_odd = line_repeated = 0;
            from = i == 63 ? 0 : ~0ULL << (i + 1);
        }
        line_spaces += popcount64(m.sp & from);
        line_odd |= m.odd & from;
        line_repeated |= repeated & from;
    }
done:
    s->consumed = line_start;
}

static PyObject *scan_lines(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_text, *o_starts, *o_keys, *o_suspects;
    Scan s;
    memset(&s, 0, sizeof(s));
    if (!PyArg_ParseTuple(args, "OLOOO:scan_lines", &o_text, &s.first_line, &o_starts, &o_keys, &o_suspects))
        return NULL;
    if (s.first_line < 0) {
        PyErr_SetString(PyExc_ValueError, "first_line must not be negative");
        return NULL;
    }
    Py_buffer text, starts, keys, suspects;
    if (get_buffer(o_text, &text, 0, 1, "text") < 0) return NULL;
    if (get_buffer(o_starts, &starts, 1, 8, "starts") < 0) {
        PyBuffer_Release(&text);
        return NULL;
    }
    if (get_buffer(o_keys, &keys, 1, 8, "keys") < 0) {
        PyBuffer_Release(&text);
        PyBuffer_Release(&starts);
        return NULL;
    }
    if (get_buffer(o_suspects, &suspects, 1, 8, "suspects") < 0) {
        PyBuffer_Release(&text);
        PyBuffer_Release(&starts);
        PyBuffer_Release(&keys);
        return NULL;
    }
    s.text = text.buf;
    s.len = text.len;
    s.starts = starts.buf;
    s.starts_room = starts.len / 8;
    s.keys = keys.buf;
    s.keys_room = keys.len / 8;
    s.suspects = suspects.buf;
    s.suspects_room = suspects.len / 8;
    Py_BEGIN_ALLOW_THREADS
    scan(&s);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&text);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&suspects);
    return Py_BuildValue("nnnLOnn", s.consumed, s.n_starts, s.n_keys, s.max_tokens,
                         s.carriage_return ? Py_True : Py_False, s.bad_utf8, s.n_suspects);
}

/* ------------------------------------------------------------------------------------------ */
/* matching_entries. A run has about a million distinct n-gram keys and the table ten million keys,
 * few of them shared: a Bloom filter of the run's keys that fits in the cache (two probes from
 * different bits of the already mixed key) drops almost every entry in one sequential pass; the
 * keys of the few candidate entries go into a small hash set, and one pass over the run's keys
 * marks those that really occur. (A hash set of all the run's keys would cost a cache miss per
 * key to build.) */

#define BLOOM_BITS 23

static inline uint64_t probe1(uint64_t key) { return key & ((1ULL << BLOOM_BITS) - 1); }
static inline uint64_t probe2(uint64_t key) { return (key >> (KEY_BITS - BLOOM_BITS)) & ((1ULL << BLOOM_BITS) - 1); }
static inline int bit(const uint8_t *bits, uint64_t b) { return bits[b >> 3] >> (b & 7) & 1; }
static inline uint64_t slot_of(uint64_t key) { return (key * M1) >> 20; }

typedef struct {
    uint64_t *slots; /* key + 1; 0 = empty */
    uint8_t *present;
    uint64_t mask;
} KeySet;

/* The slot of `key`: where it is, or the empty one where it would go. */
static inline uint64_t keyset_find(const KeySet *ks, uint64_t key) {
    uint64_t h = slot_of(key) & ks->mask;
    while (ks->slots[h] && ks->slots[h] != key + 1) h = (h + 1) & ks->mask;
    return h;
}

typedef struct {
    const uint64_t *keys;
    Py_ssize_t n;
} Block;

static inline int passes(const uint8_t *bloom, uint64_t key) {
    return bit(bloom, probe1(key)) && bit(bloom, probe2(key));
}

/* The blocks are one stream of keys, two per entry (an entry may straddle two blocks). */
static int match(const Block *blocks, Py_ssize_t n_blocks, const uint64_t *run, Py_ssize_t n_run, int64_t *out,
                 Py_ssize_t *n_out) {
    uint8_t *bloom = calloc((size_t)1 << (BLOOM_BITS - 3), 1);
    uint64_t *cand_keys = NULL;
    KeySet ks = {NULL, NULL, 0};
    int rc = -1;
    Py_ssize_t n_cand = 0, cand_cap = 0, e = 0;
    if (!bloom) goto done;
    for (Py_ssize_t k = 0; k < n_run; k++) {
        uint64_t b1 = probe1(run[k]), b2 = probe2(run[k]);
        bloom[b1 >> 3] |= (uint8_t)(1u << (b1 & 7));
        bloom[b2 >> 3] |= (uint8_t)(1u << (b2 & 7));
    }
    /* candidates: both keys pass the filter (their indices into `out`, which has room for every
     * entry; their keys into cand_keys) */
    int have_left = 0;
    uint64_t left = 0;
    for (Py_ssize_t b = 0; b < n_blocks; b++) {
        const uint64_t *keys = blocks[b].keys;
        for (Py_ssize_t k = 0; k < blocks[b].n; k++) {
            if (!have_left) {
                left = keys[k];
                have_left = 1;
                continue;
            }
            uint64_t right = keys[k];
            have_left = 0;
            if (passes(bloom, left) && passes(bloom, right)) {
                if (n_cand == cand_cap) {
                    cand_cap = cand_cap ? 2 * cand_cap : 4096;
                    uint64_t *grown = realloc(cand_keys, (size_t)cand_cap * 2 * sizeof(uint64_t));
                    if (!grown) goto done;
                    cand_keys = grown;
                }
                cand_keys[2 * n_cand] = left;
                cand_keys[2 * n_cand + 1] = right;
                out[n_cand++] = e;
            }
            e++;
        }
    }
    uint64_t cap = 64;
    while (cap < (uint64_t)n_cand * 4) cap <<= 1;
    ks.mask = cap - 1;
    ks.slots = calloc(cap, sizeof(uint64_t));
    ks.present = calloc(cap, 1);
    if (!ks.slots || !ks.present) goto done;
    for (Py_ssize_t k = 0; k < 2 * n_cand; k++) ks.slots[keyset_find(&ks, cand_keys[k])] = cand_keys[k] + 1;
    for (Py_ssize_t k = 0; k < n_run; k++) {
        uint64_t h = keyset_find(&ks, run[k]);
        if (ks.slots[h]) ks.present[h] = 1;
    }
    *n_out = 0;
    for (Py_ssize_t c = 0; c < n_cand; c++) {
        if (ks.present[keyset_find(&ks, cand_keys[2 * c])] && ks.present[keyset_find(&ks, cand_keys[2 * c + 1])])
            out[(*n_out)++] = out[c];
    }
    rc = 0;
done:
    free(bloom);
    free(cand_keys);
    free(ks.slots);
    free(ks.present);
    return rc;
}

static PyObject *matching_entries(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_blocks, *o_run;
    if (!PyArg_ParseTuple(args, "OO:matching_entries", &o_blocks, &o_run)) return NULL;
    PyObject *seq = PySequence_Fast(o_blocks, "keys must be a sequence of arrays");
    if (!seq) return NULL;
    Py_ssize_t n_blocks = PySequence_Fast_GET_SIZE(seq), n_views = 0, n_entries = 0, n_out = 0;
    Py_buffer *views = PyMem_Calloc((size_t)(n_blocks + 1), sizeof(Py_buffer));
    Block *blocks = PyMem_Calloc((size_t)(n_blocks + 1), sizeof(Block));
    Py_buffer run;
    int have_run = 0, failed = 0;
    int64_t *out = NULL;
    PyObject *result = NULL;
    if (!views || !blocks) {
        PyErr_NoMemory();
        goto done;
    }
    for (; n_views < n_blocks; n_views++) {
        if (get_buffer(PySequence_Fast_GET_ITEM(seq, n_views), &views[n_views], 0, 8, "keys") < 0) goto done;
        blocks[n_views].keys = views[n_views].buf;
        blocks[n_views].n = views[n_views].len / 8;
        n_entries += blocks[n_views].n;
    }
    if (n_entries % 2) {
        PyErr_SetString(PyExc_ValueError, "the key blocks must hold two keys per entry");
        goto done;
    }
    n_entries /= 2;
    if (get_buffer(o_run, &run, 0, 8, "run_keys") < 0) goto done;
    have_run = 1;
    out = malloc((size_t)(n_entries > 0 ? n_entries : 1) * sizeof(int64_t));
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    failed = match(blocks, n_blocks, run.buf, run.len / 8, out, &n_out) < 0;
    Py_END_ALLOW_THREADS
    if (failed) PyErr_NoMemory();
    else result = PyBytes_FromStringAndSize((const char *)out, n_out * (Py_ssize_t)sizeof(int64_t));
done:
    free(out);
    if (have_run) PyBuffer_Release(&run);
    for (Py_ssize_t k = 0; k < n_views; k++) PyBuffer_Release(&views[k]);
    PyMem_Free(views);
    PyMem_Free(blocks);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef METHODS[] = {
    {"scan_lines", scan_lines, METH_VARARGS,
     "scan_lines(text, first_line, starts, keys, suspects): key the complete lines of a paraphrase "
     "table block; see the module source."},
    {"matching_entries", matching_entries, METH_VARARGS,
     "matching_entries(keys, run_keys): indices (int64 bytes) of the entries whose phrase and "
     "paraphrase keys both occur in run_keys."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_paraphrase_scan",
    "Keying the lines of Meteor's paraphrase table and matching a run's n-gram keys, in C.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__paraphrase_scan(void) { return PyModule_Create(&MODULE); }
