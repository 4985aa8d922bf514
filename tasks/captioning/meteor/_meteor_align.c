/*
 * _meteor_align: the per-segment work of `aligner.py` in C. For each segment (references, then
 * the hypothesis) it runs the Meteor 1.5 jar's matchers and beam search against every reference,
 * computes the 23 statistics and keeps those of the first reference with the strictly highest
 * score, bit for bit as `python_meteor._segment_stats` does (which stays the oracle in the tests).
 *
 * Words arrive as run-vocabulary ids (one id per distinct token string); what the jar compares is
 * given per id: Java hash code (exact matcher), hash code of the stem (stem matcher), sorted synset
 * ids (synonym matcher) and the function-word flag. Paraphrase words are compared as strings by the
 * jar, i.e. as ids here; table words absent from the run carry an id no token has (any value
 * outside [0, n_words) works).
 *
 * Floating point: the score that picks the best reference repeats `segment_score`'s operations in
 * its order; build with -ffp-contract=off and without fast-math, or a fused multiply-add could
 * change the last bit (setup.py passes the flags).
 *
 * Python API (all arrays C-contiguous buffers, e.g. numpy arrays):
 *   segment_stats(words, table, segments, params, out) -> None
 *     words    = (java_hash int32[V], stem_hash int32[V], function uint8[V],
 *                 synset_offsets int64[V+1], synset_ids int64[...] strictly ascending per word)
 *     table    = (phrase_offsets int64[E+1], phrase_ids int32[...],
 *                 paraphrase_offsets int64[E+1], paraphrase_ids int32[...])   in table order
 *     segments = (token_offsets int64[S+1], token_ids int32[...], segment_offsets int64[N+1]):
 *                 segment n is token sequences segment_offsets[n] .. segment_offsets[n+1]-1, the
 *                 last of them the hypothesis (at least one sequence per segment)
 *     params   = (alpha, beta, gamma, delta, w_exact, w_stem, w_synonym, w_paraphrase)
 *     out      = writable float64[N * 23]
 *   Raises ValueError on malformed arrays, RuntimeError where the Python aligner raises it (an
 *   alignment holding a paraphrase match of no reference words), MemoryError. The GIL is released
 *   while segments are aligned.
 *
 * One file, though long: an extension module is one compilation unit, and the matchers, the
 * search and the statistics are one algorithm whose order of operations is checked against
 * aligner.py side by side.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_STATS 23
#define BEAM_SIZE 40 /* MeteorConfiguration's default */
enum { EXACT, STEM, SYNONYM, PARAPHRASE };
/* The aligner counts matches with 1.0 for exact and 0.5 for every other module: MeteorScorer
 * overwrites the task's weights with these before aligning (the score uses the task's weights). */
static const double SEARCH_WEIGHTS[4] = {1.0, 0.5, 0.5, 0.5};

enum { OK = 0, ERR_NOMEM = 1, ERR_EMPTY_REF_MATCH = 2 };

/* ------------------------------------------------------------------------------------------ */
/* Inputs */

typedef struct {
    Py_ssize_t n_words;
    const int32_t *hash, *stem;
    const uint8_t *function;
    const int64_t *syn_off, *syn_ids;
    uint64_t *syn_sig; /* a 64-bit summary of each word's synsets: disjoint summaries, no shared synset */
    Py_ssize_t n_entries;
    const int64_t *phrase_off, *para_off;
    const int32_t *phrase_ids, *para_ids;
    const int64_t *tok_off, *seg_off;
    const int32_t *tok_ids;
    Py_ssize_t n_segments;
    double alpha, beta, gamma, delta, weights[4];
    double *out;
} Run;

/* ------------------------------------------------------------------------------------------ */
/* The paraphrase trie (the jar's ParaphraseTransducer): node -> child by word id in an
 * open-addressing table; each node lists the table entries whose phrase ends there, in table
 * order, so that a walk from a start position yields shorter phrases first, then table order. */

typedef struct {
    uint64_t *keys; /* (node << 32 | word), EMPTY_KEY where free */
    int32_t *child;
    size_t mask;
    int32_t n_nodes;
    int64_t *entry_off; /* n_nodes + 1 */
    int32_t *entries;
    int32_t *root_child; /* per word id: the root's child, -1 for none (most positions stop there) */
} Trie;

#define EMPTY_KEY UINT64_MAX

static inline size_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (size_t)x;
}

static inline uint64_t trie_key(int32_t node, int32_t word) {
    return ((uint64_t)(uint32_t)node << 32) | (uint32_t)word;
}

static inline int32_t trie_child(const Trie *t, int32_t node, int32_t word) {
    uint64_t key = trie_key(node, word);
    size_t h = mix64(key) & t->mask;
    while (t->keys[h] != EMPTY_KEY) {
        if (t->keys[h] == key) return t->child[h];
        h = (h + 1) & t->mask;
    }
    return -1;
}

static void trie_free(Trie *t) {
    free(t->keys);
    free(t->child);
    free(t->entry_off);
    free(t->entries);
    free(t->root_child);
    memset(t, 0, sizeof(*t));
}

