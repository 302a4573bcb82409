/* Fast paths: run-time tables derived from the exact core, and the kernels
 * that read them (see fast.h).  The SIMD kernels live in fast_simd.c. */
#include "fast.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fast_simd.h"
#include "ops.h"
#include "rng.h"

/* ------------------------------------------------------------------------ */
/* Switches                                                                  */
/* ------------------------------------------------------------------------ */

static int g_enabled = -1; /* -1: not read yet */
static int g_simd = -1;

static int env_off(const char *name)
{
    const char *v = getenv(name);
    return v && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0 ||
                 strcmp(v, "false") == 0);
}

int sfp8f_enabled(void)
{
    int e = __atomic_load_n(&g_enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        const char *v = getenv("SOFTFP8_FAST");
        e = env_off("SOFTFP8_FAST") ? 0 : (v && strcmp(v, "2") == 0) ? 2 : 1;
        __atomic_store_n(&g_enabled, e, __ATOMIC_RELAXED);
    }
    return e;
}

int sfp8f_set_enabled(int on)
{
    int old = sfp8f_enabled();
    __atomic_store_n(&g_enabled, on < 0 ? 0 : on > 2 ? 2 : on, __ATOMIC_RELAXED);
    return old;
}

int sfp8f_simd_level(void)
{
    int s = __atomic_load_n(&g_simd, __ATOMIC_RELAXED);
    if (s < 0) {
        s = env_off("SOFTFP8_SIMD") ? 0 : sfp8s_cpu_level();
        __atomic_store_n(&g_simd, s, __ATOMIC_RELAXED);
    }
    return s;
}

int sfp8f_set_simd(int level)
{
    int old = sfp8f_simd_level();
    int cpu = sfp8s_cpu_level();
    __atomic_store_n(&g_simd, level < 0 ? 0 : level > cpu ? cpu : level, __ATOMIC_RELAXED);
    return old;
}

/* ------------------------------------------------------------------------ */
/* The table cache                                                           */
/* ------------------------------------------------------------------------ */

enum { T_BIN8 = 1, T_UNARY, T_CONV, T_FROMF, T_SUM };

typedef struct entry {
    struct entry *next;
    int kind, op;
    sfp8_format a, b;
    int rounding, saturate, tininess;
    void *data;
} entry;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static entry *cache_head = NULL;
static size_t cache_bytes = 0;
#define CACHE_CAP ((size_t)256 << 20) /* beyond this, new requests take the generic path */

static int same_fmt(const sfp8_format *x, const sfp8_format *y)
{
    return x->bits == y->bits && x->is_signed == y->is_signed && x->exp_bits == y->exp_bits &&
           x->man_bits == y->man_bits && x->bias == y->bias && x->specials == y->specials &&
           x->subnormals == y->subnormals && x->saturate == y->saturate;
}

typedef void *(*builder)(const entry *key, size_t *bytes);

/* A table is built when the call is long enough to repay it (n >= entries/16)
 * or in eager mode (sfp8f_set_enabled(2)); otherwise only a cached one is used. */
static void *cached_locked(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                           builder build, ptrdiff_t n, ptrdiff_t entries)
{
    entry key, *e;
    void *data = NULL;
    size_t bytes = 0;
    memset(&key, 0, sizeof key);
    key.kind = kind;
    key.op = op;
    key.a = *a;
    if (b) key.b = *b;
    if (env) {
        key.rounding = env->rounding;
        key.saturate = env->saturate != 0;
        key.tininess = env->tininess_before != 0;
    }
    for (e = cache_head; e; e = e->next) {
        if (e->kind == kind && e->op == op && same_fmt(&e->a, &key.a) && same_fmt(&e->b, &key.b) &&
            e->rounding == key.rounding && e->saturate == key.saturate && e->tininess == key.tininess)
            return e->data;
    }
    if (cache_bytes >= CACHE_CAP) return NULL;
    if (n < entries / 16 && __atomic_load_n(&g_enabled, __ATOMIC_RELAXED) < 2) return NULL;
    data = build(&key, &bytes); /* builders may ask for other tables (lock held) */
    if (!data) return NULL;
    e = malloc(sizeof *e);
    if (!e) {
        free(data);
        return NULL;
    }
    *e = key;
    e->data = data;
    e->next = cache_head;
    cache_head = e;
    cache_bytes += bytes;
    return data;
}

/* A table is built when the call is long enough to repay it (n >= entries/16)
 * or in eager mode (sfp8f_set_enabled(2)); otherwise only a cached one is used. */
