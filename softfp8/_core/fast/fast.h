/* Fast paths (internal): tables derived at run time from the exact core, and
 * kernels that read them.  Every table entry is computed by the core itself
 * (ops.c), so a table path is exactly the core; the SIMD kernels and the
 * specialised roundings (round_f64.c, stochastic.c, the fma of fast.c) are
 * checked against the core by the tests named in their files.
 *
 * Layout of this folder: fast.c (switches, 8-bit and conversion tables and
 * their kernels, fma), cache.c (the table cache), round_f64.c (binary64 ->
 * format rounding, 16-bit add/sub/mul), stochastic.c (stochastic casts),
 * fast_simd.c (AVX-512 kernels), fast_impl.h (internals of the folder).
 *
 * Tables are built on first use, cached for the life of the process, and
 * never change once published; lookups are lock-free, building takes a
 * mutex.  NULL means "no fast path here: use the generic core" (stochastic
 * rounding, formats the tables do not cover, fast paths disabled, a call too
 * short to repay a missing table, or the cache at its cap).
 *
 * Rules every kernel (sfp8f_run_*) follows:
 *  - codes: a format narrower than its storage reads code & ((1 << bits) - 1),
 *    as the core does: tables of formats of <= 8 bits cover every storage byte
 *    (each entry computed by the core, which masks), two-byte codes are masked
 *    by the kernels before indexing;
 *  - overlap: outputs may overlap inputs as NumPy's accumulate / reduce pass
 *    them; the blocked (SIMD) paths run only on disjoint or exactly aliased
 *    operands, else a scalar loop reads element i before writing output i
 *    (fast_impl.h, sfp8f_apart); strides are in bytes, any sign, zero allowed;
 *  - flout: if not NULL, flout[i] receives element i's flags (contiguous);
 *  - the return value is the OR of all elements' flags. */
#ifndef SOFTFP8_FAST_H
#define SOFTFP8_FAST_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "softfp8/softfp8.h"

/* 1 unless disabled by SOFTFP8_FAST=0 in the environment or by sfp8f_set_enabled(0);
 * 2 (eager: build every table on first use, whatever the call length) with
 * SOFTFP8_FAST=2 or sfp8f_set_enabled(2).  Every table getter takes the length n
 * of the call that asks: a missing table is built only if n repays it. */
int sfp8f_enabled(void);
int sfp8f_set_enabled(int on); /* returns the previous setting */
/* Which SIMD level the kernels use: 0 portable C, 1 AVX2, 2 AVX-512
 * (F/BW/VL/DQ/VBMI, which implies the AVX2 kernels too).  SOFTFP8_SIMD=0 or 1
 * in the environment caps the level (default: the best the CPU has). */
int sfp8f_simd_level(void);
int sfp8f_set_simd(int level); /* clamps to what the CPU has; returns the previous level */
/* The table cache (for tests and diagnostics).  hits / misses count the
 * lookups of kernels' callers (a miss builds a table when the call is long
 * enough); builds counts tables built (including those a table is built
 * from); refused_over_cap counts tables not cached because they could not fit
 * the budget; evicted / freed count tables evicted and evicted tables whose
 * memory was released. */
typedef struct sfp8f_cache_info {
    size_t tables, bytes, cap;
    uint64_t hits, misses, builds, refused_over_cap, evicted, freed;
} sfp8f_cache_info;
void sfp8f_cache_stats(sfp8f_cache_info *info);
/* The byte budget of the cached tables (default 32 MiB): least recently used
 * tables are evicted to stay within it; returns the previous budget. */
size_t sfp8f_set_cache_cap(size_t bytes);
/* Release evicted tables that no read section can still hold. */
void sfp8f_cache_reclaim(void);
/* Read sections: every use of a table (from the getter call that returns it
 * to the end of the kernels that read it) lies between sfp8f_read_begin and
 * sfp8f_read_end(token); evicted tables are freed only after every read
 * section that could have seen them has ended.  Never blocks. */
