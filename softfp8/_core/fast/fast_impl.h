/* Internals shared by the fast-path files of this folder (not included
 * elsewhere): the table cache's interface, environment helpers, unaligned
 * loads and stores, and the overlap rule every kernel follows. */
#ifndef SOFTFP8_FAST_IMPL_H
#define SOFTFP8_FAST_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fast.h"

/* ---- the table cache (cache.c) ---- */

/* kinds of cached tables */
enum { T_BIN8 = 1, T_UNARY, T_CONV, T_FROMF, T_SUM, T_FMA, T_A16, T_SR, T_ORD, T_SR8, T_SR16, T_SRCV, T_SRUN, T_SRWC, T_SRWU };

/* What identifies a table.  Only int members (no padding): keys are built
 * with memset and compared and hashed as bytes. */
typedef struct sfp8f_key {
    int kind, op;
    sfp8_format a, b;
    int rounding, saturate, tininess;
} sfp8f_key;

/* builds the table of key k; sets *bytes to its size; NULL if it cannot */
typedef void *(*sfp8f_builder)(const sfp8f_key *k, size_t *bytes);

/* The table of (kind, op, a, b, env) (b and env may be NULL): a published one
 * (lock-free), else built now if the call is long enough to repay it
 * (n >= entries / 16, or eager mode) and the cache is below its cap; else NULL. */
void *sfp8f_cached(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                   sfp8f_builder build, ptrdiff_t n, ptrdiff_t entries);
/* Frees a table built by a builder of key k's kind (cache.c, on eviction). */
void sfp8f_free_table(const sfp8f_key *k, void *data);
/* For builders only (the cache lock is held): the table, built if missing;
 * the table being built pins it (it is not evicted while that one lives). */
void *sfp8f_cached_nested(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                          sfp8f_builder build);

/* ---- environments ---- */

static inline void sfp8f_key_env(const sfp8f_key *k, sfp8_env *env)
{
    env->rounding = k->rounding;
    env->saturate = k->saturate;
    env->tininess_before = k->tininess;
    env->sr_bits = 32;
    env->random = 0;
    env->isa = 0;
}

/* Tables hold deterministic environments only. */
static inline int sfp8f_usable_env(const sfp8_env *env) { return env->rounding != SFP8_ROUND_STOCHASTIC; }
/* the one environment of env-free operations' tables (and of exact decodings) */
extern const sfp8_env sfp8f_free_env;

/* builders shared between files (fast.c) */
void *sfp8f_build_conv(const sfp8f_key *k, size_t *bytes);
void *sfp8f_build_fromf(const sfp8f_key *k, size_t *bytes);
/* the arithmetic float64 cast's parameters of f under a deterministic env (fast.c;
   p->ok 0: not covered) */
struct sfp8s_cast64;
void sfp8f_cast64_params(const sfp8_format *f, const sfp8_env *env, struct sfp8s_cast64 *p);
/* binary32/64 -> format conversions depend on the compressed key only (fast.c) */
int sfp8f_from_float_ok(const sfp8_format *f);

/* ---- unaligned loads and stores ---- */

static inline uint32_t sfp8f_ld16(const char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline uint64_t sfp8f_ld(const char *p, int size)
{
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: return sfp8f_ld16(p);
    case 4: { uint32_t t; memcpy(&t, p, 4); return t; }
    default: { uint64_t t; memcpy(&t, p, 8); return t; }
    }
}

static inline void sfp8f_st(char *p, uint64_t v, int size)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

/* ---- the overlap rule ----
 *
 * NumPy hands inner loops outputs that overlap their inputs on purpose:
 * accumulate calls a binary loop with a = out - stride, o = out, b = in, so
 * element i reads output i-1; reduce passes a == o with stride 0.  A kernel
 * that loads a block of inputs before storing a block of outputs would read
 * outputs it has not written yet.  So every kernel takes its vector/blocked
 * path only when, for each input, the output's byte range is disjoint from
 * the input's or is exactly the same elements (o == a, so == sa, same element
 * size: elementwise in place); otherwise it runs a scalar loop that reads
 * element i's inputs before writing output i, in order.  Strides may be
 * negative or zero. */
static inline void sfp8f_span(const char *p, ptrdiff_t s, ptrdiff_t n, int size, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t b = (uintptr_t)p;
    ptrdiff_t ext = s * (n - 1);
    if (ext >= 0) {
        *lo = b;
        *hi = b + (uintptr_t)ext + (uintptr_t)size;
    } else {
        *lo = b - (uintptr_t)(-ext);
        *hi = b + (uintptr_t)size;
    }
}

/* 1: output (o, so, osize) may be written block-wise while input (a, sa, isize) is read */
static inline int sfp8f_apart(const char *o, ptrdiff_t so, int osize, const char *a, ptrdiff_t sa, int isize,
                              ptrdiff_t n)
{
    uintptr_t ol, oh, al, ah;
    if (n <= 0) return 1;
    /* the same elements, which do not overlap one another (not a zero stride) */
    if (o == a && so == sa && osize == isize && (so >= osize || -so >= osize)) return 1;
    sfp8f_span(o, so, n, osize, &ol, &oh);
    sfp8f_span(a, sa, n, isize, &al, &ah);
    return oh <= al || ah <= ol;
}

#endif
