/* The fast-path table cache: an open-addressing hash table keyed by
 * (kind, op, both formats, rounding, saturation, tininess), with a byte
 * budget and least-recently-used eviction that is safe for loops still
 * reading an evicted table.
 *
 * Readers never lock.  Every use of tables happens inside a read section
 * (sfp8f_read_begin / sfp8f_read_end, taken by the array driver and the
 * matmul loop around a whole call); inside it, a reader probes the current
 * slot array, whose slots are written once (release), and uses the entries'
 * immutable tables.  Writers (building, evicting) take one mutex.
 *
 * Eviction unlinks entries by publishing a fresh slot array without them; the
 * old array and the evicted tables are "retired", not freed: a reader that
 * entered before the unlink may still hold them.  Reclamation is epoch-based
 * with two reader counters: readers count themselves in the current epoch's
 * counter.  Retired memory waits in `pending`; once no reader of the other
 * epoch remains, the epoch flips and `pending` becomes `waiting`; `waiting`
 * is freed once no reader of the epoch before the flip remains (every reader
 * that could have seen it has left).  Nothing ever blocks on readers.
 *
 * Tables built from other tables (fma, arith16 and stochastic tables keep
 * pointers into conversion tables) pin them: a pinned table is not evicted
 * while a table that points into it lives.
 *
 * The budget (sfp8f_set_cache_cap, default 32 MiB): before a new table is
 * published, least recently used unpinned tables are evicted until the total
 * fits; a table that cannot fit (larger than the budget, or everything else
 * pinned) is refused: the call takes the generic core, counted in
 * refused_over_cap. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"

#define MAX_DEPS 4

typedef struct centry {
    sfp8f_key key;
    uint64_t hash;
    void *data;
    size_t bytes;
    uint64_t last_use;             /* tick of the last lookup (relaxed) */
    struct centry *deps[MAX_DEPS]; /* tables this one points into (pinned by it) */
    int ndeps;
    int pins; /* live tables pointing into this one (mutex) */
} centry;

typedef struct ctab {
    size_t mask; /* slots - 1 (a power of two) */
    centry *slot[];
} ctab;

/* retired memory: an entry (with its table) or a slot array */
typedef struct retired {
    struct retired *next;
    centry *e;
    ctab *t;
} retired;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static ctab *g_tab = NULL;  /* read with acquire loads; replaced under the mutex */
static size_t g_count = 0;  /* entries (under the mutex; read atomically) */
static size_t g_bytes = 0;  /* bytes of the live tables (same) */
static size_t g_cap = (size_t)32 << 20;
static uint64_t g_tick = 0;
static uint64_t g_hits = 0, g_misses = 0, g_builds = 0, g_refused = 0, g_evicted = 0,
                g_freed = 0; /* relaxed counters */
/* reclamation (see above) */
static unsigned g_epoch = 0;
static long g_active[2] = {0, 0};
static retired *g_pending = NULL, *g_waiting = NULL;
/* tables asked for by the builder running now (nested lookups), pinned until
 * the entry being built takes them over (mutex) */
static centry *g_build_deps[16];
static int g_nbuild_deps = 0;

#define BUMP(c) __atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)

/* ---- read sections ---- */

unsigned sfp8f_read_begin(void)
{
    for (;;) {
        unsigned e = __atomic_load_n(&g_epoch, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&g_active[e], 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&g_epoch, __ATOMIC_SEQ_CST) == e) return e;
        __atomic_fetch_sub(&g_active[e], 1, __ATOMIC_SEQ_CST); /* flipped meanwhile: retry */
    }
}

void sfp8f_read_end(unsigned token) { __atomic_fetch_sub(&g_active[token & 1], 1, __ATOMIC_SEQ_CST); }

/* ---- keys ---- */

static void make_key(sfp8f_key *k, int kind, int op, const sfp8_format *a, const sfp8_format *b,
                     const sfp8_env *env)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->op = op;
    k->a = *a;
    if (b) k->b = *b;
    if (env) {
        k->rounding = env->rounding;
        k->saturate = env->saturate != 0;
        k->tininess = env->tininess_before != 0;
    }
}

static uint64_t key_hash(const sfp8f_key *k)
{
    /* the key's 32-bit words times distinct odd constants, summed (independent
     * multiplies), then one final mix */
    enum { W = sizeof(sfp8f_key) / sizeof(uint32_t) };
    uint32_t w[W];
    uint64_t h = 0;
    memcpy(w, k, sizeof w);
    for (size_t i = 0; i < W; i++) h += (uint64_t)w[i] * (0x9e3779b97f4a7c15ULL + 2 * i * 0x632be59bd9b4e019ULL);
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    return h ^ (h >> 32);
}

