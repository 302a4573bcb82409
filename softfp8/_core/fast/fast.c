/* Fast paths: the switches, the tables of 8-bit operations, unary
 * operations, conversions and sums, the fma of 8-bit formats, and the
 * portable kernels that read them (see fast.h for the rules every kernel
 * follows).  The table cache is cache.c, the SIMD kernels fast_simd.c. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "fast_simd.h"
#include "ops.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

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
        /* SOFTFP8_SIMD=0 portable C, 1 at most AVX2, 2 (or unset) the best the CPU has */
        const char *v = getenv("SOFTFP8_SIMD");
        int cpu = sfp8s_cpu_level();
        s = env_off("SOFTFP8_SIMD") ? 0 : (v && strcmp(v, "1") == 0 && cpu > 1) ? 1 : cpu;
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


/* env-free operations share one table, built in this environment */
const sfp8_env sfp8f_free_env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};

/* ------------------------------------------------------------------------ */
/* Builders                                                                  */
/* ------------------------------------------------------------------------ */

static void *build_bin8(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++) {
            uint8_t fl = 0;
            uint32_t r = sfp8x_apply(k->op, &k->a, a, b, 0, &env, &fl);
            t[a << 8 | b] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
        }
    memset(t + 65536, 0, 64);
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

const uint16_t *sfp8f_binary8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    /* env-free operations have one table whatever the context (stochastic too) */
    if (sfp8x_env_free(op)) env = &sfp8f_free_env;
    if (!sfp8f_enabled() || f->bits > 8 || !X_IS_BINARY(op) || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_BIN8, op, f, NULL, env, build_bin8, n, 65536);
}

typedef struct {
    sfp8f_un u;
    uint32_t val[];
} un_store;

/* Entries of a unary or conversion table: every storage byte for formats of
 * <= 8 bits (the core masks each byte to the width, so one-byte codes index
 * the table unmasked), else 2^bits (two-byte codes are masked in the kernels). */
static uint32_t code_entries(const sfp8_format *f) { return f->bits <= 8 ? 256u : (uint32_t)1 << f->bits; }

static void *build_unary(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint32_t n = code_entries(&k->a);
    un_store *t = malloc(sizeof *t + n * sizeof(uint32_t));
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t a = 0; a < n; a++) {
        uint8_t fl = 0;
        uint32_t r = sfp8x_apply(k->op, &k->a, a, 0, 0, &env, &fl);
        t->val[a] = (r & 0xffffu) | (uint32_t)fl << 16;
    }
    t->u.mask = n - 1;
    t->u.val = t->val;
    *bytes = n * sizeof(uint32_t);
    return t;
}

const sfp8f_un *sfp8f_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    /* env-free operations have one table whatever the context (stochastic too) */
    if (sfp8x_env_free(op)) env = &sfp8f_free_env;
    if (!sfp8f_enabled() || f->bits > 16 || !X_IS_UNARY(op) || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_UNARY, op, f, NULL, env, build_unary, n, (ptrdiff_t)1 << f->bits);
}

typedef struct {
    sfp8f_conv c;
    uint64_t *val;
    uint8_t *fl;
    uint8_t *planes;
} conv_store;

void *sfp8f_build_conv(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    int n = (int)code_entries(&k->a);
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
    sfp8f_key_env(k, &env);
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

void sfp8f_free_table(const sfp8f_key *k, void *data)
{
    if (k->kind == T_CONV) { /* the one layout with parts of its own */
        conv_store *cs = data;
        free(cs->val);
        free(cs->fl);
        free(cs->planes);
    }
    free(data); /* every other table is one block; nested tables are cache entries */
}

const sfp8f_conv *sfp8f_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                ptrdiff_t n)
{
    if (!sfp8f_enabled() || src->bits > 16 || !sfp8f_usable_env(env)) return NULL;
    return sfp8f_cached(T_CONV, 0, src, dst, env, sfp8f_build_conv, n, (ptrdiff_t)1 << src->bits);
}