static int trie_build(Trie *t, const Run *run) {
    Py_ssize_t E = run->n_entries;
    int64_t total = run->phrase_off[E] - run->phrase_off[0];
    size_t cap = 16;
    while (cap < (size_t)total * 2 + 2) cap <<= 1;
    int32_t *end_node = malloc(sizeof(int32_t) * (size_t)(E > 0 ? E : 1));
    t->keys = malloc(sizeof(uint64_t) * cap);
    t->child = malloc(sizeof(int32_t) * cap);
    if (!end_node || !t->keys || !t->child) goto nomem;
    memset(t->keys, 0xff, sizeof(uint64_t) * cap);
    t->mask = cap - 1;
    t->n_nodes = 1; /* the root */
    for (Py_ssize_t e = 0; e < E; e++) {
        int64_t a = run->phrase_off[e], b = run->phrase_off[e + 1];
        if (a == b) { /* the jar files an empty phrase at the root, where no lookup ever reads */
            end_node[e] = -1;
            continue;
        }
        int32_t node = 0;
        for (int64_t k = a; k < b; k++) {
            uint64_t key = trie_key(node, run->phrase_ids[k]);
            size_t h = mix64(key) & t->mask;
            while (t->keys[h] != EMPTY_KEY && t->keys[h] != key) h = (h + 1) & t->mask;
            if (t->keys[h] == EMPTY_KEY) {
                t->keys[h] = key;
                t->child[h] = t->n_nodes++;
            }
            node = t->child[h];
        }
        end_node[e] = node;
    }
    t->entry_off = calloc((size_t)t->n_nodes + 1, sizeof(int64_t));
    t->entries = malloc(sizeof(int32_t) * (size_t)(E > 0 ? E : 1));
    if (!t->entry_off || !t->entries) goto nomem;
    for (Py_ssize_t e = 0; e < E; e++)
        if (end_node[e] >= 0) t->entry_off[end_node[e] + 1]++;
    for (int32_t n = 0; n < t->n_nodes; n++) t->entry_off[n + 1] += t->entry_off[n];
    {
        int64_t *fill = malloc(sizeof(int64_t) * ((size_t)t->n_nodes + 1));
        if (!fill) goto nomem;
        memcpy(fill, t->entry_off, sizeof(int64_t) * ((size_t)t->n_nodes + 1));
        for (Py_ssize_t e = 0; e < E; e++)
            if (end_node[e] >= 0) t->entries[fill[end_node[e]]++] = (int32_t)e;
        free(fill);
    }
    t->root_child = malloc(sizeof(int32_t) * (size_t)(run->n_words > 0 ? run->n_words : 1));
    if (!t->root_child) goto nomem;
    for (Py_ssize_t v = 0; v < run->n_words; v++) t->root_child[v] = trie_child(t, 0, (int32_t)v);
    free(end_node);
    return OK;
nomem:
    free(end_node);
    trie_free(t);
    return ERR_NOMEM;
}

/* ------------------------------------------------------------------------------------------ */
/* Matches and partial alignments */

typedef struct {
    int32_t start, len, mstart, mlen, module; /* reference start/length, hypothesis start/length */
} Match;

/* A partial alignment; in the pool it is followed by int32 matches[n2] (index into the stage's
 * matches, -1 for none) and the used-word bitsets used1[words1], used2[words2] (any length). */
typedef struct {
    int64_t w1, w2, chunks, idx, last_end, distance;
    int64_t mark; /* the step that last kept it (the others of the previous step are freed) */
} Partial;

typedef struct {
    int64_t neg_weight, chunks, distance; /* the jar's ordering: more weighted words, fewer chunks, less distance */
    int32_t part;
} SortItem;

typedef struct {
    Match *found; /* in the matchers' order */
    size_t n_found, cap_found;
    Match *stage; /* `found` grouped by reference start, each group in the matchers' order */
    size_t cap_stage;
    int32_t *stage_off, *cov1, *cov2, *fill;
    int32_t *hash1, *stem1, *hash2, *stem2; /* the lines' hash codes, side by side for the matcher loops */
    size_t cap_n1, cap_n2;
    /* partial alignments */
    unsigned char *pool;
    size_t stride, n_slots, cap_slots;
    int32_t *free_slots;
    size_t n_free, cap_free;
    size_t words1, words2, match_bytes;
    int32_t *prev, *next;
    size_t cap_prev, cap_next;
    SortItem *items, *tmp;
    size_t cap_items;
    double stats[N_STATS], best[N_STATS];
} Work;

static int reserve(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return OK;
    size_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return ERR_NOMEM;
    *p = q;
    *cap = n;
    return OK;
}

static void work_free(Work *w) {
    free(w->found);
    free(w->stage);
    free(w->stage_off);
    free(w->cov1);
    free(w->cov2);
    free(w->fill);
    free(w->hash1);
    free(w->stem1);
    free(w->hash2);
    free(w->stem2);
    free(w->pool);
    free(w->free_slots);
    free(w->prev);
    free(w->next);
    free(w->items);
    free(w->tmp);
}

/* Per-position arrays for a hypothesis of n1 and a reference of n2 words. */
static int work_lengths(Work *w, int32_t n1, int32_t n2) {
    size_t need1 = (size_t)n1 + 1, need2 = (size_t)n2 + 1;
    int32_t **grow1[] = {&w->cov1, &w->hash1, &w->stem1};
    int32_t **grow2[] = {&w->cov2, &w->stage_off, &w->fill, &w->hash2, &w->stem2};
    if (need1 > w->cap_n1) {
        size_t cap = w->cap_n1 ? w->cap_n1 : 64;
        while (cap < need1) cap *= 2;
        for (size_t k = 0; k < sizeof(grow1) / sizeof(grow1[0]); k++) {
            int32_t *q = realloc(*grow1[k], cap * sizeof(int32_t));
            if (!q) return ERR_NOMEM; /* what was grown stays owned by w (work_free) */
            *grow1[k] = q;
        }
        w->cap_n1 = cap;
    }
    if (need2 > w->cap_n2) {
        size_t cap = w->cap_n2 ? w->cap_n2 : 64;
        while (cap < need2) cap *= 2;
        for (size_t k = 0; k < sizeof(grow2) / sizeof(grow2[0]); k++) {
            int32_t *q = realloc(*grow2[k], cap * sizeof(int32_t));
            if (!q) return ERR_NOMEM;
            *grow2[k] = q;
        }
        w->cap_n2 = cap;
    }
    return OK;
}

