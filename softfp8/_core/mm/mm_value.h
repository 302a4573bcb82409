/* The matrix engine's exact values and per-call state (mm_value.c), shared by the
 * engine's files (mm_impl.h includes it). */
#ifndef SOFTFP8_MM_VALUE_H
#define SOFTFP8_MM_VALUE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "accum.h"
#include "codes.h"
#include "fast.h"
#include "mm.h"

/* ---- exact values (mm_value.c) ----
 * A value as IEEE arithmetic sees it: zero, finite (-1)^neg * sig * 2^exp with sig
 * odd (every constructor strips trailing zeros, so products of two values of at most
 * 32 significant bits fit sig), infinity or NaN. */
enum { GV_ZERO = 0, GV_FIN, GV_INF, GV_NAN };
typedef struct {
    uint8_t cls, neg, snan, fl; /* fl: denormal when read as an operand */
    uint64_t sig;
    int64_t exp;
} gval;

extern const gval mm_one;
/* binary32 products of scales and the promoted running sums: IEEE default rounding */
extern const sfp8_env mm_env_rne;

void gv_decode(const sfp8_format *f, uint64_t code, gval *v);
/* decodings of every code of a storage format (NULL: no memory) */
gval *gv_table(const sfp8_format *f);
/* v rounded once into f: finite values and zeros by sfp8_round_value, NaN and
   infinity by the core's conversion from binary64 */
uint64_t gv_round(const sfp8_format *f, const sfp8_env *env, const gval *v, uint8_t *fl);
/* the exact product, the special cases as IEEE multiplication has them */
void gv_mul(const gval *x, const gval *y, gval *r, uint8_t *fl);
/* x + y rounded once into f, the special cases as IEEE addition has them */
uint64_t gv_add_round(const sfp8_format *f, const sfp8_env *env, const gval *x, const gval *y, uint8_t *fl);
double gv_double(const gval *v);          /* exact for the values of the fast kernels */
void gv_from_double(double d, gval *v);   /* d finite */
static inline int gv_bitlen(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }
/* s(i, l, j) = sa(i, l) * sb(l, j) rounded once to binary32, nearest even, a subnormal scale
   raising denormal; with md->scale_exact the exact product of the two powers of two, no flag
   (mm_one without scales) */
void mm_scale_at(const sfp8m_model *md, int64_t i, int64_t l, int64_t j, gval *s, uint8_t *fl);
/* the exponent range the scale products add to a product a * b: every scale product of a call
   is a multiple of 2^mm_scale_low below 2^mm_scale_top -- binary32 values (2^-149 .. < 2^128,
   one bit spare above), or (scale_exact) exact products of two of them; 0 and 0 without scales */
static inline int64_t mm_scale_low(const sfp8m_model *md)
{
    return !md->sa.s && !md->sb.s ? 0 : md->scale_exact ? -298 : -149;
}
static inline int64_t mm_scale_top(const sfp8m_model *md)
{
    return !md->sa.s && !md->sb.s ? 0 : md->scale_exact ? 256 : 129;
}
/* (mag + a sticky fraction) * 2^e, negated if neg, rounded once into f by the core
   (mag of up to 128 bits; the msb is moved to bit 63, the bits below it go to the sticky bit) */
uint64_t mm_round_u128(const sfp8_format *f, const sfp8_env *env, int neg, unsigned __int128 mag, int64_t e,
                       int sticky, uint8_t *fl);
/* one output into a buffer of size sz (1, 2, 4, 8) */
static inline void mm_store(char *o, int sz, uint64_t v)
{
    if (sz <= 2) store_code(o, sz, (uint32_t)v);
    else store_raw(o, sz, v);
}

/* the lowest bit and the top of a storage format's values (binary32 for scales):
   every finite value is a multiple of 2^fmt_low below 2^fmt_top */
static inline int64_t fmt_low(const sfp8_format *f) { return (int64_t)-f->bias - f->man_bits; }
static inline int64_t fmt_top(const sfp8_format *f) { return ((int64_t)1 << f->exp_bits) - f->bias + 1; }
static inline int mm_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits / 8; }

/* ---- one call's state ---- */
typedef struct {
    const sfp8m_model *md;
    const char *A, *B;
    ptrdiff_t am, ak, bk, bp;
    int64_t m, k, p;
    gval *da, *db;           /* decodings of every code of A's and B's formats, or NULL: decoded
                                when read (calls of fewer multiply-adds than codes) */
    uint32_t mask_a, mask_b;
    int sza, szb, szo;
    SuperAcc *sacc;          /* the generic exact kernel's accumulator */
    const sfp8f_conv *deca, *decb; /* binary64 decodings (mm_blas.c): specials found without decoding */
    int scale_wide;          /* scale_exact and a scale product of the call may lie outside binary32's
                                2^-149 .. 2^127 (the model kernels, written for binary32 scale
                                products, leave such calls to the generic kernel) */
} mm_call;

/* the state shared by the kernels; 0: no memory */
int mm_call_init(mm_call *c, const sfp8m_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                 ptrdiff_t bk, ptrdiff_t bp, int64_t m, int64_t k, int64_t p);
void mm_call_free(mm_call *c);
/* the decoding table of each format, built if missing and the call reads more than
   `reads` codes of it (INT64_MAX: always; the fast kernels' tables are built from them);
   0: no memory */
int mm_call_tables(mm_call *c, int64_t reads);
/* the value of the code at p (of sz bytes, bits above the width ignored) of f: from
   its table, or decoded */
static inline gval mm_value(const gval *tab, const sfp8_format *f, const char *p, int sz, uint32_t mask)
{
    uint32_t code = load_code(p, sz) & mask;
    gval v;
    if (tab) return tab[code];
    gv_decode(f, code, &v);
    return v;
}
/* the values of A[i, l] and B[l, j] */
#define mm_a(c, i, l) mm_value((c)->da, &(c)->md->fa, (c)->A + (i) * (c)->am + (l) * (c)->ak, (c)->sza, (c)->mask_a)
#define mm_b(c, l, j) mm_value((c)->db, &(c)->md->fb, (c)->B + (l) * (c)->bk + (j) * (c)->bp, (c)->szb, (c)->mask_b)
#endif