/* DERIVED from core.c round_pack: binary32 / binary64 -> format through the
 * compressed key (fast.h, sfp8f_key32 / sfp8f_key64).  Each key entry is the
 * core's rounding of one member of the key's class; the claim is that every
 * member of a class rounds the same way in the formats sfp8f_from_float_ok
 * accepts.  Proven equal by tests/fast/test_fast_paths.py::test_key_class_members_are_classes,
 * ::test_cast_float32_key_classes, ::test_cast_float_structured,
 * ::test_cast_float32_random, ::test_cast_float64_random, and under every
 * calling convention by tests/fast/test_fast_layouts.py::test_cast_layouts and
 * ::test_direct_from_float. */
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
int sfp8f_from_float_ok(const sfp8_format *f)
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

/* The arithmetic binary64 kernels' parameters (fast_simd.h, sfp8s_cast64;
 * cast64.c): signed formats with IEEE subnormals and 1..4 mantissa bits (the
 * rest of sfp8f_from_float_ok's conditions hold), zeros packed without flags,
 * overflow results from the core. */
void sfp8f_cast64_params(const sfp8_format *f, const sfp8_env *env, sfp8s_cast64 *p)
{
    uint8_t fl = 0;
    uint32_t z0, z1;
    memset(p, 0, sizeof *p);
    if (!f->is_signed || f->subnormals != SFP8_SUBNORMALS_IEEE || f->man_bits < 1 || f->man_bits > 4 ||
        f->bits > 8 || env->rounding == SFP8_ROUND_STOCHASTIC)
        return;
    p->M = f->man_bits;
    p->emin = 1 - f->bias;
    p->tb = env->tininess_before != 0;
    p->rounding = env->rounding;
    p->maxmag = sfp8_max_code(f);
    p->signbit = 1u << (f->bits - 1);
    z0 = (uint32_t)sfp8_round_value(f, 0, 0, 0, 0, env, &fl);
    z1 = (uint32_t)sfp8_round_value(f, 1, 0, 0, 0, env, &fl);
    if (fl || z0 != 0 || (z1 != 0 && z1 != p->signbit) || p->maxmag >= p->signbit) return;
    p->negzero = z1 != 0;
    for (int s = 0; s < 2; s++) {
        uint8_t of = 0;
        uint32_t c = (uint32_t)sfp8_round_value(f, s, 1, 4000, 0, env, &of);
        if (s) p->ovf1 = c, p->ovf_fl1 = of;
        else p->ovf0 = c, p->ovf_fl0 = of;
    }
    p->ok = 1;
}

/* the parameters stored after a key table's entries and padding */
static const sfp8s_cast64 *cast64_of(const uint16_t *tab)
{
    return (const sfp8s_cast64 *)(const void *)((const char *)tab + 65536 * sizeof(uint16_t) + 64);
}

void *sfp8f_build_fromf(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    uint16_t *t = malloc(65536 * sizeof(uint16_t) + 64 + sizeof(sfp8s_cast64));
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    for (uint32_t key = 0; key < 65536; key++) {
        uint8_t fl = 0;
        uint32_t rep = (key >> 1) << 17 | (key & 1); /* a member of the key's class */
        uint32_t r = (uint32_t)sfp8_convert(&sfp8_binary32, &k->a, rep, &env, &fl);
        t[key] = (uint16_t)((r & 0xffu) | (uint32_t)fl << 8);
    }
    memset(t + 65536, 0, 64);
    sfp8f_cast64_params(&k->a, &env, (sfp8s_cast64 *)(void *)((char *)t + 65536 * sizeof(uint16_t) + 64));
    *bytes = 65536 * sizeof(uint16_t);
    return t;
}

const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || !sfp8f_from_float_ok(dst)) return NULL;
    return sfp8f_cached(T_FROMF, 0, dst, NULL, env, sfp8f_build_fromf, n, 65536);
}

static void *build_sum(const sfp8f_key *k, size_t *bytes)
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
    return sfp8f_cached(T_SUM, 0, f, NULL, NULL, build_sum, n, 256);
}

/* ------------------------------------------------------------------------ */
/* Portable kernels (the SIMD prefixes only where sfp8f_apart allows)        */
/* ------------------------------------------------------------------------ */

/* Binary tables are indexed by whole storage bytes and hold the core's result
 * for every pair of bytes (the core masks codes to the format's width), so
 * out-of-width codes need no masking here. */