static inline Partial *part_at(const Work *w, int32_t k) {
    return (Partial *)(w->pool + (size_t)k * w->stride);
}
static inline int32_t *part_matches(Partial *p) { return (int32_t *)(p + 1); }
static inline uint64_t *part_used1(const Work *w, Partial *p) {
    return (uint64_t *)((unsigned char *)(p + 1) + w->match_bytes);
}
static inline uint64_t *part_used2(const Work *w, Partial *p) { return part_used1(w, p) + w->words1; }

/* A slot for a partial alignment; the pool may move, so callers re-derive pointers afterwards. */
static int part_alloc(Work *w, int32_t *slot) {
    if (w->n_free) {
        *slot = w->free_slots[--w->n_free];
        return OK;
    }
    if (w->n_slots == w->cap_slots) {
        size_t n = w->cap_slots ? w->cap_slots * 2 : 64;
        unsigned char *q = realloc(w->pool, n * w->stride);
        if (!q) return ERR_NOMEM;
        w->pool = q;
        w->cap_slots = n;
    }
    *slot = (int32_t)w->n_slots++;
    return OK;
}

static int part_release(Work *w, int32_t slot) {
    if (reserve((void **)&w->free_slots, &w->cap_free, w->n_free + 1, sizeof(int32_t))) return ERR_NOMEM;
    w->free_slots[w->n_free++] = slot;
    return OK;
}

static inline int bits_any(const uint64_t *b, int32_t start, int32_t len) {
    for (int32_t k = start; k < start + len; k++)
        if (b[k >> 6] >> (k & 63) & 1) return 1;
    return 0;
}
static inline void bits_set(uint64_t *b, int32_t start, int32_t len) {
    for (int32_t k = start; k < start + len; k++) b[k >> 6] |= (uint64_t)1 << (k & 63);
}

/* ------------------------------------------------------------------------------------------ */
/* Matchers (Aligner.matches) */

static inline int add_match(Work *w, int32_t start, int32_t len, int32_t mstart, int32_t mlen, int32_t module) {
    if (reserve((void **)&w->found, &w->cap_found, w->n_found + 1, sizeof(Match))) return ERR_NOMEM;
    Match *m = &w->found[w->n_found++];
    m->start = start;
    m->len = len;
    m->mstart = mstart;
    m->mlen = mlen;
    m->module = module;
    for (int32_t k = 0; k < mlen; k++) w->cov1[mstart + k]++;
    for (int32_t k = 0; k < len; k++) w->cov2[start + k]++;
    return OK;
}

static int share_synset(const Run *run, int32_t a, int32_t b) {
    if (!(run->syn_sig[a] & run->syn_sig[b])) return 0;
    const int64_t *x = run->syn_ids + run->syn_off[a], *xe = run->syn_ids + run->syn_off[a + 1];
    const int64_t *y = run->syn_ids + run->syn_off[b], *ye = run->syn_ids + run->syn_off[b + 1];
    while (x < xe && y < ye) {
        if (*x == *y) return 1;
        if (*x < *y) x++;
        else y++;
    }
    return 0;
}

/* Phrases of `from` starting at each position whose paraphrase occurs in `other`: the jar's
 * ParaphraseMatcher for one direction. `from_is_ref` says which side is the reference. */
static int paraphrase_pass(Work *w, const Run *run, const Trie *trie, const int32_t *from, int32_t n_from,
                           const int32_t *other, int32_t n_other, int from_is_ref) {
    for (int32_t j = 0; j < n_from; j++) {
        int32_t node = trie->root_child[from[j]]; /* token ids are word ids, checked on entry */
        for (int32_t k = j; node >= 0; node = ++k < n_from ? trie_child(trie, node, from[k]) : -1) {
            int32_t plen = k - j + 1; /* the phrase from[j..k] ends at `node` */
            for (int64_t q = trie->entry_off[node]; q < trie->entry_off[node + 1]; q++) {
                int32_t e = trie->entries[q];
                const int32_t *para = run->para_ids + run->para_off[e];
                int32_t pk = (int32_t)(run->para_off[e + 1] - run->para_off[e]);
                /* an empty paraphrase occurs at every position of the other line */
                int32_t last = pk ? n_other - pk : n_other - 1;
                for (int32_t i = 0; i <= last; i++) {
                    if (pk && memcmp(other + i, para, sizeof(int32_t) * (size_t)pk) != 0) continue;
                    int rc = from_is_ref ? add_match(w, j, plen, i, pk, PARAPHRASE)
                                         : add_match(w, i, pk, j, plen, PARAPHRASE);
                    if (rc) return rc;
                }
            }
        }
    }
    return OK;
}