static void *cached(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                    builder build, ptrdiff_t n, ptrdiff_t entries)
{
    void *data;
    pthread_mutex_lock(&cache_mu);
    data = cached_locked(kind, op, a, b, env, build, n, entries);
    pthread_mutex_unlock(&cache_mu);
    return data;
}

void sfp8f_cache_stats(size_t *tables, size_t *bytes)
{
    size_t n = 0;
    pthread_mutex_lock(&cache_mu);
    for (entry *e = cache_head; e; e = e->next) n++;
    *tables = n;
    *bytes = cache_bytes;
    pthread_mutex_unlock(&cache_mu);
}

static void key_env(const entry *k, sfp8_env *env)
{
    env->rounding = k->rounding;
    env->saturate = k->saturate;
    env->tininess_before = k->tininess;
    env->sr_bits = 32;
    env->random = 0;
}

/* Deterministic environments only; env-free operations share one table. */
static int usable_env(const sfp8_env *env) { return env->rounding != SFP8_ROUND_STOCHASTIC; }
static const sfp8_env free_env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

/* ------------------------------------------------------------------------ */
/* Builders                                                                  */
/* ------------------------------------------------------------------------ */

static void *build_bin8(const entry *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64);
    if (!t) return NULL;
    key_env(k, &env);
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++) {
            uint8_t fl = 0;
            uint32_t r = sfp8x_binary(k->op, &k->a, a, b, &env, &fl);
            t[a << 8 | b] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
        }
    memset(t + 65536, 0, 64);
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

const uint16_t *sfp8f_binary8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || f->bits > 8 || !X_IS_BINARY(op) || !usable_env(env)) return NULL;
    if (sfp8x_env_free(op)) env = &free_env;
    return cached(T_BIN8, op, f, NULL, env, build_bin8, n, 65536);
}

static void *build_unary(const entry *k, size_t *bytes)
{
    sfp8_env env;
    uint32_t n = (uint32_t)1 << k->a.bits;
    uint32_t *t = malloc(n * sizeof(uint32_t) + 64);
    if (!t) return NULL;
    key_env(k, &env);
    for (uint32_t a = 0; a < n; a++) {
        uint8_t fl = 0;
        uint32_t r = sfp8x_unary(k->op, &k->a, a, &env, &fl);
        t[a] = (r & 0xffffu) | (uint32_t)fl << 16;
    }
    *bytes = n * sizeof(uint32_t);
    return t;
}

const uint32_t *sfp8f_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || f->bits > 16 || !X_IS_UNARY(op) || !usable_env(env)) return NULL;
    if (sfp8x_env_free(op)) env = &free_env;
    return cached(T_UNARY, op, f, NULL, env, build_unary, n, (ptrdiff_t)1 << f->bits);
}

typedef struct {
    sfp8f_conv c;
    uint64_t *val;
    uint8_t *fl;
    uint8_t *planes;
} conv_store;

static void *build_conv(const entry *k, size_t *bytes)
{
    sfp8_env env;
    int n = 1 << k->a.bits;
    conv_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->val = malloc((size_t)n * 8);
    s->fl = malloc((size_t)n);
    if (n == 256) s->planes = malloc(8 * 256);
    if (!s->val || !s->fl || (n == 256 && !s->planes)) {
        free(s->val);
        free(s->fl);
        free(s->planes);
        free(s);
        return NULL;
    }
    key_env(k, &env);
    for (int i = 0; i < n; i++) {
        uint8_t fl = 0;
        s->val[i] = sfp8_convert(&k->a, &k->b, (uint64_t)i, &env, &fl);
        s->fl[i] = fl;
        s->c.any_flags |= fl;
    }
    if (n == 256)
        for (int p = 0; p < 8; p++)
            for (int i = 0; i < 256; i++) s->planes[p * 256 + i] = (uint8_t)(s->val[i] >> (8 * p));
    s->c.n = n;
    s->c.val = s->val;
    s->c.fl = s->fl;
    s->c.planes = s->planes;
    *bytes = (size_t)n * 9 + (n == 256 ? 2048 : 0);
    return s;
}

const sfp8f_conv *sfp8f_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                ptrdiff_t n)
{
    if (!sfp8f_enabled() || src->bits > 16 || !usable_env(env)) return NULL;
    return cached(T_CONV, 0, src, dst, env, build_conv, n, (ptrdiff_t)1 << src->bits);
}