unsigned sfp8f_read_begin(void);
void sfp8f_read_end(unsigned token);

/* ---- binary operations of an 8-bit format: 65,536 entries, index a << 8 | b,
 *      entry = result byte | flags << 8 ---- */
const uint16_t *sfp8f_binary8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);

/* ---- unary operations of a format of <= 16 bits: 256 entries (every storage
 *      byte) for formats of <= 8 bits, else 2^bits entries indexed by code & mask;
 *      entry = result | flags << 16 ---- */
typedef struct sfp8f_un {
    uint32_t mask;       /* entries - 1 */
    const uint32_t *val;
} sfp8f_un;
const sfp8f_un *sfp8f_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);

/* ---- conversion from a format of <= 16 bits (binary16 allowed) to any
 *      descriptor: 2^bits entries of the destination code, plus flags ---- */
typedef struct sfp8f_conv {
    int n;              /* entries: 256 for sources of <= 8 bits (every storage byte),
                           else 1 << bits; two-byte codes index code & (n - 1) */
    const uint64_t *val;
    const uint8_t *fl;
    uint8_t any_flags;  /* OR of all fl[] */
    /* byte planes for the SIMD lookup: plane k = byte k of val (8-bit sources) */
    const uint8_t *planes; /* 8 * 256 bytes, or NULL */
} sfp8f_conv;
const sfp8f_conv *sfp8f_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                ptrdiff_t n);

/* ---- binary32 / binary64 -> 8-bit format with at most 4 mantissa bits:
 *      65,536 entries indexed by the compressed binary32 key
 *      (sign, exponent, 6 leading mantissa bits, sticky); entry = code | flags << 8 ---- */
const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n);

/* ---- exact sums of an 8-bit format: every finite value is v[c] * 2^qmin with
 *      |v[c]| < 2^40; special[c] marks NaN / infinity codes ---- */
#define SFP8F_SUM_NONZERO 1
#define SFP8F_SUM_POSZERO 2
#define SFP8F_SUM_NEGZERO 4
#define SFP8F_SUM_SPECIAL 8
typedef struct sfp8f_sum {
    int64_t v[256];       /* value / 2^qmin, qmin = -bias - man_bits */
    uint8_t fl[256];      /* flags reading the code raises (denormal) */
    uint8_t cat[256];     /* SFP8F_SUM_* */
    int vbits;            /* max |v| < 2^vbits */
} sfp8f_sum;
const sfp8f_sum *sfp8f_sum_table(const sfp8_format *f, ptrdiff_t n);

/* ---- kernels (strides in bytes; return the OR of the flags; see the rules above) ---- */
/* one-byte codes in, one byte out (a code, a 0/1 predicate or an sfp8_relation) */
unsigned sfp8f_run_binary8(const uint16_t *tab, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                           char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);
/* codes of `size` bytes (1 or 2), output of `osize` bytes (size, or 1 for predicates) */
unsigned sfp8f_run_unary(const sfp8f_un *t, const char *a, ptrdiff_t sa, int size, char *o, ptrdiff_t so,
                         int osize, ptrdiff_t n, uint8_t *flout);
/* source codes of isize bytes (1 or 2), destination of osize bytes (1, 2, 4 or 8) */
unsigned sfp8f_run_convert(const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize, char *o,
                           ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout);
/* isize 4 (binary32) or 8 (binary64); one-byte codes out */
unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o,
                              ptrdiff_t so, ptrdiff_t n, uint8_t *flout);
/* Exact sum: *acc += sum of v[c]; returns the flags; ORs the categories seen
 * into *cats (a NaN or infinity: the caller takes the generic path). */
unsigned sfp8f_run_sum(const sfp8f_sum *t, const char *a, ptrdiff_t sa, ptrdiff_t n, __int128 *acc,
                       unsigned *cats);