/* Fills w->stage / stage_off (matches grouped by reference start) and the coverage counts. */
static int find_matches(Work *w, const Run *run, const Trie *trie, const int32_t *w1, int32_t n1,
                        const int32_t *w2, int32_t n2) {
    int32_t *h1 = w->hash1, *s1 = w->stem1, *h2 = w->hash2, *s2 = w->stem2;
    for (int32_t i = 0; i < n1; i++) {
        h1[i] = run->hash[w1[i]];
        s1[i] = run->stem[w1[i]];
    }
    for (int32_t j = 0; j < n2; j++) {
        h2[j] = run->hash[w2[j]];
        s2[j] = run->stem[w2[j]];
    }
    w->n_found = 0;
    memset(w->cov1, 0, sizeof(int32_t) * (size_t)n1);
    memset(w->cov2, 0, sizeof(int32_t) * (size_t)n2);
    /* Reference position outer, hypothesis position inner, module by module, as the jar loops. */
    for (int32_t j = 0; j < n2; j++)
        for (int32_t i = 0; i < n1; i++)
            if (h1[i] == h2[j] && add_match(w, j, 1, i, 1, EXACT)) return ERR_NOMEM;
    int same = n1 == n2;
    for (int32_t i = 0; same && i < n1; i++) same = h1[i] == h2[i];
    if (!same) { /* the jar runs only the exact matcher on lines of equal word hashes */
        for (int32_t j = 0; j < n2; j++)
            for (int32_t i = 0; i < n1; i++)
                if (s1[i] == s2[j] && h1[i] != h2[j] && add_match(w, j, 1, i, 1, STEM)) return ERR_NOMEM;
        for (int32_t j = 0; j < n2; j++) {
            if (run->syn_off[w2[j]] == run->syn_off[w2[j] + 1]) continue;
            for (int32_t i = 0; i < n1; i++)
                if (h1[i] != h2[j] && share_synset(run, w1[i], w2[j]) &&
                    add_match(w, j, 1, i, 1, SYNONYM))
                    return ERR_NOMEM;
        }
        if (trie->n_nodes > 1) {
            /* the reference side's pass runs to its end before the hypothesis side's */
            int rc = paraphrase_pass(w, run, trie, w2, n2, w1, n1, 1);
            if (!rc) rc = paraphrase_pass(w, run, trie, w1, n1, w2, n2, 0);
            if (rc) return rc;
        }
    }
    if (reserve((void **)&w->stage, &w->cap_stage, w->n_found + 1, sizeof(Match))) return ERR_NOMEM;
    memset(w->stage_off, 0, sizeof(int32_t) * ((size_t)n2 + 1));
    for (size_t k = 0; k < w->n_found; k++) w->stage_off[w->found[k].start + 1]++;
    for (int32_t j = 0; j < n2; j++) w->stage_off[j + 1] += w->stage_off[j];
    memcpy(w->fill, w->stage_off, sizeof(int32_t) * (size_t)n2);
    for (size_t k = 0; k < w->n_found; k++) w->stage[w->fill[w->found[k].start]++] = w->found[k];
    return OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The beam search (Aligner.align / resolve) */

static inline void count_match(Partial *p, const Match *m) {
    double wt = SEARCH_WEIGHTS[m->module];
    /* the jar: (int) (matches1 + matchLength * weight), truncated toward zero */
    p->w1 = (int64_t)((double)p->w1 + (double)m->mlen * wt);
    p->w2 = (int64_t)((double)p->w2 + (double)m->len * wt);
    if (p->last_end != -1 && m->mstart != p->last_end) p->chunks++;
    p->idx = m->start + m->len;
    p->last_end = m->mstart + m->mlen;
}

static inline int item_less(const SortItem *a, const SortItem *b) {
    if (a->neg_weight != b->neg_weight) return a->neg_weight < b->neg_weight;
    if (a->chunks != b->chunks) return a->chunks < b->chunks;
    return a->distance < b->distance;
}

/* A stable sort (Python's sorted keeps equal partial alignments in their previous order, and so
 * does the jar's Collections.sort). */
static void stable_sort(SortItem *a, SortItem *tmp, size_t n) {
    const size_t RUN = 16;
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            SortItem x = a[i];
            size_t j = i;
            while (j > lo && item_less(&x, &a[j - 1])) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
    }
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = item_less(&a[j], &a[i]) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof(SortItem));
    }
}

static int sort_list(Work *w, const int32_t *list, size_t n) {
    if (n > w->cap_items) {
        size_t cap = w->cap_items;
        if (reserve((void **)&w->items, &cap, n, sizeof(SortItem))) return ERR_NOMEM;
        SortItem *t = realloc(w->tmp, cap * sizeof(SortItem));
        if (!t) return ERR_NOMEM;
        w->tmp = t;
        w->cap_items = cap;
    }
    for (size_t k = 0; k < n; k++) {
        Partial *p = part_at(w, list[k]);
        w->items[k].neg_weight = -(p->w1 + p->w2);
        w->items[k].chunks = p->chunks;
        w->items[k].distance = p->distance;
        w->items[k].part = list[k];
    }
    stable_sort(w->items, w->tmp, n);
    return OK;
}

static int push_next(Work *w, size_t *n_next, int32_t slot) {
    if (reserve((void **)&w->next, &w->cap_next, *n_next + 1, sizeof(int32_t))) return ERR_NOMEM;
    w->next[(*n_next)++] = slot;
    return OK;
}