static ALWAYS_INLINE unsigned bin8_loop(int FL, const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b,
                                        ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t i, ptrdiff_t n,
                                        uint8_t *flout)
{
    unsigned acc = 0;
    if (sa == 1 && sb == 1 && so == 1) { /* contiguous: indexed form, still in order */
        const uint8_t *x = (const uint8_t *)a - i, *y = (const uint8_t *)b - i;
        uint8_t *z = (uint8_t *)o - i;
        for (; i < n; i++) {
            uint16_t v = tab[(uint32_t)x[i] << 8 | y[i]];
            z[i] = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 8);
        }
        return acc;
    }
    for (; i < n; i++, a += sa, b += sb, o += so) {
        uint16_t v = tab[(uint32_t)*(const uint8_t *)a << 8 | *(const uint8_t *)b];
        *(uint8_t *)o = (uint8_t)v;
        acc |= v;
        if (FL) flout[i] = (uint8_t)(v >> 8);
    }
    return acc;
}

unsigned sfp8f_run_binary8(const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                           char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (flout) return bin8_loop(1, tab, a, sa, b, sb, o, so, 0, n, flout) >> 8;
    if (sa == 1 && sb == 1 && so == 1 && sfp8f_simd_level() >= 1 && sfp8f_apart(o, 1, 1, a, 1, 1, n) &&
        sfp8f_apart(o, 1, 1, b, 1, 1, n)) {
        i = sfp8f_simd_level() >= 2 ? sfp8s_binary8(tab, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)o, n, &acc)
                                    : sfp8s_binary8_avx2(tab, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)o, n,
                                                         &acc);
        a += i;
        b += i;
        o += i;
    }
    acc |= bin8_loop(0, tab, a, sa, b, sb, o, so, i, n, NULL);
    return acc >> 8;
}

/* unary tables: one-byte codes index all 256 entries, two-byte codes are
 * masked to the width (code_entries) */