static centry *probe(const ctab *t, const sfp8f_key *k, uint64_t h)
{
    if (!t) return NULL;
    for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
        centry *e = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);
        if (!e) return NULL; /* the load factor stays <= 1/2: an empty slot ends every probe */
        if (e->hash == h && memcmp(&e->key, k, sizeof *k) == 0) return e;
    }
}

static void place(ctab *t, centry *e)
{
    size_t i = (size_t)e->hash & t->mask;
    while (t->slot[i]) i = (i + 1) & t->mask;
    __atomic_store_n(&t->slot[i], e, __ATOMIC_RELEASE);
}

static void touch(centry *e)
{
    __atomic_store_n(&e->last_use, __atomic_add_fetch(&g_tick, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* ---- reclamation (mutex held) ---- */

static void retire(centry *e, ctab *t)
{
    retired *r = malloc(sizeof *r);
    if (!r) return; /* out of memory: leak it rather than free it under a reader */
    r->e = e;
    r->t = t;
    r->next = g_pending;
    g_pending = r;
}

static void free_list(retired *r)
{
    while (r) {
        retired *next = r->next;
        if (r->e) {
            free(r->e->data); /* every table is one block (fast_impl.h, sfp8f_builder) */
            free(r->e);
            BUMP(g_freed);
        }
        free(r->t);
        free(r);
        r = next;
    }
}

static void reclaim_locked(void)
{
    unsigned e = __atomic_load_n(&g_epoch, __ATOMIC_SEQ_CST);
    if (g_waiting && __atomic_load_n(&g_active[!e], __ATOMIC_SEQ_CST) == 0) {
        free_list(g_waiting); /* every reader that could have seen them has left */
        g_waiting = NULL;
    }
    if (!g_waiting && g_pending && __atomic_load_n(&g_active[!e], __ATOMIC_SEQ_CST) == 0) {
        g_waiting = g_pending;
        g_pending = NULL;
        __atomic_store_n(&g_epoch, !e, __ATOMIC_SEQ_CST);
    }
}

/* ---- publication and eviction (mutex held) ---- */

/* A fresh slot array sized for `count` entries holding every live entry of the
 * current one except `drop` (may be NULL) plus `add` (may be NULL); the old
 * array is retired. */
static int republish(centry *add, centry **drop, size_t ndrop)
{
    ctab *t = g_tab, *nt;
    size_t live = g_count + (add ? 1 : 0) - ndrop, slots = 1024;
    while (live * 2 > slots) slots *= 2;
    nt = calloc(1, sizeof *nt + slots * sizeof(centry *));
    if (!nt) return 0;
    nt->mask = slots - 1;
    if (t)
        for (size_t i = 0; i <= t->mask; i++) {
            centry *e = t->slot[i];
            int dropped = 0;
            if (!e) continue;
            for (size_t j = 0; j < ndrop; j++) dropped |= drop[j] == e;
            if (!dropped) place(nt, e);
        }
    if (add) place(nt, add);
    __atomic_store_n(&g_tab, nt, __ATOMIC_RELEASE);
    if (t) retire(NULL, t);
    __atomic_store_n(&g_count, live, __ATOMIC_RELAXED);
    return 1;
}

static int insert_locked(centry *e)
{
    ctab *t = g_tab;
    if (!t || (g_count + 1) * 2 > t->mask + 1) return republish(e, NULL, 0);
    place(t, e);
    __atomic_store_n(&g_count, g_count + 1, __ATOMIC_RELAXED);
    return 1;
}

static void unpin_deps(centry *e)
{
    for (int i = 0; i < e->ndeps; i++) e->deps[i]->pins -= 1;
}

/* Evict least recently used unpinned tables until `need` more bytes fit the
 * budget (in batches of up to 64 per new slot array; a batch's evictions unpin
 * the tables they were built from, which the next batch may take).  Returns 1
 * if they fit. */
static int make_room(size_t need)
{
    size_t cap = __atomic_load_n(&g_cap, __ATOMIC_RELAXED);
    if (need > cap) return 0;
    while (g_bytes + need > cap) {
        centry *victims[64];
        size_t nv = 0;
        while (g_bytes + need > cap && nv < sizeof victims / sizeof victims[0]) {
            ctab *t = g_tab;
            centry *lru = NULL;
            if (t)
                for (size_t i = 0; i <= t->mask; i++) {
                    centry *e = t->slot[i];
                    int chosen = 0;
                    if (!e || e->pins > 0) continue;
                    for (size_t j = 0; j < nv; j++) chosen |= victims[j] == e;
                    if (!chosen && (!lru || e->last_use < lru->last_use)) lru = e;
                }
            if (!lru) break;
            victims[nv++] = lru;
            unpin_deps(lru);
            __atomic_store_n(&g_bytes, g_bytes - lru->bytes, __ATOMIC_RELAXED);
        }
        if (nv == 0) break; /* everything left is pinned */
        if (!republish(NULL, victims, nv)) { /* cannot unlink: undo */
            for (size_t j = 0; j < nv; j++) {
                for (int i = 0; i < victims[j]->ndeps; i++) victims[j]->deps[i]->pins += 1;
                g_bytes += victims[j]->bytes;
            }
            break;
        }
        for (size_t j = 0; j < nv; j++) {
            retire(victims[j], NULL);
            BUMP(g_evicted);
        }
    }
    reclaim_locked();
    return g_bytes + need <= cap;
}

/* The entry of k, built and published if missing and it fits.  `nested`: a
 * builder asks (the entry is pinned for the entry being built). */
static void *get_locked(const sfp8f_key *k, uint64_t h, sfp8f_builder build, int nested)
{
    centry *e = probe(g_tab, k, h);
    if (!e) {
        size_t bytes = 0;
        int base = g_nbuild_deps;
        void *data = build(k, &bytes); /* nested lookups append to g_build_deps */
        int nd = g_nbuild_deps - base;
        e = data ? calloc(1, sizeof *e) : NULL;
        if (e && nd <= MAX_DEPS) {
            e->key = *k;
            e->hash = h;
            e->data = data;
            e->bytes = bytes;
            e->ndeps = nd;
            for (int i = 0; i < nd; i++) e->deps[i] = g_build_deps[base + i]; /* their pins pass to e */
        }
        g_nbuild_deps = base;
        if (!e || nd > MAX_DEPS || !make_room(bytes) || !insert_locked(e)) {
            for (int i = 0; i < nd; i++) g_build_deps[base + i]->pins -= 1;
            free(data);
            free(e);
            BUMP(g_refused);
            return NULL;
        }
        __atomic_store_n(&g_bytes, g_bytes + bytes, __ATOMIC_RELAXED);
        BUMP(g_builds);
    }
    touch(e);
    if (nested) {
        if (g_nbuild_deps == (int)(sizeof g_build_deps / sizeof g_build_deps[0])) return NULL;
        e->pins += 1;
        g_build_deps[g_nbuild_deps++] = e;
    }
    return e->data;
}

void *sfp8f_cached(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                   sfp8f_builder build, ptrdiff_t n, ptrdiff_t entries)
{
    sfp8f_key k;
    uint64_t h;
    centry *e;
    void *data;
    make_key(&k, kind, op, a, b, env);
    h = key_hash(&k);
    e = probe(__atomic_load_n(&g_tab, __ATOMIC_ACQUIRE), &k, h);
    if (e) {
        BUMP(g_hits);
        touch(e);
        return e->data;
    }
    BUMP(g_misses);
    /* build only when the call repays it (or in eager mode) */
    if (n < entries / 16 && sfp8f_enabled() < 2) return NULL;
    pthread_mutex_lock(&cache_mu);
    data = get_locked(&k, h, build, 0);
    pthread_mutex_unlock(&cache_mu);
    return data;
}

void *sfp8f_cached_nested(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                          sfp8f_builder build)
{
    sfp8f_key k;
    make_key(&k, kind, op, a, b, env);
    return get_locked(&k, key_hash(&k), build, 1);
}

void sfp8f_cache_stats(sfp8f_cache_info *info)
{
    info->tables = __atomic_load_n(&g_count, __ATOMIC_RELAXED);
    info->bytes = __atomic_load_n(&g_bytes, __ATOMIC_RELAXED);
    info->cap = __atomic_load_n(&g_cap, __ATOMIC_RELAXED);
    info->hits = __atomic_load_n(&g_hits, __ATOMIC_RELAXED);
    info->misses = __atomic_load_n(&g_misses, __ATOMIC_RELAXED);
    info->builds = __atomic_load_n(&g_builds, __ATOMIC_RELAXED);
    info->refused_over_cap = __atomic_load_n(&g_refused, __ATOMIC_RELAXED);
    info->evicted = __atomic_load_n(&g_evicted, __ATOMIC_RELAXED);
    info->freed = __atomic_load_n(&g_freed, __ATOMIC_RELAXED);
}

size_t sfp8f_set_cache_cap(size_t bytes)
{
    size_t prev;
    pthread_mutex_lock(&cache_mu);
    prev = __atomic_exchange_n(&g_cap, bytes, __ATOMIC_RELAXED);
    make_room(0); /* a lower budget evicts now */
    pthread_mutex_unlock(&cache_mu);
    return prev;
}

void sfp8f_cache_reclaim(void)
{
    pthread_mutex_lock(&cache_mu);
    reclaim_locked();
    reclaim_locked(); /* flip, then free if the readers of both epochs have left */
    pthread_mutex_unlock(&cache_mu);
}