/* The best partial alignment's slot, in *best. `first` holds the fixed matches. */
static int resolve(Work *w, int32_t n2, int32_t first, int32_t *best) {
    size_t n_next = 0;
    int rc = push_next(w, &n_next, first);
    if (rc) return rc;
    for (int32_t i = 0; i <= n2; i++) {
        /* prev = the sorted list of the previous step */
        if ((rc = sort_list(w, w->next, n_next))) return rc;
        if ((rc = reserve((void **)&w->prev, &w->cap_prev, n_next, sizeof(int32_t)))) return rc;
        size_t n_prev = n_next;
        for (size_t k = 0; k < n_prev; k++) w->prev[k] = w->items[k].part;
        n_next = 0;
        size_t beam = n_prev < BEAM_SIZE ? n_prev : BEAM_SIZE;
        for (size_t b = 0; b < beam; b++) {
            int32_t ps = w->prev[b];
            Partial *p = part_at(w, ps);
            if (i == n2) {
                if (p->last_end != -1) p->chunks++;
                if ((rc = push_next(w, &n_next, ps))) return rc;
                continue;
            }
            if (part_used2(w, p)[i >> 6] >> (i & 63) & 1) {
                if (i < p->idx) {
                    if ((rc = push_next(w, &n_next, ps))) return rc;
                    continue;
                }
                int32_t mk = part_matches(p)[p->idx];
                if (mk < 0) continue; /* the jar drops such a partial alignment */
                const Match *m = &w->stage[mk];
                count_match(p, m);
                p->distance += llabs((long long)m->start - m->mstart);
                if ((rc = push_next(w, &n_next, ps))) return rc;
                continue;
            }
            for (int32_t mk = w->stage_off[i]; mk < w->stage_off[i + 1]; mk++) {
                const Match *m = &w->stage[mk];
                p = part_at(w, ps);
                if (bits_any(part_used2(w, p), m->start, m->len) || bits_any(part_used1(w, p), m->mstart, m->mlen))
                    continue;
                int32_t cs;
                if ((rc = part_alloc(w, &cs))) return rc;
                p = part_at(w, ps);
                Partial *c = part_at(w, cs);
                memcpy(c, p, w->stride);
                bits_set(part_used2(w, c), m->start, m->len);
                bits_set(part_used1(w, c), m->mstart, m->mlen);
                part_matches(c)[i] = mk;
                count_match(c, m);
                p->distance += llabs((long long)m->start - m->mstart); /* sic: the parent's, as the jar does */
                if ((rc = push_next(w, &n_next, cs))) return rc;
            }
            p = part_at(w, ps);
            if (p->last_end != -1) {
                p->chunks++;
                p->last_end = -1;
            }
            p->idx++;
            if ((rc = push_next(w, &n_next, ps))) return rc;
        }
        /* the jar: "skipping matches until possible to continue" */
        if (n_next == 0 && (rc = push_next(w, &n_next, w->prev[0]))) return rc;
        for (size_t k = 0; k < n_next; k++) part_at(w, w->next[k])->mark = i;
        for (size_t k = 0; k < n_prev; k++)
            if (part_at(w, w->prev[k])->mark != i && (rc = part_release(w, w->prev[k]))) return rc;
    }
    /* the first of the least (a stable sort's first element) */
    int32_t bs = w->next[0];
    SortItem bk = {0, 0, 0, 0};
    for (size_t k = 0; k < n_next; k++) {
        Partial *p = part_at(w, w->next[k]);
        SortItem it = {-(p->w1 + p->w2), p->chunks, p->distance, w->next[k]};
        if (k == 0 || item_less(&it, &bk)) {
            bk = it;
            bs = w->next[k];
        }
    }
    *best = bs;
    return OK;
}

/* The slot of the best alignment of hypothesis w1 against reference w2 (its matches in
 * part_matches), after find_matches. */
static int align(Work *w, int32_t n1, int32_t n2, int32_t *best) {
    w->words1 = ((size_t)n1 + 63) / 64;
    w->words2 = ((size_t)n2 + 63) / 64;
    w->match_bytes = ((size_t)n2 * sizeof(int32_t) + 7) & ~(size_t)7;
    size_t stride = sizeof(Partial) + w->match_bytes + (w->words1 + w->words2) * sizeof(uint64_t);
    if (stride != w->stride) { /* slots of another size: start the pool afresh */
        w->stride = stride;
        w->cap_slots = 0;
        free(w->pool);
        w->pool = NULL;
    }
    w->n_slots = 0;
    w->n_free = 0;
    int32_t fs;
    int rc = part_alloc(w, &fs);
    if (rc) return rc;
    Partial *first = part_at(w, fs);
    memset(first, 0, w->stride);
    first->last_end = -1;
    first->mark = -1;
    int32_t *fm = part_matches(first);
    for (int32_t j = 0; j < n2; j++) fm[j] = -1;
    /* A reference position with exactly one match, whose words are each covered by exactly one
     * match on both sides, is fixed before the search. */
    for (int32_t j = 0; j < n2; j++) {
        if (w->stage_off[j + 1] - w->stage_off[j] != 1) continue;
        const Match *m = &w->stage[w->stage_off[j]];
        int sole = 1;
        for (int32_t k = 0; sole && k < m->len; k++) sole = w->cov2[j + k] == 1;
        for (int32_t k = 0; sole && k < m->mlen; k++) sole = w->cov1[m->mstart + k] == 1;
        if (!sole) continue;
        fm[j] = w->stage_off[j];
        bits_set(part_used2(w, first), j, m->len);
        bits_set(part_used1(w, first), m->mstart, m->mlen);
    }
    int all_fixed = 1;
    for (int32_t j = 0; all_fixed && j < n2; j++) {
        int32_t cnt = w->stage_off[j + 1] - w->stage_off[j];
        all_fixed = cnt == 0 || (cnt == 1 && fm[j] == w->stage_off[j]);
    }
    if (all_fixed) { /* the search has a single path, which takes every match */
        *best = fs;
        return OK;
    }
    return resolve(w, n2, fs, best);
}

