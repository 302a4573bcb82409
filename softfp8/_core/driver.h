/* The one strided array driver (internal): every array operation of softfp8 --
 * NumPy ufunc loops, NumPy casts between softfp8 formats and binary16/32/64,
 * and softfp8.bits -- runs through these functions.  Each takes strided data
 * (strides in bytes, negative and zero strides allowed, unaligned data
 * allowed) and walks the fast-path families (fast/families.def) in order: the
 * first whose prepare step takes the call runs it with its kernel of the current
 * SIMD level; when every family declines (stochastic rounding with caller-given
 * bits, a format no table covers, fast paths switched off, a call too short to
 * repay a table) the exact core runs element by element.  Results are identical
 * either way (docs/architecture.md, "Fast-path families").
 *
 * Element sizes: a code of a format of <= 8 bits is 1 byte, of <= 16 bits a
 * native uint16; binary32 / binary64 (sfp8_binary32 / sfp8_binary64) are 4 / 8
 * bytes; boolean results (comparisons, predicates) are 1 byte 0/1; relations
 * (K_RELATION) are one int8; the int operand of K_BINARY_I64 is a native
 * int64_t, the second result of K_UNARY_I32 a native int32_t.  Codes with bits above the format's width are read
 * with those bits ignored (the core's rule), on every path.
 *
 * flout: per-element flags (contiguous, n bytes), or NULL.  Every function
 * returns the OR of the flags it raised.  Outputs may overlap inputs as NumPy's
 * accumulate and reduce do: element i's inputs are read before output i is
 * written, in order. */
#ifndef SOFTFP8_DRIVER_H
#define SOFTFP8_DRIVER_H
#include <stddef.h>
#include <stdint.h>
#include "softfp8/softfp8.h"
#include "ops.h"

/* Random bits of stochastic rounding, element i of a call:
 *   random != NULL: random[i] (caller-supplied bits, contiguous);
 *   else sfp8_random_u32(seed, stream, index + i).
 * The driver advances `index` by the number of elements it rounded, so a
 * NumPy loop called in chunks draws the same bits as one call. */
typedef struct sfp8_rng {
    const uint32_t *random;
    uint64_t seed;
    uint64_t stream;
    uint64_t index;
} sfp8_rng;

/* size in bytes of one element of a descriptor (1, 2, 4 or 8) */
static inline int sfp8d_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits / 8; }

/* op (enum sfp8x_op) over n elements: data[0 .. arity-1] are the operands,
 * data[arity] the result (data[arity + 1] the second result of the
 * two-result kinds).  NumPy's reduction convention (result == first
 * operand, both with stride 0, n > 1, flout NULL) of add is computed exactly
 * and rounded once. */
unsigned sfp8d_run(int op, const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, char *const data[],
                   const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout);

/* the exact sum of n >= 0 codes rounded once into f (an empty sum is +0, with no
 * rounding and no random word drawn) */
unsigned sfp8d_sum(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a, ptrdiff_t sa,
                   ptrdiff_t n, uint32_t *out);

/* conversion between two descriptors (storage formats, sfp8_binary32/64) */
unsigned sfp8d_convert(const sfp8_format *src, const sfp8_format *dst, const sfp8_env *env, sfp8_rng *rng,
                       const char *a, ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

/* One fast-path family alone (the test hook of the families, _ext.fast_kernel):
 * family `fam` (its index in fast/families.def, fast.h sfp8f_family_info) on the
 * call sfp8d_run (op >= 0, a code-only kind: data / strides as there) or
 * sfp8d_convert (op < 0: f -> dst, data[0] / data[1] the source and the result)
 * would make, with its kernel of the current SIMD level.  Returns 1 with *flags
 * the OR of the flags if the family took the call, 0 if it declined (nothing is
 * written then). */
int sfp8d_run_family(int fam, int op, const sfp8_format *f, const sfp8_format *dst, const sfp8_env *env,
                     sfp8_rng *rng, char *const data[], const ptrdiff_t strides[], ptrdiff_t n, uint8_t *flout,
                     unsigned *flags);

/* The block quantiser's kernels (quantize.c): call c (an SFP8F_BLOCK call whose
 * `block` says what to compute, fast/blockq.h) run by the families table like the
 * other calls (counted, current SIMD level).  Returns 1 with *flags set if a family
 * ran it, 0 if none did (fast paths off): the caller then takes softfp8.mx's
 * Python path. */
struct sfp8f_call;
int sfp8d_run_block(struct sfp8f_call *c, unsigned *flags);

/* codes <-> int64 (int64 elements are native int64_t) */
unsigned sfp8d_to_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a, ptrdiff_t sa,
                        char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);
unsigned sfp8d_from_int64(const sfp8_format *f, const sfp8_env *env, sfp8_rng *rng, const char *a,
                          ptrdiff_t sa, char *o, ptrdiff_t so, ptrdiff_t n, uint8_t *flout);

#endif
