/* The fast-path table cache: an open-addressing hash table keyed by
 * (kind, op, both formats, rounding, saturation, tininess).
 *
 * Readers never lock: they probe the current slot array, whose slots are
 * written once (release) and never cleared, and whose entries and tables are
 * immutable once published.  Writers (building a table) take one mutex,
 * re-probe, build, and publish.  When the array fills to one half it is
 * replaced by one twice as large; the old array is left alive (a reader may
 * still be probing it; at worst it misses the newest entries and takes the
 * locked path), so arrays and tables are never freed.
 *
 * The cap: a new table is built only while the bytes of the cached tables are
 * below the cap (the last table may cross it); past it, calls that would have
 * built a table take the generic core, and count in refused_over_cap. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"

typedef struct centry {
    sfp8f_key key;
    uint64_t hash;
    void *data;
} centry;

typedef struct ctab {
    size_t mask; /* slots - 1 (a power of two) */
    centry *slot[];
} ctab;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static ctab *g_tab = NULL;  /* read with acquire loads; replaced under the mutex */
static size_t g_count = 0;  /* entries (under the mutex; read atomically) */
static size_t g_bytes = 0;  /* bytes of the tables (same) */
static size_t g_cap = (size_t)256 << 20;
static uint64_t g_hits = 0, g_misses = 0, g_builds = 0, g_refused = 0; /* relaxed counters */

#define BUMP(c) __atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)

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

static void *probe(const ctab *t, const sfp8f_key *k, uint64_t h)
{
    if (!t) return NULL;
    for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
        const centry *e = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);
        if (!e) return NULL; /* the load factor stays <= 1/2: an empty slot ends every probe */
        if (e->hash == h && memcmp(&e->key, k, sizeof *k) == 0) return e->data;
    }
}

static void place(ctab *t, centry *e)
{
    size_t i = (size_t)e->hash & t->mask;
    while (t->slot[i]) i = (i + 1) & t->mask;
    __atomic_store_n(&t->slot[i], e, __ATOMIC_RELEASE);
}

/* mutex held */
static int insert_locked(centry *e)
{
    ctab *t = g_tab;
    if (!t || (g_count + 1) * 2 > t->mask + 1) {
        size_t slots = t ? 2 * (t->mask + 1) : 1024;
        ctab *nt = calloc(1, sizeof *nt + slots * sizeof(centry *));
        if (!nt) return 0;
        nt->mask = slots - 1;
        if (t)
            for (size_t i = 0; i <= t->mask; i++)
                if (t->slot[i]) place(nt, t->slot[i]);
        __atomic_store_n(&g_tab, nt, __ATOMIC_RELEASE); /* the old array stays alive */
        t = nt;
    }
    place(t, e);
    __atomic_store_n(&g_count, g_count + 1, __ATOMIC_RELAXED);
    return 1;
}

/* mutex held: the table of k, built (and published) if missing and allowed */
static void *get_locked(const sfp8f_key *k, uint64_t h, sfp8f_builder build)
{
    void *data = probe(g_tab, k, h);
    size_t bytes = 0;
    centry *e;
    if (data) return data;
    if (g_bytes >= __atomic_load_n(&g_cap, __ATOMIC_RELAXED)) {
        BUMP(g_refused);
        return NULL;
    }
    data = build(k, &bytes); /* builders may ask for other tables (sfp8f_cached_nested) */
    if (!data) return NULL;
    e = malloc(sizeof *e);
    if (!e) return NULL; /* out of memory: the table is dropped (its layout is the builder's) */
    e->key = *k;
    e->hash = h;
    e->data = data;
    if (!insert_locked(e)) {
        free(e);
        return NULL;
    }
    __atomic_store_n(&g_bytes, g_bytes + bytes, __ATOMIC_RELAXED);
    BUMP(g_builds);
    return data;
}

void *sfp8f_cached(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                   sfp8f_builder build, ptrdiff_t n, ptrdiff_t entries)
{
    sfp8f_key k;
    uint64_t h;
    void *data;
    make_key(&k, kind, op, a, b, env);
    h = key_hash(&k);
    data = probe(__atomic_load_n(&g_tab, __ATOMIC_ACQUIRE), &k, h);
    if (data) {
        BUMP(g_hits);
        return data;
    }
    BUMP(g_misses);
    /* build only when the call repays it (or in eager mode) */
    if (n < entries / 16 && sfp8f_enabled() < 2) return NULL;
    pthread_mutex_lock(&cache_mu);
    data = get_locked(&k, h, build);
    pthread_mutex_unlock(&cache_mu);
    return data;
}

void *sfp8f_cached_nested(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                          sfp8f_builder build)
{
    sfp8f_key k;
    make_key(&k, kind, op, a, b, env);
    return get_locked(&k, key_hash(&k), build);
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
}

size_t sfp8f_set_cache_cap(size_t bytes)
{
    return __atomic_exchange_n(&g_cap, bytes, __ATOMIC_RELAXED);
}