/* ------------------------------------------------------------------------------------------ */
/* Statistics and score (Aligner.stats, _count_and_chunks, segment_score) */

static int alignment_stats(Work *w, const Run *run, const int32_t *w1, int32_t n1, const int32_t *w2, int32_t n2,
                           const int32_t *matches) {
    double *s = w->stats;
    int64_t content1[4] = {0}, content2[4] = {0}, func1[4] = {0}, func2[4] = {0};
    int64_t f1 = 0, f2 = 0;
    for (int32_t i = 0; i < n1; i++) f1 += run->function[w1[i]] != 0;
    for (int32_t j = 0; j < n2; j++) f2 += run->function[w2[j]] != 0;
    for (int32_t j = 0; j < n2; j++) {
        if (matches[j] < 0) continue;
        const Match *m = &w->stage[matches[j]];
        for (int32_t k = 0; k < m->mlen; k++) {
            if (run->function[w1[m->mstart + k]]) func1[m->module]++;
            else content1[m->module]++;
        }
        for (int32_t k = 0; k < m->len; k++) {
            if (run->function[w2[m->start + k]]) func2[m->module]++;
            else content2[m->module]++;
        }
    }
    /* matched words and chunks, walking the alignment as the jar does (jumping over each match) */
    int64_t count1 = 0, count2 = 0, chunks = 0, last_end = -1;
    int32_t i = 0;
    while (i < n2) {
        if (matches[i] < 0) {
            if (last_end != -1) {
                chunks++;
                last_end = -1;
            }
            i++;
            continue;
        }
        const Match *m = &w->stage[matches[i]];
        count1 += m->mlen;
        count2 += m->len;
        if (last_end != -1 && m->mstart != last_end) chunks++;
        if (m->len == 0) return ERR_EMPTY_REF_MATCH; /* the jar would loop forever */
        i = m->start + m->len;
        last_end = m->mstart + m->mlen;
    }
    if (last_end != -1) chunks++;
    s[0] = (double)n1;
    s[1] = (double)n2;
    s[2] = (double)f1;
    s[3] = (double)f2;
    for (int k = 0; k < 4; k++) {
        s[4 + 4 * k] = (double)content1[k];
        s[5 + 4 * k] = (double)content2[k];
        s[6 + 4 * k] = (double)func1[k];
        s[7 + 4 * k] = (double)func2[k];
    }
    s[20] = (double)chunks;
    s[21] = (double)count1;
    s[22] = (double)count2;
    return OK;
}

/* Python's a / b where segment_score catches ZeroDivisionError. */
static inline double py_div(double a, double b) {
    if (b == 0.0) return a == 0.0 ? NAN : copysign(INFINITY, a);
    return a / b;
}

/* Java's double division. */
static inline double java_div(double a, double b) {
    if (b == 0.0) {
        if (a == 0.0 || isnan(a)) return NAN;
        return copysign(INFINITY, a) * copysign(1.0, b);
    }
    return a / b;
}

static inline double java_pow(double a, double b) {
    if (isnan(a)) return NAN;
    if (isinf(a)) return INFINITY;
    return pow(a, b);
}

/* MeteorScorer.computeMetrics's score, in segment_score's order of operations. */
static double segment_score(const Run *run, const double *s) {
    double d = run->delta;
    double t_wl = d * (s[0] - s[2]) + (1.0 - d) * s[2];
    double r_wl = d * (s[1] - s[3]) + (1.0 - d) * s[3];
    double t_wm = 0.0, r_wm = 0.0;
    for (int k = 0; k < 4; k++) t_wm += s[4 + 4 * k] * run->weights[k] * d;
    for (int k = 0; k < 4; k++) r_wm += s[5 + 4 * k] * run->weights[k] * d;
    for (int k = 0; k < 4; k++) t_wm += s[6 + 4 * k] * run->weights[k] * (1.0 - d);
    for (int k = 0; k < 4; k++) r_wm += s[7 + 4 * k] * run->weights[k] * (1.0 - d);
    double p = py_div(t_wm, t_wl);
    double r = py_div(r_wm, r_wl);
    double fmean = java_div(1.0, java_div(1.0 - run->alpha, p) + java_div(run->alpha, r));
    double t_total = 0.0, r_total = 0.0;
    for (int k = 0; k < 4; k++) t_total += s[4 + 4 * k] + s[6 + 4 * k];
    for (int k = 0; k < 4; k++) r_total += s[5 + 4 * k] + s[7 + 4 * k];
    double frag;
    if (t_total == s[0] && r_total == s[1] && s[20] == 1.0) frag = 0.0;
    else frag = java_div(s[20], (s[21] + s[22]) / 2.0);
    double penalty = run->gamma * java_pow(frag, run->beta);
    double score = fmean * (1.0 - penalty);
    if (isnan(score)) return 0.0;
    return 0.0 > score ? 0.0 : score; /* Python's max(score, 0.0) */
}

/* ------------------------------------------------------------------------------------------ */