static ALWAYS_INLINE uint32_t unary_loop(int FL, const sfp8f_un *t, const char *a, ptrdiff_t sa, int size,
                                         char *o, ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout)
{
    const uint32_t *tab = t->val, mask = t->mask;
    uint32_t acc = 0;
    if (size == 1 && osize == 1 && sa == 1 && so == 1) { /* contiguous: indexed form, still in order */
        const uint8_t *x = (const uint8_t *)a;
        uint8_t *z = (uint8_t *)o;
        for (ptrdiff_t i = 0; i < n; i++) {
            uint32_t v = tab[x[i]];
            z[i] = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    } else if (size == 1 && osize == 1) {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
            uint32_t v = tab[*(const uint8_t *)a];
            *(uint8_t *)o = (uint8_t)v;
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    } else {
        for (ptrdiff_t i = 0; i < n; i++, a += sa, o += so) {
            uint32_t c = size == 1 ? *(const uint8_t *)a : sfp8f_ld16(a) & mask;
            uint32_t v = tab[c];
            sfp8f_st(o, v & 0xffffu, osize);
            acc |= v;
            if (FL) flout[i] = (uint8_t)(v >> 16);
        }
    }
    return acc;
}

unsigned sfp8f_run_unary(const sfp8f_un *t, const char *a, ptrdiff_t sa, int size, char *o, ptrdiff_t so,
                         int osize, ptrdiff_t n, uint8_t *flout)
{
    if (flout) return unary_loop(1, t, a, sa, size, o, so, osize, n, flout) >> 16;
    return unary_loop(0, t, a, sa, size, o, so, osize, n, NULL) >> 16;
}

static ALWAYS_INLINE unsigned convert_loop(int FL, const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize,
                                           char *o, ptrdiff_t so, int osize, ptrdiff_t i, ptrdiff_t n,
                                           uint8_t *flout)
{
    const uint32_t mask = (uint32_t)c->n - 1;
    unsigned acc = 0;
    for (; i < n; i++, a += sa, o += so) {
        uint32_t x = isize == 1 ? *(const uint8_t *)a : sfp8f_ld16(a) & mask; /* code_entries */
        sfp8f_st(o, c->val[x], osize);
        acc |= c->fl[x];
        if (FL) flout[i] = c->fl[x];
    }
    return acc;
}

unsigned sfp8f_run_convert(const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize, char *o,
                           ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (flout) return convert_loop(1, c, a, sa, isize, o, so, osize, 0, n, flout);
    /* planes exist for 256-entry tables (sources of <= 8 bits): every byte indexes them */
    if (isize == 1 && sa == 1 && so == osize && c->planes && sfp8f_simd_level() >= 2 &&
        sfp8f_apart(o, so, osize, a, 1, 1, n)) {
        i = sfp8s_lut8(c->planes, c->any_flags ? c->fl : NULL, osize, (const uint8_t *)a, o, n, &acc);
        a += i;
        o += i * so;
    }
    if (isize == 1) return acc | convert_loop(0, c, a, sa, 1, o, so, osize, i, n, NULL);
    return acc | convert_loop(0, c, a, sa, 2, o, so, osize, i, n, NULL);
}

static ALWAYS_INLINE unsigned from_float_loop(int FL, const uint16_t *tab, const char *a, ptrdiff_t sa,
                                              int isize, char *o, ptrdiff_t so, ptrdiff_t i, ptrdiff_t n,
                                              uint8_t *flout)
{
    unsigned acc = 0;
    for (; i < n; i++, a += sa, o += so) {
        uint16_t v;
        if (isize == 4) {
            uint32_t bits;
            memcpy(&bits, a, 4);
            v = tab[sfp8f_key32(bits)];
        } else {
            uint64_t bits;
            memcpy(&bits, a, 8);
            v = tab[sfp8f_key64(bits)];
        }
        *(uint8_t *)o = (uint8_t)v;
        acc |= v;
        if (FL) flout[i] = (uint8_t)(v >> 8);
    }
    return acc;
}

unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o,
                              ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (isize == 8 && sa == 8 && so == 1 && sfp8f_simd_level() >= 1 && cast64_of(tab)->ok &&
        sfp8f_apart(o, 1, 1, a, 8, 8, n)) { /* arithmetic (cast64.c) */
        const uint64_t *in = (const uint64_t *)(const void *)a;
        i = sfp8f_simd_level() >= 2 ? sfp8s_cast64_avx512(cast64_of(tab), tab, in, (uint8_t *)o, flout, n, &acc)
                                    : sfp8s_cast64_avx2(cast64_of(tab), tab, in, (uint8_t *)o, flout, n, &acc);
        a += i * sa;
        o += i;
    }
    if (flout) {
        acc |= isize == 4 ? from_float_loop(1, tab, a, sa, 4, o, so, i, n, flout)
                          : from_float_loop(1, tab, a, sa, 8, o, so, i, n, flout);
        return acc >> 8;
    }
    if (i == 0 && sa == isize && so == 1 && sfp8f_simd_level() >= 2 && sfp8f_apart(o, 1, 1, a, sa, isize, n)) {
        if (isize == 4) i = sfp8s_from_f32(tab, (const uint32_t *)(const void *)a, (uint8_t *)o, n, &acc);
        else i = sfp8s_from_f64(tab, (const uint64_t *)(const void *)a, (uint8_t *)o, n, &acc);
        a += i * sa;
        o += i;
    }
    if (isize == 4) acc |= from_float_loop(0, tab, a, sa, 4, o, so, i, n, NULL);
    else acc |= from_float_loop(0, tab, a, sa, 8, o, so, i, n, NULL);
    return acc >> 8;
}

