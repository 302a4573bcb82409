/* SIMD kernels behind the fast paths (internal).  Each processes a prefix of
 * the input whose length it returns (a multiple of its block size); the
 * caller finishes the rest with the portable loop.  Only called when
 * sfp8s_cpu_level() reported the instructions they use, and only on outputs
 * that do not overlap the inputs (or are them, element for element): they
 * load a block of inputs before storing a block of outputs (fast.h, the
 * overlap rule). */
#ifndef SOFTFP8_FAST_SIMD_H
#define SOFTFP8_FAST_SIMD_H
#include <stddef.h>
#include <stdint.h>

/* 2: AVX-512 F, BW, VL, DQ and VBMI (and AVX2); 1: AVX2 only; 0: neither */
int sfp8s_cpu_level(void);

/* 256-entry lookup: out element i (osize bytes) = bytes planes[k*256 + in[i]],
 * k < osize; if fl is not NULL, *acc |= fl[in[i]]. */
ptrdiff_t sfp8s_lut8(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                     ptrdiff_t n, unsigned *acc);
/* z[i] = low byte of tab[x[i] << 8 | y[i]]; *acc |= the entries (flags in bits 8..15) */
ptrdiff_t sfp8s_binary8(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                        unsigned *acc);
/* the same with AVX2 (level 1) */
ptrdiff_t sfp8s_binary8_avx2(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                             unsigned *acc);
/* binary32 -> code through the key table (see fast.h) */
ptrdiff_t sfp8s_from_f32(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);
ptrdiff_t sfp8s_from_f64(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);

/* ---- fma of 8-bit formats (fast.c, sfp8f_run_fma), contiguous one-byte codes:
 *      the lanes of the portable loop (binary64 product, TwoSum rounded to odd,
 *      the binary64 key table); lanes with a NaN/infinity operand or a zero sum
 *      are finished by the core (sfp8_fma with f, env) from copies of the
 *      operands taken before the block is stored (o may be a, b or c).
 *      info[code] = the flags reading the code raises, | 0x80 for NaN/infinity. ---- */
typedef struct sfp8s_fma8 {
    const uint8_t *hb;      /* 2 x 256: bytes 2 and 3 of the binary32 bits of finite
                               values (whose low 16 bits are zero) */
    const uint8_t *info;    /* 256 */
    const uint16_t *fromf;  /* the binary64 key table (fast.h), padded by 64 bytes */
    const void *f, *env;    /* const sfp8_format *, const sfp8_env * for the core */
} sfp8s_fma8;
ptrdiff_t sfp8s_fma8_avx512(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                            ptrdiff_t n, uint8_t *flo, unsigned *acc);
/* the same with AVX2 (level 1), eight lanes at a time */
ptrdiff_t sfp8s_fma8_avx2(const sfp8s_fma8 *t, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *o,
                          ptrdiff_t n, uint8_t *flo, unsigned *acc);

/* ---- stochastic rounding binary32 / binary64 -> 8-bit code (stochastic.c):
 *      contiguous input of isize 4 or 8 bytes, one-byte codes out.  The lanes
 *      of stochastic.c's portable loop, the random bits of element i being
 *      sfp8r_bits(seed_key, stream_key, index0 + i) (rng.h, eight lanes at a
 *      time); lanes that loop sends to the core are finished here by the core
 *      (sfp8_convert with a copy of env whose random word is the lane's). ---- */
typedef struct sfp8s_sr {
    const uint32_t *rza;     /* key table: toward zero | away from zero << 16 (fast.h: its marks) */
    uint64_t seed_key, stream_key, index0;
    int N, M, emin;          /* random bits used, mantissa bits, minimum normal exponent */
    /* 1: subnormal results are rounded here (IEEE subnormals) when tininess needs no
       decision of the unbounded grid: tininess before rounding, or below 2^(emin-1),
       or below 2^emin with the top M significand bits not all ones, and not negative in an unsigned format; they round on the subnormal grid */
    int sub_ok, tin_before, is_signed;
    const void *dst, *env;   /* const sfp8_format *, const sfp8_env * (stochastic) */
    /* 1: the AVX-512 kernel computes the two neighbours by arithmetic instead of
       gathering rza (fast_simd.c, sr_arith16): a signed format with IEEE subnormals
       whose codes 0..maxmag are its finite magnitudes in order (fast.c,
       sfp8f_cast64_params), 1 <= M <= 4, -125 <= emin <= 126 */
    int ar;
    uint32_t maxmag, signbit, negzero; /* negzero 1: a zero result keeps the sign bit */
} sfp8s_sr;
ptrdiff_t sfp8s_from_float_sr_avx512(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                     uint8_t *flo, unsigned *acc);
/* the same with AVX2 (level 1), eight lanes at a time */
ptrdiff_t sfp8s_from_float_sr_avx2(const sfp8s_sr *t, const void *in, int isize, uint8_t *out, ptrdiff_t n,
                                   uint8_t *flo, unsigned *acc);