static int run_all(const Run *run) {
    Trie trie;
    memset(&trie, 0, sizeof(trie));
    Work w;
    memset(&w, 0, sizeof(w));
    int rc = trie_build(&trie, run);
    if (rc) return rc;
    for (Py_ssize_t n = 0; n < run->n_segments && !rc; n++) {
        int64_t first_seq = run->seg_off[n], hyp_seq = run->seg_off[n + 1] - 1;
        const int32_t *w1 = run->tok_ids + run->tok_off[hyp_seq];
        int32_t n1 = (int32_t)(run->tok_off[hyp_seq + 1] - run->tok_off[hyp_seq]);
        double best_score = -1.0;
        int have_best = 0;
        for (int64_t r = first_seq; r < hyp_seq && !rc; r++) {
            const int32_t *w2 = run->tok_ids + run->tok_off[r];
            int32_t n2 = (int32_t)(run->tok_off[r + 1] - run->tok_off[r]);
            if ((rc = work_lengths(&w, n1, n2))) break;
            if ((rc = find_matches(&w, run, &trie, w1, n1, w2, n2))) break;
            int32_t bs;
            if ((rc = align(&w, n1, n2, &bs))) break;
            if ((rc = alignment_stats(&w, run, w1, n1, w2, n2, part_matches(part_at(&w, bs))))) break;
            double sc = segment_score(run, w.stats);
            if (sc > best_score) {
                best_score = sc;
                memcpy(w.best, w.stats, sizeof(w.best));
                have_best = 1;
            }
        }
        if (rc) break;
        double *out = run->out + (size_t)n * N_STATS;
        if (have_best) memcpy(out, w.best, sizeof(w.best));
        else memset(out, 0, sizeof(double) * N_STATS); /* a hypothesis without references */
    }
    work_free(&w);
    trie_free(&trie);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Argument checking: arrays from Python are untrusted; nothing is read out of bounds. */

enum { I32, I64, U8, F64 };

static int format_is(const Py_buffer *v, int kind) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || (*f == '<' && PY_LITTLE_ENDIAN)) f++;
    if (!f[0] || f[1]) return 0;
    switch (kind) {
    case I32: return v->itemsize == 4 && (*f == 'i' || *f == 'l');
    case I64: return v->itemsize == 8 && (*f == 'l' || *f == 'q');
    case U8: return v->itemsize == 1 && (*f == 'B' || *f == 'b' || *f == '?');
    default: return v->itemsize == 8 && *f == 'd';
    }
}

static const char *KIND_NAMES[] = {"int32", "int64", "uint8", "float64"};

typedef struct {
    Py_buffer views[13];
    int n;
} Views;

static void views_release(Views *vs) {
    for (int k = 0; k < vs->n; k++) PyBuffer_Release(&vs->views[k]);
    vs->n = 0;
}

/* The buffer's items; its length in *n. NULL with ValueError/TypeError set on failure. */
static const void *get_array(Views *vs, PyObject *obj, int kind, int writable, const char *name, Py_ssize_t *n) {
    Py_buffer *v = &vs->views[vs->n];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return NULL;
    vs->n++;
    if (!format_is(v, kind)) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous %s array (got format %s, item size %zd)", name,
                     KIND_NAMES[kind], v->format ? v->format : "B", v->itemsize);
        return NULL;
    }
    *n = v->len / v->itemsize;
    return v->buf;
}

/* offsets[0..n_off-1] non-decreasing from 0 to at most `limit`. */
static int check_offsets(const int64_t *off, Py_ssize_t n_off, int64_t limit, const char *name) {
    if (n_off < 1 || off[0] != 0) {
        PyErr_Format(PyExc_ValueError, "%s must start at 0", name);
        return -1;
    }
    for (Py_ssize_t k = 1; k < n_off; k++) {
        if (off[k] < off[k - 1]) {
            PyErr_Format(PyExc_ValueError, "%s must not decrease (at %zd)", name, k);
            return -1;
        }
    }
    if (off[n_off - 1] > limit) {
        PyErr_Format(PyExc_ValueError, "%s end past their array (%lld > %lld)", name, (long long)off[n_off - 1],
                     (long long)limit);
        return -1;
    }
    return 0;
}

static int check_run(Run *run, Py_ssize_t n_stem, Py_ssize_t n_func, Py_ssize_t n_syn_off, Py_ssize_t n_syn,
                     Py_ssize_t n_para_off, Py_ssize_t n_phrase, Py_ssize_t n_para, Py_ssize_t n_tok_off,
                     Py_ssize_t n_tok, Py_ssize_t n_seg_off, Py_ssize_t n_out) {
    Py_ssize_t V = run->n_words;
    if (n_stem != V || n_func != V || n_syn_off != V + 1) {
        PyErr_SetString(PyExc_ValueError, "the word arrays must have one item per word (synset offsets: one more)");
        return -1;
    }
    if (check_offsets(run->syn_off, n_syn_off, n_syn, "synset offsets")) return -1;
    for (Py_ssize_t v = 0; v < V; v++) {
        for (int64_t k = run->syn_off[v] + 1; k < run->syn_off[v + 1]; k++) {
            if (run->syn_ids[k] <= run->syn_ids[k - 1]) {
                PyErr_Format(PyExc_ValueError, "the synset ids of word %zd are not strictly ascending", v);
                return -1;
            }
        }
    }
    if (n_para_off != run->n_entries + 1) {
        PyErr_SetString(PyExc_ValueError, "phrase and paraphrase offsets must have the same length");
        return -1;
    }
    if (run->n_entries >= INT32_MAX || n_phrase >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "the paraphrase table is too large");
        return -1;
    }
    if (check_offsets(run->phrase_off, run->n_entries + 1, n_phrase, "phrase offsets") ||
        check_offsets(run->para_off, n_para_off, n_para, "paraphrase offsets"))
        return -1;
    if (check_offsets(run->tok_off, n_tok_off, n_tok, "token offsets")) return -1;
    for (Py_ssize_t k = 1; k < n_tok_off; k++) {
        if (run->tok_off[k] - run->tok_off[k - 1] >= INT32_MAX / 2) {
            PyErr_SetString(PyExc_ValueError, "a token sequence is too long");
            return -1;
        }
    }
    for (Py_ssize_t k = 0; k < n_tok; k++) {
        if (run->tok_ids[k] < 0 || run->tok_ids[k] >= V) {
            PyErr_Format(PyExc_ValueError, "token id %d (at %zd) is not a word id (0 to %zd)", run->tok_ids[k], k,
                         V - 1);
            return -1;
        }
    }
    if (check_offsets(run->seg_off, n_seg_off, n_tok_off - 1, "segment offsets")) return -1;
    run->n_segments = n_seg_off - 1;
    for (Py_ssize_t n = 0; n < run->n_segments; n++) {
        if (run->seg_off[n + 1] == run->seg_off[n]) {
            PyErr_Format(PyExc_ValueError, "segment %zd has no hypothesis", n);
            return -1;
        }
    }
    if (n_out != run->n_segments * N_STATS) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd float64 values (23 per segment), not %zd",
                     run->n_segments * N_STATS, n_out);
        return -1;
    }
    return 0;
}