/* sum tables have 256 entries built by the core for every byte */
unsigned sfp8f_run_sum(const sfp8f_sum *t, const char *a, ptrdiff_t sa, ptrdiff_t n, __int128 *acc,
                       unsigned *cats)
{
    unsigned fl = 0, cat = 0;
    /* 64-bit partial sums cannot overflow within a chunk */
    ptrdiff_t chunk = (ptrdiff_t)1 << (62 - t->vbits > 30 ? 30 : 62 - t->vbits);
    while (n > 0) {
        ptrdiff_t m = n < chunk ? n : chunk;
        int64_t s = 0;
        const char *p = a;
        for (ptrdiff_t i = 0; i < m; i++, p += sa) {
            uint8_t c = *(const uint8_t *)p;
            s += t->v[c];
            fl |= t->fl[c];
            cat |= t->cat[c];
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

/* DERIVED from core.c round_pack (through sfp8_fma): the exact product in
 * binary64, the sum rounded to odd (sfp8f_odd_sum), then the binary64 key
 * table (built by the core); NaN/infinity operands and zero sums take the
 * core.  Operand tables have 256 entries built by the core for every byte.
 * Proven equal by tests/fast/test_fast_arith.py::test_fma_exhaustive_nearest_even
 * and ::test_fma_random_all_configs, and under every calling convention by
 * tests/fast/test_fast_layouts.py::test_fma_layouts. */
static void *build_fma(const sfp8f_key *k, size_t *bytes)
{
    sfp8_env env;
    sfp8f_fma *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    sfp8f_key_env(k, &env);
    t->fromf = sfp8f_cached_nested(T_FROMF, 0, &k->a, NULL, &env, sfp8f_build_fromf);
    if (!t->fromf) {
        free(t);
        return NULL;
    }
    for (uint32_t c = 0; c < 256; c++) {
        uint8_t fl = 0;
        uint64_t b = sfp8_convert(&k->a, &sfp8_binary64, c, &sfp8f_free_env, &fl);
        int cls = sfp8_classify(&k->a, c);
        memcpy(&t->v[c], &b, 8);
        t->fl[c] = fl;
        t->special[c] = cls >= SFP8_CLASS_INF;
        t->info[c] = (uint8_t)(fl | (t->special[c] ? 0x80 : 0));
    }
    t->hb_ok = 1;
    for (uint32_t c = 0; c < 256; c++) {
        float x = (float)t->v[c];
        uint32_t u;
        memcpy(&u, &x, 4);
        if (t->special[c]) continue;
        if ((double)x != t->v[c] || (u & 0xffffu)) t->hb_ok = 0;
        t->hb[0][c] = (uint8_t)(u >> 16);
        t->hb[1][c] = (uint8_t)(u >> 24);
    }
    *bytes = sizeof *t;
    return t;
}

const sfp8f_fma *sfp8f_fma_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n)
{
    if (!sfp8f_enabled() || !sfp8f_usable_env(env) || !sfp8f_from_float_ok(f)) return NULL;
    return sfp8f_cached(T_FMA, 0, f, NULL, env, build_fma, n, 65536);
}

unsigned sfp8f_run_fma(const sfp8f_fma *t, const sfp8_format *f, const sfp8_env *env, const char *a,
                       ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc, char *o,
                       ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    ptrdiff_t i = 0;
    if (sa == 1 && sb == 1 && sc == 1 && so == 1 && sfp8f_simd_level() >= 1 && t->hb_ok &&
        (sfp8f_simd_level() >= 2 || n >= 64) && /* AVX2: a 1 KiB table per call */
        sfp8f_apart(o, 1, 1, a, 1, 1, n) && sfp8f_apart(o, 1, 1, b, 1, 1, n) && sfp8f_apart(o, 1, 1, c, 1, 1, n)) {
        const sfp8s_fma8 p = {t->hb[0], t->info, t->fromf, f, env};
        i = sfp8f_simd_level() >= 2
                ? sfp8s_fma8_avx512(&p, (const uint8_t *)a, (const uint8_t *)b, (const uint8_t *)c, (uint8_t *)o, n,
                                    flout, &acc)
                : sfp8s_fma8_avx2(&p, (const uint8_t *)a, (const uint8_t *)b, (const uint8_t *)c, (uint8_t *)o, n,
                                  flout, &acc);
        a += i;
        b += i;
        c += i;
        o += i;
    }
    for (; i < n; i++, a += sa, b += sb, c += sc, o += so) {
        uint8_t x = *(const uint8_t *)a, y = *(const uint8_t *)b, z = *(const uint8_t *)c;
        double s;
        uint64_t bits;
        if (t->special[x] | t->special[y] | t->special[z]) goto core;
        bits = sfp8f_odd_sum(t->v[x] * t->v[y], t->v[z], &s);
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
