/* Fast paths (internal to softfp8/_core): what the rest of the core sees of
 * fast/.  The fast paths are kernel families (family.h, families.def), each
 * computing exactly the core's codes and flags faster: tables built at run
 * time by the core itself, SIMD kernels, and the DERIVED rounding
 * specialisations (each labelled with the test that proves it equal).  The
 * array driver (driver.c) runs them through the families table; the matrix
 * engine uses the entries below.  Layout: docs/architecture.md, "Fast-path
 * families".
 *
 * Tables are built on first use, cached for the life of the process, and
 * never change once published; lookups are lock-free, building takes a
 * mutex.  NULL means "no fast path here: use the generic core" (stochastic
 * rounding, formats the tables do not cover, fast paths disabled, a call too
 * short to repay a missing table, or the cache at its cap).
 *
 * Rules every kernel follows:
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

/* ---- switches (switches.c) ---- */

/* 1 unless disabled by SOFTFP8_FAST=0 in the environment or by sfp8f_set_enabled(0);
 * 2 (eager: build every table on first use, whatever the call length) with
 * SOFTFP8_FAST=2 or sfp8f_set_enabled(2).  Every table getter takes the length n
 * of the call that asks: a missing table is built only if n repays it. */
int sfp8f_enabled(void);
int sfp8f_set_enabled(int on); /* returns the previous setting */
/* Which SIMD level the kernels use: 0 portable C, 1 AVX2, 2 AVX-512
 * (F/BW/VL/DQ/VBMI, which implies the AVX2 kernels too).  SOFTFP8_SIMD=0 or 1
 * in the environment caps the level (default: the best the CPU has).  Each
 * family's kernel of every level is resolved once (families.c); the level
 * picks the column. */
int sfp8f_simd_level(void);
int sfp8f_set_simd(int level); /* clamps to what the CPU has; returns the previous level */

/* ---- the families (families.c): the table's description and call counters ---- */

/* the number of families; family k's name, one-line description, parameter space
 * and whether it has its own kernel at each level (0 portable, 1 AVX2, 2 AVX-512);
 * 0 if k is out of range */
int sfp8f_family_total(void);
int sfp8f_family_info(int k, const char **name, const char **what, const char **space, int own[3]);
/* runs of family k with its kernel of level l by the array driver since the last
   reset (one per call, relaxed atomics) */
uint64_t sfp8f_family_calls(int k, int l);
void sfp8f_family_calls_reset(void);

/* ---- the table cache (cache.c) ---- */

/* hits / misses count the lookups of kernels' callers (a miss builds a table
 * when the call is long enough); builds counts tables built (including those a
 * table is built from); refused_over_cap counts tables not cached because they
 * could not fit the budget; evicted / freed count tables evicted and evicted
 * tables whose memory was released. */
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

/* ---- the matrix engine's entries: a family's table, and its kernel of the
 *      current SIMD level on one call (strides in bytes; the rules above) ---- */

/* conversion from a format of <= 16 bits (binary16 allowed) to any descriptor
 * (convert.c): 2^bits entries of the destination code, plus flags */
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
/* source codes of isize bytes (1 or 2), destination of osize bytes (1, 2, 4 or 8) */
unsigned sfp8f_run_convert(const sfp8f_conv *c, const char *a, ptrdiff_t sa, int isize, char *o,
                           ptrdiff_t so, int osize, ptrdiff_t n, uint8_t *flout);

/* binary32 / binary64 -> 8-bit format with at most 4 mantissa bits (from_float8.c):
 * 65,536 entries indexed by the compressed binary32 key (sign, exponent, 6
 * leading mantissa bits, sticky); entry = code | flags << 8 */
const uint16_t *sfp8f_from_float(const sfp8_format *dst, const sfp8_env *env, ptrdiff_t n);
/* isize 4 (binary32) or 8 (binary64); one-byte codes out */
unsigned sfp8f_run_from_float(const uint16_t *tab, const char *a, ptrdiff_t sa, int isize, char *o,
                              ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* exact sums of an 8-bit format (sum8.c): every finite value is v[c] * 2^qmin
 * with |v[c]| < 2^40; cat[c] holds the SFP8F_SUM_* category of code c */
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

/* rounding of a binary64 value (exact, or rounded to odd at 53 bits) into a
 * signed format with IEEE subnormals, no FNUZ, and 1..23 mantissa bits (16-bit
 * formats, binary32): the core's round_pack specialised per rounding mode
 * (round64.c).  Used by 16-bit arithmetic, the binary32 -> 16-bit casts and the
 * binary32 results of matmul; checked against the core by the tests. */
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

/* add/sub/mul/div/fma of 16-bit formats (arith16.c, arith16.h): the table of
 * format f under env (NULL: not covered), and its run (c, sc: the addend of fma,
 * ignored for binary operations; op: X_ADD, X_SUB, X_MUL, X_DIV or X_FMA) */
typedef struct sfp8f_a16 sfp8f_a16;
const sfp8f_a16 *sfp8f_arith16(const sfp8_format *f, const sfp8_env *env, ptrdiff_t n);
unsigned sfp8f_run_arith16(const sfp8f_a16 *t, int op, const sfp8_format *f, const sfp8_env *env,
                           const char *a, ptrdiff_t sa, const char *b, ptrdiff_t sb, const char *c, ptrdiff_t sc,
                           char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* ---- exact binary64 helpers (the fast paths and the matrix engine) ---- */

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
 * through its users, by tests/harness/test_harness.py::test_entry [fma8],
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