uint32_t sfp8f_key64(uint64_t b)
{
    uint32_t s = (uint32_t)(b >> 63);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & (((uint64_t)1 << 52) - 1);
    uint32_t e32, m6, st;
    const uint64_t low = ((uint64_t)1 << 46) - 1;
    if (e == 0x7ff) {
        e32 = 255;
        m6 = (uint32_t)(m >> 46);
        st = (m & low) != 0;
    } else if (e == 0) {
        e32 = 0;
        m6 = 0;
        st = m != 0;
    } else if (e - 1023 > 127) { /* beyond binary32: far beyond every covered format */
        e32 = 254;
        m6 = 63;
        st = 1;
    } else if (e - 1023 < -126) { /* tiny but normal: far below every covered format */
        e32 = 1;
        m6 = 0;
        st = 1;
    } else {
        e32 = (uint32_t)(e - 1023 + 127);
        m6 = (uint32_t)(m >> 46);
        st = (m & low) != 0;
    }
    return s << 15 | e32 << 7 | m6 << 1 | st;
}

/* Formats whose conversions from binary32/64 depend on the key alone: at most
 * M + 3 <= 7 leading significand bits decide (ties, the Tesla gap midpoint),
 * and every value and rounding boundary lies well inside binary32's normal
 * range (so the clamped binary64 keys round as the values they stand for). */
static int from_float_ok(const sfp8_format *f)
{
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 1, 0, 32, 0};
    uint8_t fl = 0;
    uint64_t big, small;
    double vb, vs;
    if (f->bits > 8 || f->man_bits > 4) return 0;
    big = sfp8_convert(f, &sfp8_binary64, sfp8_max_code(f), &env, &fl);
    small = sfp8_convert(f, &sfp8_binary64, sfp8_min_subnormal_code(f), &env, &fl);
    memcpy(&vb, &big, 8);
    memcpy(&vs, &small, 8);
    return vb < 0x1p100 && vs > 0x1p-100;
}

static void *build_fromf(const entry *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64);
    if (!t) return NULL;
    key_env(k, &env);
    for (uint32_t key = 0; key < 65536; key++) {
        uint8_t fl = 0;
        uint32_t rep = (key >> 1) << 17 | (key & 1); /* a member of the key's class */
        uint32_t r = (uint32_t)sfp8_convert(&sfp8_binary32, &k->a, rep, &env, &fl);
        t[key] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
    }
    memset(t + 65536, 0, 64);
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !usable_env(env) || !from_float_ok(dst)) return NULL;
    return cached(T_FROMF, 0, dst, NULL, env, build_fromf, n, 65536);
}

static void *build_sum(const entry *k, size_t *bytes)
{
    const sfp8_format *f = &k->a;
    sfp8_env env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
    int64_t qmin = (int64_t)-f->bias - f->man_bits;
    sfp8f_sum *t = calloc(1, sizeof *t);
    int64_t vmax = 0;
    if (!t) return NULL;
    for (uint32_t c = 0; c < 256; c++) {
        int cls = sfp8_classify(f, c), neg = sfp8_signbit(f, c);
        uint8_t fl = 0;
        if (cls == SFP8_CLASS_SUBNORMAL) t->fl[c] = SFP8_FLAG_DENORMAL;
        if (cls >= SFP8_CLASS_INF) {
            t->cat[c] = SFP8F_SUM_SPECIAL;
        } else if (cls == SFP8_CLASS_ZERO ||
                   (cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
            t->cat[c] = neg ? SFP8F_SUM_NEGZERO : SFP8F_SUM_POSZERO;
        } else {
            uint64_t b = sfp8_convert(f, &sfp8_binary64, c, &env, &fl);
            int64_t ef = (int64_t)((b >> 52) & 0x7ff), exp;
            uint64_t sig = b & (((uint64_t)1 << 52) - 1);
            if (ef) sig |= (uint64_t)1 << 52;
            else ef = 1;
            exp = ef - 1075;
            while (!(sig & 1)) {
                sig >>= 1;
                exp++;
            }
            if (exp < qmin || exp - qmin + (64 - __builtin_clzll(sig)) > 40) {
                free(t);
                return NULL; /* too wide for 64-bit partial sums */
            }
            t->v[c] = (int64_t)(sig << (exp - qmin)) * (neg ? -1 : 1);
            if (llabs(t->v[c]) > vmax) vmax = llabs(t->v[c]);
            t->cat[c] = SFP8F_SUM_NONZERO;
        }
    }
    t->vbits = 64 - __builtin_clzll((uint64_t)vmax | 1);
    *bytes = sizeof *t;
    return t;
}

const sfp8f_sum *sfp8f_sum_table(const sfp8_format *f, ptrdiff_t n)
{
    if (!sfp8f_enabled() || f->bits > 8) return NULL;
    return cached(T_SUM, 0, f, NULL, NULL, build_sum, n, 256);
}

/* ------------------------------------------------------------------------ */
/* Portable kernels                                                          */
/* ------------------------------------------------------------------------ */

static inline uint32_t ld16(const char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline void st_n(char *p, uint64_t v, int size)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

unsigned sfp8f_run_binary8(const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                           char *o, ptrdiff_t so, ptrdiff_t n)
{
    unsigned acc = 0;
    if (sa == 1 && sb == 1 && so == 1) {
        const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
        uint8_t *z = (uint8_t *)o;
        ptrdiff_t i = 0;
        if (sfp8f_simd_level() >= 2) i = sfp8s_binary8(tab, x, y, z, n, &acc);
        for (; i < n; i++) {
            uint16_t v = tab[(uint32_t)x[i] << 8 | y[i]];
            z[i] = (uint8_t)v;
            acc |= v;
        }
    } else {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, o += so) {
            uint16_t v = tab[(uint32_t) * (const uint8_t *)a << 8 | *(const uint8_t *)b];
            *(uint8_t *)o = (uint8_t)v;
            acc |= v;
        }
    }
    return acc >> 8;
}

unsigned sfp8f_run_unary(const uint32_t *tab, const char *a, ptrdiff_t sa, int size, char *o, ptrdiff_t so,
                         int osize, ptrdiff_t n)
{
    uint32_t acc = 0;
    if (size == 1 && osize == 1 && sa == 1 && so == 1) {
        const uint8_t *x = (const uint8_t *)a;
        uint8_t *z = (uint8_t *)o;
        for (ptrdiff_t i = 0; i < n; i++) {
            uint32_t v = tab[x[i]];
            z[i] = (uint8_t)v;
            acc |= v;
        }
    } else {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
            uint32_t c = size == 1 ? *(const uint8_t *)a : ld16(a);
            uint32_t v = tab[c];
            st_n(o, v & 0xffffu, osize);
            acc |= v;
        }
    }
    return acc >> 16;
}

