/* Internals shared by the fast-path files of this folder (not included
 * elsewhere): the table cache's interface, environment helpers, unaligned
 * loads and stores, the overlap rule every kernel follows, and the helpers
 * one family lends another (each declared here, defined in its family's file). */
#ifndef SOFTFP8_FAST_IMPL_H
#define SOFTFP8_FAST_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fast.h"
#include "family.h"

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

/* builds the table of key k; sets *bytes to its size; NULL if it cannot.  A
   table is one block of memory (the cache frees it with free()); tables that
   point into other tables get them through sfp8f_cached_nested. */
typedef void *(*sfp8f_builder)(const sfp8f_key *k, size_t *bytes);

/* The table of (kind, op, a, b, env) (b and env may be NULL): a published one
 * (lock-free), else built now if the call is long enough to repay it
 * (n >= entries / 16, or eager mode) and the cache is below its cap; else NULL. */
void *sfp8f_cached(int kind, int op, const sfp8_format *a, const sfp8_format *b, const sfp8_env *env,
                   sfp8f_builder build, ptrdiff_t n, ptrdiff_t entries);
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

/* ---- helpers one family lends another ---- */

/* the conversion table of key k (convert.c; arith16 and sr_arith16 decode with it) */
void *sfp8f_build_conv(const sfp8f_key *k, size_t *bytes);
/* the binary64 key table of key k's format and environment (from_float8.c; fma8
   and sr_from_float8 read it) */
void *sfp8f_build_fromf(const sfp8f_key *k, size_t *bytes);
/* binary32/64 -> format conversions depend on the compressed key only
   (from_float8.c; the 8-bit stochastic families cover these formats) */
int sfp8f_from_float_ok(const sfp8_format *f);
/* the compressed keys of binary32 / binary64 bits (from_float8.c) */
static inline uint32_t sfp8f_key32(uint32_t b)
{
    return ((b >> 16) & 0xfffeu) | ((b & 0x1ffffu) != 0);
}
uint32_t sfp8f_key64(uint64_t b);

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


/* ---- strided 16-bit results block by block (cast16, sr_cast16) ---- */

enum { SFP8F_BLK16 = 256 };

/* a run of m (<= SFP8F_BLK16 unless contiguous) elements, the call's element i0
   first, from contiguous in to contiguous out: the flags */
typedef unsigned (*sfp8f_block16_fn)(const void *ctx, ptrdiff_t i0, const char *in, uint16_t *out, uint8_t *flo,
                                     ptrdiff_t m);

/* the elements i0.. of a call, block by block: strided inputs gathered in their
   own type (the core sees the original bits of uncovered lanes), strided outputs
   scattered */
static inline unsigned sfp8f_blocked16(sfp8f_block16_fn f, const void *ctx, ptrdiff_t i0, const char *a,
                                       ptrdiff_t sa, int isize, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    unsigned acc = 0;
    for (ptrdiff_t i = i0; i < n; i += SFP8F_BLK16) {
        const ptrdiff_t m = n - i < SFP8F_BLK16 ? n - i : SFP8F_BLK16;
        _Alignas(64) char ibuf[SFP8F_BLK16 * 8];
        uint16_t obuf[SFP8F_BLK16];
        const char *in = a + i * sa;
        /* the output in place when it is contiguous and aligned, else through obuf */
        uint16_t *out = so == 2 && ((uintptr_t)(o + i * so) & 1) == 0 ? (uint16_t *)(void *)(o + i * so) : obuf;
        if (sa != isize) {
            for (ptrdiff_t q = 0; q < m; q++) memcpy(ibuf + q * isize, in + q * sa, (size_t)isize);
            in = ibuf;
        }
        acc |= f(ctx, i, in, out, flout ? flout + i : NULL, m);
        if (out == obuf)
            for (ptrdiff_t q = 0; q < m; q++) memcpy(o + (i + q) * so, &obuf[q], 2);
    }
    return acc;
}

#endif