static PyObject *segment_stats(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_hash, *o_stem, *o_func, *o_syn_off, *o_syn, *o_phrase_off, *o_phrase, *o_para_off, *o_para;
    PyObject *o_tok_off, *o_tok, *o_seg_off, *o_out;
    Run run;
    memset(&run, 0, sizeof(run));
    if (!PyArg_ParseTuple(args, "(OOOOO)(OOOO)(OOO)(dddddddd)O:segment_stats", &o_hash, &o_stem, &o_func, &o_syn_off,
                          &o_syn, &o_phrase_off, &o_phrase, &o_para_off, &o_para, &o_tok_off, &o_tok, &o_seg_off,
                          &run.alpha, &run.beta, &run.gamma, &run.delta, &run.weights[0], &run.weights[1],
                          &run.weights[2], &run.weights[3], &o_out))
        return NULL;
    Views vs = {.n = 0};
    Py_ssize_t n_stem, n_func, n_syn_off, n_syn, n_phrase_off, n_phrase, n_para_off, n_para, n_tok_off, n_tok,
        n_seg_off, n_out;
    PyObject *result = NULL;
    if (!(run.hash = get_array(&vs, o_hash, I32, 0, "java_hash", &run.n_words)) ||
        !(run.stem = get_array(&vs, o_stem, I32, 0, "stem_hash", &n_stem)) ||
        !(run.function = get_array(&vs, o_func, U8, 0, "function", &n_func)) ||
        !(run.syn_off = get_array(&vs, o_syn_off, I64, 0, "synset_offsets", &n_syn_off)) ||
        !(run.syn_ids = get_array(&vs, o_syn, I64, 0, "synset_ids", &n_syn)) ||
        !(run.phrase_off = get_array(&vs, o_phrase_off, I64, 0, "phrase_offsets", &n_phrase_off)) ||
        !(run.phrase_ids = get_array(&vs, o_phrase, I32, 0, "phrase_ids", &n_phrase)) ||
        !(run.para_off = get_array(&vs, o_para_off, I64, 0, "paraphrase_offsets", &n_para_off)) ||
        !(run.para_ids = get_array(&vs, o_para, I32, 0, "paraphrase_ids", &n_para)) ||
        !(run.tok_off = get_array(&vs, o_tok_off, I64, 0, "token_offsets", &n_tok_off)) ||
        !(run.tok_ids = get_array(&vs, o_tok, I32, 0, "token_ids", &n_tok)) ||
        !(run.seg_off = get_array(&vs, o_seg_off, I64, 0, "segment_offsets", &n_seg_off)) ||
        !(run.out = (double *)get_array(&vs, o_out, F64, 1, "out", &n_out)))
        goto done;
    run.n_entries = n_phrase_off - 1;
    if (check_run(&run, n_stem, n_func, n_syn_off, n_syn, n_para_off, n_phrase, n_para, n_tok_off, n_tok, n_seg_off,
                  n_out))
        goto done;
    run.syn_sig = calloc((size_t)(run.n_words > 0 ? run.n_words : 1), sizeof(uint64_t));
    if (!run.syn_sig) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t v = 0; v < run.n_words; v++)
        for (int64_t k = run.syn_off[v]; k < run.syn_off[v + 1]; k++)
            run.syn_sig[v] |= (uint64_t)1 << (mix64((uint64_t)run.syn_ids[k]) & 63);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_all(&run);
    Py_END_ALLOW_THREADS
    if (rc == ERR_NOMEM) PyErr_NoMemory();
    else if (rc == ERR_EMPTY_REF_MATCH)
        PyErr_SetString(PyExc_RuntimeError,
                        "a paraphrase match of no reference words in an alignment (the jar would loop)");
    else {
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    free(run.syn_sig);
    views_release(&vs);
    return result;
}

static PyMethodDef METHODS[] = {
    {"segment_stats", segment_stats, METH_VARARGS,
     "segment_stats(words, table, segments, params, out): the 23 Meteor statistics of each segment "
     "(best reference) into out; see the module source for the array layout."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_meteor_align",
    "The per-segment work of METEOR's aligner.py (matchers, beam search, statistics) in C.", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__meteor_align(void) { return PyModule_Create(&MODULE); }