unsigned sfp8f_run_convert(const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize, char *o,
                           ptrdiff_t so, int osize, ptrdiff_t n)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (isize == 1 && sa == 1 && so == osize && c->planes && sfp8f_simd_level() >= 2) {
        i = sfp8s_lut8(c->planes, c->any_flags ? c->fl : NULL, osize, (const uint8_t *)a, o, n, &acc);
        a += i;
        o += i * so;
    }
    if (isize == 1) {
        for (; i < n; i++, a += sa, o += so) {
            uint8_t x = *(const uint8_t *)a;
            st_n(o, c->val[x], osize);
            acc |= c->fl[x];
        }
    } else {
        for (; i < n; i++, a += sa, o += so) {
            uint32_t x = ld16(a);
            st_n(o, c->val[x], osize);
            acc |= c->fl[x];
        }
    }
    return acc;
}

unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o,
                              ptrdiff_t so, ptrdiff_t n)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (isize == 4) {
        if (sa == 4 && so == 1) {
            const char *p;
            uint8_t *z = (uint8_t *)o;
            if (sfp8f_simd_level() >= 2) i = sfp8s_from_f32(tab, (const uint32_t *)(const void *)a, z, n, &acc);
            p = a + 4 * i;
            for (; i < n; i++, p += 4) {
                uint32_t bits;
                memcpy(&bits, p, 4);
                uint16_t v = tab[sfp8f_key32(bits)];
                z[i] = (uint8_t)v;
                acc |= v;
            }
        } else {
            for (; i < n; i++, a += sa, o += so) {
                uint32_t bits;
                memcpy(&bits, a, 4);
                uint16_t v = tab[sfp8f_key32(bits)];
                *(uint8_t *)o = (uint8_t)v;
                acc |= v;
            }
        }
    } else {
        if (sa == 8 && so == 1 && sfp8f_simd_level() >= 2) {
            i = sfp8s_from_f64(tab, (const uint64_t *)(const void *)a, (uint8_t *)o, n, &acc);
            a += 8 * i;
            o += i;
        }
        for (; i < n; i++, a += sa, o += so) {
            uint64_t bits;
            memcpy(&bits, a, 8);
            uint16_t v = tab[sfp8f_key64(bits)];
            *(uint8_t *)o = (uint8_t)v;
            acc |= v;
        }
    }
    return acc >> 8;
}