/* stochastic.c's sfp8f_run_arith_sr (run_arith8_sr) on n contiguous operand pairs:
 * out[i], fl[i] = the code and flags of element i (random bits as sfp8s_sr,
 * index0 + i), fl[i] = 0x80 for the lanes the caller finishes (stochastic.c);
 * returns the OR of all fl[i] */
typedef struct sfp8s_sr8 {
    const uint32_t *q, *pal; /* fast.h, sfp8f_sr8 */
    uint64_t seed_key, stream_key, index0;
    int N;
} sfp8s_sr8;
unsigned sfp8s_arith8_sr_avx512(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                                ptrdiff_t n);
/* the same with AVX2 (level 1) */
unsigned sfp8s_arith8_sr_avx2(const sfp8s_sr8 *p, const uint8_t *x, const uint8_t *y, uint8_t *out, uint8_t *fl,
                              ptrdiff_t n);

/* stochastic.c's sfp8f_run_arith_sr (run_arith16_sr) on n (a multiple of 8) contiguous operand
 * pairs: codes out[i], flags fl[i] (0x80: the caller finishes the lane with the
 * core); returns the OR of all fl[i] */
typedef struct sfp8s_sr16 {
    const uint64_t *vf;      /* fast.h, sfp8f_sr16 */
    uint32_t mask;
    uint64_t seed_key, stream_key, index0;
    int N, op;               /* op 0 add, 1 subtract, 2 multiply, 3 divide (2M + N <= 52), 4 sqrt (x: y unused),
                                5 fma (M + N <= 51; sfp8s_fma_sr_avx512) */
    int M, ebase;            /* mantissa bits; biased binary64 exponent of 2^emin */
    uint32_t maxmag, signbit;
    /* or NULL: the format's arithmetic decoding (round_f64.c); add / subtract /
       multiply through binary32 when it covers the format (fast_simd.c,
       sr16f_avx512), divide and sqrt without gathers (sr16q_run) */
    const struct sfp8s_a16 *a16;
} sfp8s_sr16;
unsigned sfp8s_arith16_sr_avx512(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                                 uint8_t *fl, ptrdiff_t n);
/* the same with AVX2 (level 1): four lanes, every operand through vf */
unsigned sfp8s_arith16_sr_avx2(const sfp8s_sr16 *p, const uint16_t *x, const uint16_t *y, uint16_t *out,
                               uint8_t *fl, ptrdiff_t n);
/* fma (p->op 5) of codes of isz (1 or 2) bytes: out = x*y + z, the rule of
   stochastic.c's srf_one, n a multiple of 8; lanes it does not cover get
   flags 0x80; returns the OR of the flags */
typedef struct sfp8s_srf {
    sfp8s_sr16 s; /* s.op 5; 16-bit codes decoded by s.a16 if set, else gathered from s.vf */
    /* 8-bit codes: dec8 1: decoded arithmetically, a magnitude m = code & magmask
       above s.maxmag uncovered, else (m >> M == 0 ? (m as binary64) * sub, | subfl
       if m != 0 : (m << (52 - M)) + off) with the sign (code & s.signbit) << sshift
       (stochastic.c checks this against s.vf for every code); dec8 0: gathered
       from s.vf */
    int dec8, sshift;
    uint64_t magmask, off, subfl;
    double sub;
    /* results below 2^emin: 0 the core; IEEE subnormals: K and t on the grid of
       2^(emin - M) from |d| * tscale (= 2^(M - emin)), underflow iff inexact, with
       tininess 1 before rounding, 2 after (results in the top half-ulp below
       2^emin that are inexact: the core); exact zeros: the sign of d */
    int tiny;
    double tscale;
} sfp8s_srf;
unsigned sfp8s_fma_sr_avx512(const sfp8s_srf *p, int isz, const char *x, const char *y, const char *z, char *out,
                             uint8_t *fl, ptrdiff_t n);

/* ---- 16-bit arithmetic (round_f64.c): o = a op b, or a*b + c (fma), codes of
 *      2 bytes, contiguous.  vf[code & mask] = the code's binary64 bits with
 *      the flags reading it raises in bits 0..6 and bit 7 set for NaN and
 *      infinity (every finite value of these formats has zero low bytes).
 *      A lane is covered when its operands are finite (and a divisor is not
 *      zero) and its binary64 result (exact, rounded to odd, or a correctly
 *      rounded quotient: docs/performance.md) is normal in the format and
 *      below overflow; the kernels process whole blocks from the start and
 *      stop before the first block with an uncovered lane, returning how many
 *      elements they wrote; flo (or NULL) receives each element's flags. ---- */