/* the compressed binary32 key (exposed for the tests through the module) */
static inline uint32_t sfp8f_key32(uint32_t b)
{
    return ((b >> 16) & 0xfffeu) | ((b & 0x1ffffu) != 0);
}
uint32_t sfp8f_key64(uint64_t b);

/* ---- fused multiply-add of an 8-bit format: a*b exactly in binary64, the
 *      sum by TwoSum rounded to odd (53 bits keep every decision of a
 *      <= 5-bit format), then the binary64 key table.  NaN/infinity operands
 *      and exact-zero results take the core. ---- */
typedef struct sfp8f_fma {
    double v[256];
    uint8_t fl[256];      /* flags reading the code raises (denormal) */
    uint8_t special[256]; /* NaN or infinity */
    uint8_t info[256];    /* fl | 0x80 for NaN or infinity (the SIMD kernel's table) */
    uint8_t hb[2][256];   /* bytes 2 and 3 of the finite values' binary32 bits (SIMD) */
    int hb_ok;            /* 1: every finite value is a binary32 with zero low 16 bits */
    const uint16_t *fromf;
} sfp8f_fma;
const sfp8f_fma *sfp8f_fma_table(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
unsigned sfp8f_run_fma(const sfp8f_fma *t, const sfp8_format *f, const sfp8_env *env, const char *a,
                       ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc, char *o,
                       ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- rounding of a binary64 value (exact, or rounded to odd at 53 bits) into
 *      a signed format with IEEE subnormals, no FNUZ, and 1..23 mantissa bits
 *      (16-bit formats, binary32): the core's round_pack specialised per
 *      rounding mode.  Used by the 16-bit arithmetic and the binary32 results
 *      of matmul; checked against the core by the tests. ---- */
typedef struct sfp8f_rnd {
    int M, emin, tb, rounding;
    uint32_t maxmag, signbit, ovf0, ovf1; /* overflow results (from the core) */
    unsigned ovf_fl0, ovf_fl1;
} sfp8f_rnd;
/* 0: the format or environment is not covered (deterministic modes only) */
int sfp8f_rounder(const sfp8_format *f, const sfp8_env *env, sfp8f_rnd *r);
/* out[i] = d[i] rounded (d[i] finite and normal; a zero gives 0 and no flags:
 * the sign of an exact zero is the caller's); returns the OR of the flags */
unsigned sfp8f_round_doubles(const sfp8f_rnd *r, const double *d, ptrdiff_t n, uint32_t *out);

/* ---- add/sub/mul/div/fma of a 16-bit format covered by sfp8f_rounder with
 *      at most 8 exponent bits (float16, bfloat16, hfp16_169, ...): operands
 *      decoded to binary64, the exact result rounded to odd (the quotient
 *      correctly rounded), then sfp8f_rnd.  NaN/infinity operands, division by
 *      zero and exact zero quotients / fma results take the core. ---- */
typedef struct sfp8f_a16 {
    const sfp8f_conv *dec; /* format -> binary64 */
    sfp8f_rnd r;
    const uint64_t *vf;    /* the SIMD kernels' decoding table (fast_simd.h), or NULL (none, or arith) */
    int arith;             /* 1: the SIMD kernels may compute vf (fast_simd.h, sfp8s_a16) */
    int core_only;         /* 1: r holds only M, emin, rounding, maxmag, signbit (0: unsigned);
                              SIMD kernels for the normal range, the core for the rest (SHP, UHP) */
    uint64_t off;          /* its constants: exponent offset, */
    int emax_field;        /* all-ones exponent field */
} sfp8f_a16;
/* 1 for the operations sfp8f_run_arith16 takes (add, sub, mul, div, fma) */
int sfp8f_arith16_op(int op);
const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
/* c, sc: the addend of fma (ignored for binary operations) */
unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                           const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc,
                           char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- stochastic rounding binary32/binary64 -> 8-bit format (from_float
 *      formats): inside the normal range, below overflow, the result is the
 *      toward-zero or the away-from-zero neighbour, chosen by the core's rule
 *      t + R >= 2^N with t = floor(fraction * 2^N) and R the counter-based
 *      random bits of the element; everything else takes the core. ---- */
typedef struct sfp8f_sr {
    const uint16_t *rz, *up, *dn; /* key tables: toward zero, upward, downward */
    const uint32_t *rza;          /* rz | aw << 16, aw = away from zero (up for positive keys, dn for negative);
                                     aw = rz for zero/inf/NaN keys, | 0x8000 for keys the SIMD kernels
                                     send to the core (stochastic.c, build_sr) */
    int man_bits, emin;
    /* the AVX-512 kernel's arithmetic form (fast_simd.h, sfp8s_sr.ar) */
    int ar;
    uint32_t maxmag, signbit, negzero;
} sfp8f_sr;
const sfp8f_sr *sfp8f_stochastic(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n);
/* random bits of element i: sfp8_random_u32(seed, stream, index0 + i) */
unsigned sfp8f_run_from_float_sr(const sfp8f_sr *t, const sfp8_format *dst, const sfp8_env *env, uint64_t seed,
                                 uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, int isize, char *o,
                                 ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- add / subtract / multiply (op X_ADD, X_SUB, X_MUL) of an 8-bit format
 *      (sfp8f_stochastic formats) under stochastic rounding: a table of the
 *      core's two candidate results per operand pair and the fraction t32
 *      deciding between them (stochastic.c, build_sr8); pairs it cannot
 *      state take the core.  Random bits of element i as
 *      sfp8f_run_from_float_sr. ---- */
typedef struct sfp8f_sr8 {
    uint64_t e[65536]; /* ts | rz << 32 | rz flags << 40 | ra << 48 | ra flags << 56; flags 0x80: the core,
                          0x40: ra's flags depend on tu (stochastic.c) */
    uint32_t tu[65536];
    uint8_t nf[65536];
    uint32_t q[65536];  /* the SIMD kernel's compact table (stochastic.c, sr8_compact) */
    uint32_t pal[16];   /* its flag palette: rz flags << 8 | ra flags << 24 */
} sfp8f_sr8;
const sfp8f_sr8 *sfp8f_stochastic8(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
/* the same table for the conversion src -> dst of codes (src of at most 16
   bits, dst of at most 8), or for a unary operation (ops.def K_UNARY) of an
   8-bit format (src = dst = f), one entry per source code; and its run (op -1:
   the conversion), random bits of element i: sfp8_random_u32(seed, stream,
   index0 + i) (stochastic.c) */
const sfp8f_sr8 *sfp8f_stochastic_conv(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                       ptrdiff_t n);
const sfp8f_sr8 *sfp8f_stochastic_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
/* conversions (src of at most 16 bits) into formats of 9..16 bits and unary
   operations of those formats under stochastic rounding, one entry per source
   code; run element by element (op -1: the conversion), or sixteen / eight
   elements at a time by the SIMD kernels (fast_simd.h, sfp8s_srw) (stochastic.c) */
typedef struct sfp8f_srw {
    /* ts | rz << 32 | d << 48 | rz flags << 50 | ra flags << 57 (7 bits each), ra = rz + d - 1
       (mod 2^16); SRW_FCORE in the flags chosen: the core */
    uint64_t e[65536];
} sfp8f_srw;
enum { SRW_FCORE = 0x40 }; /* no flag of softfp8.h uses it */
const sfp8f_srw *sfp8f_stochastic_wide(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env,
                                       ptrdiff_t n);
const sfp8f_srw *sfp8f_stochastic_wide_unary(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
unsigned sfp8f_run_wide_sr(const sfp8f_srw *t, int op, const sfp8_format *src, const sfp8_format *dst,
                           const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                           ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);
unsigned sfp8f_run_conv_sr(const sfp8f_sr8 *t, int op, const sfp8_format *src, const sfp8_format *dst,
                           const sfp8_env *env, uint64_t seed, uint64_t stream, uint64_t index0, const char *a,
                           ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- add / subtract / multiply (X_ADD, X_SUB, X_MUL) of a 16-bit format
 *      covered by sfp8f_rounder under stochastic rounding: results normal in
 *      the format from exact binary64 values (stochastic.c); the rest takes
 *      the core.  Random bits of element i as sfp8f_run_from_float_sr. ---- */
typedef struct sfp8f_sr16 {
    uint64_t vf[65536]; /* code & mask -> binary64 bits | the flags reading it raises | 0x80 NaN / infinity */
    uint32_t mask;
    sfp8f_rnd r;        /* M, emin, maxmag, signbit */
    /* 8-bit formats: 1 if the SIMD fma kernel may decode the codes arithmetically
       (fast_simd.h, sfp8s_srf: checked against vf for every code), with its constants */
    int dec8, sshift;
    uint64_t magmask, off, subfl;
    double sub;
} sfp8f_sr16;
const sfp8f_sr16 *sfp8f_stochastic16(int op, const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
/* x op y for the 8-bit table t (sfp8f_stochastic8) or the 16-bit one (sfp8f_stochastic16), by f->bits */
unsigned sfp8f_run_arith_sr(const void *t, int op, const sfp8_format *f, const sfp8_env *env, uint64_t seed,
                            uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, const char *b,
                            ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);
/* fma of a format of 1..16 bits under stochastic rounding (the table of
   sfp8f_stochastic16's kind; NULL if not covered, e.g. M + N > 51) and its
   run: o = a*b + z, the random bits of element i as above (stochastic.c) */
const sfp8f_sr16 *sfp8f_stochastic_fma(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
unsigned sfp8f_run_fma_sr(const sfp8f_sr16 *t, const sfp8_format *f, const sfp8_env *env, uint64_t seed,
                          uint64_t stream, uint64_t index0, const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb,
                          const char *z, ptrdiff_t sz, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- comparisons and maximum / minimum / fmax / fmin of formats of 9..16
 *      bits on the order keys of order.h (order16.c); NaN and flushed
 *      subnormal operands take the core.  The cached table is the format's
 *      struct sfp8_order. ---- */
struct sfp8_order;
int sfp8f_order16_op(int op);
const struct sfp8_order *sfp8f_order16(int op, const sfp8_format *f, ptrdiff_t n);
/* o: one byte (0/1) for comparisons, else a two-byte code */
unsigned sfp8f_run_order16(const struct sfp8_order *t, int op, const sfp8_format *f, const char *a, ptrdiff_t sa,
                           const char *b, ptrdiff_t sb, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- exact binary64 helpers (the fast paths and the gemm kernel, gemm.c) ---- */

static inline uint64_t sfp8f_dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

/* DERIVED from core.c round_pack: rounding to odd at binary64's 53 bits.
 * p + q = s + err exactly (TwoSum); returns the bits of (p + q) rounded to odd,
 * which keeps every rounding decision of a format with at most 51 significand
 * bits (the final rounding then happens once, from these bits).  Proven equal,
 * through its users, by tests/fast/test_fast_arith.py::test_fma_exhaustive_nearest_even,
 * ::test_fma_random_all_configs, ::test_16bit_arith_random, ::test_16bit_arith_configs. */
static inline uint64_t sfp8f_odd_sum(double p, double q, double *s_out)
{
    double s = p + q;
    double bb = s - p;
    double err = (p - (s - bb)) + (q - bb);
    uint64_t b = sfp8f_dbits(s);
    /* branch-free: if err != 0 and b is even, step one ulp towards err */
    uint64_t move = (uint64_t)((err != 0) & !(b & 1));
    uint64_t dir = (uint64_t)((err > 0) == (s > 0)); /* 1: magnitude up, 0: down */
    *s_out = s;
    return b + (move & dir) - (move & (dir ^ 1));
}
#endif