unsigned sfp8f_run_sum(const sfp8f_sum *t, const char *a, ptrdiff_t sa, ptrdiff_t n, __int128 *acc,
                       unsigned *cats)
{
    unsigned fl = 0, cat = 0;
    /* 64-bit partial sums cannot overflow within a chunk */
    ptrdiff_t chunk = (ptrdiff_t)1 << (62 - t->vbits > 30 ? 30 : 62 - t->vbits);
    while (n > 0) {
        ptrdiff_t m = n < chunk ? n : chunk;
        int64_t s = 0;
        if (sa == 1) {
            const uint8_t *x = (const uint8_t *)a;
            for (ptrdiff_t i = 0; i < m; i++) {
                uint8_t c = x[i];
                s += t->v[c];
                fl |= t->fl[c];
                cat |= t->cat[c];
            }
        } else {
            const char *p = a;
            for (ptrdiff_t i = 0; i < m; i++, p += sa) {
                uint8_t c = *(const uint8_t *)p;
                s += t->v[c];
                fl |= t->fl[c];
                cat |= t->cat[c];
            }
        }
        *acc += s;
        a += m * sa;
        n -= m;
    }
    *cats |= cat;
    return fl;
}

/* ------------------------------------------------------------------------ */
/* Fused multiply-add of 8-bit formats                                       */
/* ------------------------------------------------------------------------ */

enum { T_FMA = 16, T_A16 };

static void *build_fma(const entry *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_fma *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    key_env(k, &env);
    t->fromf = cached_locked(T_FROMF, 0, &k->a, NULL, &env, build_fromf, 65536, 65536);
    if (!t->fromf) {
        free(t);
        return NULL;
    }
    for (uint32_t c = 0; c < 256; c++) {
        uint8_t fl = 0;
        uint64_t b = sfp8_convert(&k->a, &sfp8_binary64, c, &free_env, &fl);
        int cls = sfp8_classify(&k->a, c);
        memcpy(&t->v[c], &b, 8);
        t->fl[c] = fl;
        t->special[c] = cls >= SFP8_CLASS_INF;
    }
    *bytes = sizeof *t;
    return t;
}

const sfp8f_fma *sfp8f_fma_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !usable_env(env) || !from_float_ok(f)) return NULL;
    return cached(T_FMA, 0, f, NULL, env, build_fma, n, 65536);
}

static inline uint64_t dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

/* x = s + err exactly (TwoSum); the binary64 rounded to odd of x */
static inline uint64_t odd_sum(double p, double q, double *s_out)
{
    double s = p + q;
    double bb = s - p;
    double err = (p - (s - bb)) + (q - bb);
    uint64_t b = dbits(s);
    /* branch-free: if err != 0 and b is even, step one ulp towards err */
    uint64_t move = (uint64_t)((err != 0) & !(b & 1));
    uint64_t dir = (uint64_t)((err > 0) == (s > 0)); /* 1: magnitude up, 0: down */
    *s_out = s;
    return b + (move & dir) - (move & (dir ^ 1));
}

unsigned sfp8f_run_fma(const sfp8f_fma *t, const sfp8_format *f, const sfp8_env *env, const char *a,
                       ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc, char *o,
                       ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, c += sc, o += so) {
        uint8_t x = *(const uint8_t *)a, y = *(const uint8_t *)b, z = *(const uint8_t *)c;
        double s;
        uint64_t bits;
        if (t->special[x] | t->special[y] | t->special[z]) goto core;
        bits = odd_sum(t->v[x] * t->v[y], t->v[z], &s);
        if (s == 0) goto core;
        {
            uint16_t v = t->fromf[sfp8f_key64(bits)];
            unsigned fl = (unsigned)(v >> 8) | t->fl[x] | t->fl[y] | t->fl[z];
            *(uint8_t *)o = (uint8_t)v;
            acc |= fl;
            if (flout) flout[i] = (uint8_t)fl;
        }
        continue;
    core: {
        uint8_t fl = 0;
        *(uint8_t *)o = (uint8_t)sfp8_fma(f, x, y, z, env, &fl);
        acc |= fl;
        if (flout) flout[i] = fl;
    }
    }
    return acc;
}

/* ------------------------------------------------------------------------ */
/* add/sub/mul of 16-bit IEEE-like formats                                   */
/* ------------------------------------------------------------------------ */

int sfp8f_rounder(const sfp8_format *f, const sfp8_env *env, sfp8f_rnd *r)
{
    if (!usable_env(env) || !f->is_signed || f->subnormals != SFP8_SUBNORMALS_IEEE ||
        f->specials == SFP8_SPECIALS_FNUZ || f->man_bits < 1 || f->man_bits > 23 || f->bits > 32 ||
        f->bias < -900 || f->bias > 900 || (1 << f->exp_bits) - f->bias > 900)
        return 0;
    r->M = f->man_bits;
    r->emin = 1 - f->bias;
    r->tb = env->tininess_before != 0;
    r->rounding = env->rounding;
    r->maxmag = sfp8_max_code(f);
    r->signbit = (uint32_t)1 << (f->bits - 1);
    for (int s = 0; s < 2; s++) { /* overflow results, from the core's rounding routine */
        uint8_t fl = 0;
        uint32_t c = (uint32_t)sfp8_round_value(f, s, 1, 4000, 0, env, &fl);
        if (s) r->ovf1 = c, r->ovf_fl1 = fl;
        else r->ovf0 = c, r->ovf_fl0 = fl;
    }
    return 1;
}