enum { SFP8S_ADD, SFP8S_SUB, SFP8S_MUL, SFP8S_DIV, SFP8S_FMA };
typedef struct sfp8s_a16 {
    const uint64_t *vf;
    uint64_t mask, maxmag, signbit; /* code mask, largest finite magnitude, sign bit (0: unsigned
                                       format; negative results are uncovered lanes) */
    int M, ebase;                    /* mantissa bits; biased binary64 exponent of 2^emin */
    int rounding;                    /* a deterministic SFP8_ROUND_* */
    /* arith != 0: decode without vf: a code of exponent field e (0 < e < emax_field)
       or a zero is ((code & magmask) << (52 - M)) + off with the sign moved to bit
       63 (by << sshift), and raises no flag; other codes are uncovered lanes.
       round_f64.c sets it only after checking this against vf for every code. */
    int arith, sshift;
    uint64_t magmask, off, emax_field;
    /* 1: every sum of two values is exact in binary64 (float16, SHP): add and
       subtract skip TwoSum */
    int exact_sum;
    /* AVX-512: decode by conversion through binary32: 1 binary16 (vcvtph2ps),
       2 bfloat16 (code << 16); covered codes as for arith */
    int hw;
} sfp8s_a16;
/* round_f64.c: the parameters of its table t (fast.h, sfp8f_a16) for format f */
struct sfp8f_a16;
struct sfp8_format;
sfp8s_a16 sfp8f_a16_params(const struct sfp8f_a16 *t, const struct sfp8_format *f);
ptrdiff_t sfp8s_arith16_avx512(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                               const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc);
ptrdiff_t sfp8s_arith16_avx2(const sfp8s_a16 *p, int op, const uint16_t *a, const uint16_t *b,
                             const uint16_t *c, uint16_t *o, ptrdiff_t n, uint8_t *flo, unsigned *acc);
/* ---- binary64 -> 8-bit code by arithmetic (cast64.c): the core's round_pack
 *      for signed formats with IEEE subnormals and 1..4 mantissa bits, done
 *      with the hardware's exact scaling and integer rounding of binary64
 *      (x scaled so that the format's quantum at x is 1, rounded to an integer
 *      in the environment's mode).  Lanes it does not decide (NaN, infinity,
 *      binary64 subnormals, and with tininess after rounding an inexact result
 *      2^emin from the binade below it) take the key table tab (fast.h,
 *      sfp8f_key64).  flo (or NULL) receives each element's flags; *acc |= the
 *      flags << 8 (the key table's entry layout). ---- */
typedef struct sfp8s_cast64 {
    int ok;                  /* 1: the format and environment are covered (fast.c sets it) */
    int M, emin, tb, rounding;
    uint32_t maxmag, signbit;   /* largest finite magnitude code, sign bit */
    uint32_t negzero;           /* 1: a negative zero result keeps its sign bit (0: FNUZ, P3109) */
    uint32_t ovf0, ovf1;        /* overflow results of each sign, and their flags (from the core) */
    uint32_t ovf_fl0, ovf_fl1;
} sfp8s_cast64;
ptrdiff_t sfp8s_cast64_avx512(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                              uint8_t *flo, ptrdiff_t n, unsigned *acc);
ptrdiff_t sfp8s_cast64_avx2(const sfp8s_cast64 *p, const uint16_t *tab, const uint64_t *in, uint8_t *out,
                            uint8_t *flo, ptrdiff_t n, unsigned *acc);

/* ---- stochastic conversions into, and unary operations of, formats of 9..16
 *      bits (stochastic.c, sfp8f_run_wide_sr): the portable loop's rule on the
 *      per-code table (fast.h, sfp8f_srw; one 64-bit gather per lane) for n contiguous source codes of
 *      isize 1 or 2 bytes (masked by smask), n a multiple of 16 (AVX-512) or 8
 *      (AVX2): two-byte codes to out (possibly unaligned), flags to fl[i], 0x80
 *      for the lanes the caller finishes with the core (their codes are not
 *      written); the random bits of element i are sfp8r_bits(seed_key,
 *      stream_key, index0 + i).  Returns the OR of all fl[i]. ---- */
typedef struct sfp8s_srw {
    const uint64_t *e;       /* fast.h: ts | rz << 32 | d << 48 | rz flags << 50 | ra flags << 57 */
    uint64_t seed_key, stream_key, index0;
    int N, isize;
    uint32_t smask;
} sfp8s_srw;
unsigned sfp8s_wide_sr_avx512(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n);
unsigned sfp8s_wide_sr_avx2(const sfp8s_srw *p, const void *in, void *out, uint8_t *fl, ptrdiff_t n);
#endif
