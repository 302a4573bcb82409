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

/* 2: AVX-512 F, BW, VL, DQ and VBMI; 0: none of these */
int sfp8s_cpu_level(void);

/* 256-entry lookup: out element i (osize bytes) = bytes planes[k*256 + in[i]],
 * k < osize; if fl is not NULL, *acc |= fl[in[i]]. */
ptrdiff_t sfp8s_lut8(const uint8_t *planes, const uint8_t *fl, int osize, const uint8_t *in, char *out,
                     ptrdiff_t n, unsigned *acc);
/* z[i] = low byte of tab[x[i] << 8 | y[i]]; *acc |= the entries (flags in bits 8..15) */
ptrdiff_t sfp8s_binary8(const uint16_t *tab, const uint8_t *x, const uint8_t *y, uint8_t *z, ptrdiff_t n,
                        unsigned *acc);
/* binary32 -> code through the key table (see fast.h) */
ptrdiff_t sfp8s_from_f32(const uint16_t *tab, const uint32_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);
ptrdiff_t sfp8s_from_f64(const uint16_t *tab, const uint64_t *in, uint8_t *out, ptrdiff_t n, unsigned *acc);
#endif