static int arith16_ok(const sfp8_format *f)
{
    /* products and sums of two values stay normal binary64 numbers */
    return f->bits > 8 && f->bits <= 16 && f->exp_bits <= 8 && f->bias >= -100 && f->bias <= 300;
}

static void *build_a16(const entry *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_a16 *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    key_env(k, &env);
    /* decoding is exact; IEEE overflow keeps infinite operands infinite (a
     * saturating environment would turn them into the largest binary64) */
    t->dec = cached_locked(T_CONV, 0, &k->a, &sfp8_binary64, &free_env, build_conv, 65536, 65536);
    if (!t->dec || !sfp8f_rounder(&k->a, &env, &t->r)) {
        free(t);
        return NULL;
    }
    *bytes = sizeof *t;
    return t;
}

const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    sfp8f_rnd r;
    if (!sfp8f_enabled() || !arith16_ok(f) || !sfp8f_rounder(f, env, &r)) return NULL;
    return cached(T_A16, 0, f, NULL, env, build_a16, n, 65536);
}

/* Round the binary64 bits x (finite, non-zero, normal; exact or rounded to odd)
 * into the format: the core's round_pack specialised to IEEE subnormals (see
 * sfp8f_rounder for the formats).  MODE is
 * a constant in every caller (one loop per rounding mode). */

static inline __attribute__((always_inline)) int round_inc(int MODE, int s, uint64_t K, uint64_t rem,
                                                           uint64_t half)
{
    switch (MODE) { /* branch-free forms: the operands are data */
    case SFP8_ROUND_NEAREST_EVEN: return (rem > half) | ((rem == half) & (int)(K & 1));
    case SFP8_ROUND_NEAREST_AWAY: return rem >= half;
    case SFP8_ROUND_UPWARD: return (!s) & (rem != 0);
    case SFP8_ROUND_DOWNWARD: return s & (rem != 0);
    default: return 0;
    }
}

static inline __attribute__((always_inline)) uint32_t round_f64(int MODE, const sfp8f_rnd *p, uint64_t x,
                                                              unsigned *fl)
{
    const int M = p->M;
    int s = (int)(x >> 63);
    int E = (int)((x >> 52) & 0x7ff) - 1023;
    uint64_t sig = (x & 0xFFFFFFFFFFFFFULL) | (1ULL << 52);
    int sh = 52 - M + (E < p->emin ? p->emin - E : 0);
    uint64_t K, rem, half, code;
    int tiny;
    if (sh > 54) sh = 54;
    K = sig >> sh;
    rem = sig & ((1ULL << sh) - 1);
    half = 1ULL << (sh - 1);
    if (MODE == SFP8_ROUND_TO_ODD) K |= rem != 0;
    code = (E >= p->emin ? ((uint64_t)(E - p->emin) << M) : 0) + K + (uint64_t)round_inc(MODE, s, K, rem, half);
    if (__builtin_expect(code > p->maxmag, 0)) {
        *fl |= s ? p->ovf_fl1 : p->ovf_fl0;
        return s ? p->ovf1 : p->ovf0;
    }
    if (rem) {
        if (p->tb) {
            tiny = E < p->emin;
        } else if (E != p->emin - 1) {
            tiny = E < p->emin - 1;
        } else { /* unbounded-exponent rounding: does it carry to 2^emin? */
            int shu = 52 - M;
            uint64_t Ku = sig >> shu, remu = sig & ((1ULL << shu) - 1), halfu = 1ULL << (shu - 1);
            int up = MODE == SFP8_ROUND_TO_ODD ? 0 : round_inc(MODE, s, Ku, remu, halfu);
            tiny = !(up && Ku + 1 == (2ULL << M));
        }
        *fl |= SFP8_FLAG_INEXACT | (tiny ? SFP8_FLAG_UNDERFLOW : 0);
    }
    return (uint32_t)code | (s ? p->signbit : 0);
}

static inline __attribute__((always_inline)) unsigned arith16_loop(
    int MODE, int op, const sfp8f_rnd *pp, const uint64_t *dv, const uint8_t *dfl, const sfp8_format *f,
    const sfp8_env *env, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, char *o, ptrdiff_t so,
    ptrdiff_t n, uint8_t *flout)
{
    const sfp8f_rnd p = *pp;
    unsigned acc = 0;
    const uint64_t flip = op == X_SUB ? 1ULL << 63 : 0;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, b += sb, o += so) {
        uint32_t x = ld16(a), y = ld16(b), r;
        uint64_t bx = dv[x], by = dv[y] ^ flip;
        double vx, vy, s;
        unsigned fl = dfl[x] | dfl[y];
        if (__builtin_expect(((bx >> 52) & 0x7ff) == 0x7ff || ((by >> 52) & 0x7ff) == 0x7ff, 0)) {
            uint8_t f8 = 0;
            r = sfp8x_binary(op, f, x, y, env, &f8);
            fl = f8;
        } else {
            uint64_t bits;
            memcpy(&vx, &bx, 8);
            memcpy(&vy, &by, 8);
            if (op == X_MUL) {
                s = vx * vy; /* exact: at most 2 x 11 significant bits */
                bits = dbits(s);
            } else {
                bits = odd_sum(vx, vy, &s);
            }
            if (__builtin_expect(s == 0, 0)) {
                int sign;
                if (op == X_MUL) sign = (int)((bx ^ by) >> 63);
                else if (MODE == SFP8_ROUND_DOWNWARD) sign = (int)((bx | by) >> 63);
                else sign = (int)((bx & by) >> 63);
                r = sign ? p.signbit : 0;
            } else {
                r = round_f64(MODE, &p, bits, &fl);
            }
        }
        {
            uint16_t v16 = (uint16_t)r;
            memcpy(o, &v16, 2);
        }
        acc |= fl;
        if (flout) flout[i] = (uint8_t)fl;
    }
    return acc;
}

#define ARITH16_MODES(op)                                                                                      \
    switch (p.rounding) {                                                                                      \
    case SFP8_ROUND_NEAREST_EVEN:                                                                              \
        return arith16_loop(SFP8_ROUND_NEAREST_EVEN, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);  \
    case SFP8_ROUND_NEAREST_AWAY:                                                                              \
        return arith16_loop(SFP8_ROUND_NEAREST_AWAY, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);  \
    case SFP8_ROUND_TOWARD_ZERO:                                                                               \
        return arith16_loop(SFP8_ROUND_TOWARD_ZERO, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);   \
    case SFP8_ROUND_UPWARD:                                                                                    \
        return arith16_loop(SFP8_ROUND_UPWARD, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);        \
    case SFP8_ROUND_DOWNWARD:                                                                                  \
        return arith16_loop(SFP8_ROUND_DOWNWARD, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);      \
    default:                                                                                                   \
        return arith16_loop(SFP8_ROUND_TO_ODD, op, &p, dv, dfl, f, env, a, sa, b, sb, o, so, n, flout);        \
    }

unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                           const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, char *o, ptrdiff_t so,
                           ptrdiff_t n, uint8_t *flout)
{
    const uint64_t *dv = t->dec->val;
    const uint8_t *dfl = t->dec->fl;
    const sfp8f_rnd p = t->r;
    if (op == X_MUL) {
        ARITH16_MODES(X_MUL)
    } else if (op == X_SUB) {
        ARITH16_MODES(X_SUB)
    } else {
        ARITH16_MODES(X_ADD)
    }
}

/* ------------------------------------------------------------------------ */
/* Stochastic rounding from binary32 / binary64                              */
/* ------------------------------------------------------------------------ */

enum { T_SR = 18 };

static void *build_sr(const entry *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_sr *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    key_env(k, &env);
    env.rounding = SFP8_ROUND_TOWARD_ZERO;
    t->rz = cached_locked(T_FROMF, 0, &k->a, NULL, &env, build_fromf, 65536, 65536);
    env.rounding = SFP8_ROUND_UPWARD;
    t->up = cached_locked(T_FROMF, 0, &k->a, NULL, &env, build_fromf, 65536, 65536);
    env.rounding = SFP8_ROUND_DOWNWARD;
    t->dn = cached_locked(T_FROMF, 0, &k->a, NULL, &env, build_fromf, 65536, 65536);
    if (!t->rz || !t->up || !t->dn) {
        free(t);
        return NULL;
    }
    t->man_bits = k->a.man_bits;
    t->emin = 1 - k->a.bias;
    *bytes = sizeof *t;
    return t;
}

const sfp8f_sr *sfp8f_stochastic(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    sfp8_env e2;
    if (!sfp8f_enabled() || env->rounding != SFP8_ROUND_STOCHASTIC || !from_float_ok(dst) ||
        dst->subnormals == SFP8_SUBNORMALS_TESLA)
        return NULL;
    e2 = *env; /* one table set for every sr_bits: the key holds saturation and tininess only */
    return cached(T_SR, 0, dst, NULL, &e2, build_sr, n, 3 * 65536);
}

unsigned sfp8f_run_from_float_sr(const sfp8f_sr *t, const sfp8_format *dst, const sfp8_env *env, uint64_t seed,
                                 uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, int isize, char *o,
                                 ptrdiff_t so, ptrdiff_t n)
{
    const int N = env->sr_bits >= 1 && env->sr_bits <= 32 ? env->sr_bits : 32;
    const uint64_t hs = sfp8r_seed_key(seed), base = sfp8r_stream_key(stream); /* hoisted */
    const uint64_t Rmask = (N == 32) ? 0xffffffffULL : ((1ULL << N) - 1);
    const int M = t->man_bits;
    unsigned acc = 0;
    sfp8_env e2 = *env;
    for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
        uint64_t idx = index0 + (uint64_t)i;
        uint32_t R32 = sfp8r_bits(hs, base, idx);
        uint64_t rem, tfr;
        int E, sh, neg;
        uint32_t key;
        uint16_t v;
        if (isize == 4) {
            uint32_t b;
            memcpy(&b, a, 4);
            key = sfp8f_key32(b);
            E = (int)((b >> 23) & 0xff);
            neg = (int)(b >> 31);
            if ((b & 0x7fffffffu) == 0 || E == 255) goto exact;
            if (E == 0 || E - 127 < t->emin) goto core;
            sh = 23 - M;
            rem = b & ((1u << sh) - 1);
            tfr = N >= sh ? rem << (N - sh) : rem >> (sh - N);
        } else {
            uint64_t b;
            memcpy(&b, a, 8);
            key = sfp8f_key64(b);
            E = (int)((b >> 52) & 0x7ff);
            neg = (int)(b >> 63);
            if ((b & 0x7fffffffffffffffULL) == 0 || E == 2047) goto exact;
            if (E == 0 || E - 1023 < t->emin || E - 1023 > 127) goto core;
            sh = 52 - M;
            rem = b & ((1ULL << sh) - 1);
            tfr = rem >> (sh - N);
        }
        v = t->rz[key];
        if (v & (SFP8_FLAG_OVERFLOW << 8)) goto core;
        {
            uint16_t va = (neg ? t->dn : t->up)[key];
            uint16_t pick = (uint16_t)-(uint16_t)(tfr + (R32 & Rmask) >= (1ULL << N)); /* branch-free */
            v = (uint16_t)((va & pick) | (v & (uint16_t)~pick));
        }
        *(uint8_t *)o = (uint8_t)v;
        acc |= (unsigned)(v >> 8);
        continue;
    exact: /* zero, infinity, NaN: no rounding */
        v = t->rz[key];
        *(uint8_t *)o = (uint8_t)v;
        acc |= (unsigned)(v >> 8);
        continue;
    core: {
        uint8_t fl = 0;
        uint64_t bits = 0;
        e2.random = R32;
        memcpy(&bits, a, (size_t)isize);
        *(uint8_t *)o = (uint8_t)sfp8_convert(isize == 4 ? &sfp8_binary32 : &sfp8_binary64, dst, bits, &e2, &fl);
        acc |= fl;
    }
    }
    return acc;
}

static inline __attribute__((always_inline)) unsigned round_doubles_loop(int MODE, const sfp8f_rnd *r,
                                                                         const double *d, ptrdiff_t n,
                                                                         uint32_t *out)
{
    const sfp8f_rnd p = *r;
    unsigned fl = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &d[i], 8);
        out[i] = (b << 1) ? round_f64(MODE, &p, b, &fl) : 0; /* zeros: the caller's */
    }
    return fl;
}

unsigned sfp8f_round_doubles(const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out)
{
    switch (r->rounding) {
    case SFP8_ROUND_NEAREST_EVEN: return round_doubles_loop(SFP8_ROUND_NEAREST_EVEN, r, d, n, out);
    case SFP8_ROUND_NEAREST_AWAY: return round_doubles_loop(SFP8_ROUND_NEAREST_AWAY, r, d, n, out);
    case SFP8_ROUND_TOWARD_ZERO: return round_doubles_loop(SFP8_ROUND_TOWARD_ZERO, r, d, n, out);
    case SFP8_ROUND_UPWARD: return round_doubles_loop(SFP8_ROUND_UPWARD, r, d, n, out);
    case SFP8_ROUND_DOWNWARD: return round_doubles_loop(SFP8_ROUND_DOWNWARD, r, d, n, out);
    default: return round_doubles_loop(SFP8_ROUND_TO_ODD, r, d, n, out);
    }
}
