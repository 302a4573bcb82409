/* The block_fma path's binary32 carry kernel (mm_units_fc.c): the NVIDIA units' model
 * (global alignment, the addend among the products, no sticky bit) on operands whose
 * products are normal binary32 numbers, four rows by sixteen outputs at a time, the
 * running values held as binary32 numbers (AVX-512; AVX2: sfp8mu_fc_rows256). */
#ifndef SFP8_MM_UNITS_FC_H
#define SFP8_MM_UNITS_FC_H

#include <stddef.h>
#include <stdint.h>

#include "mm_udecode.h"

#define FC_ROWS 4  /* rows of A computed together */
#define FC_LANES 16 /* outputs of a row computed together */

/* 1 if the kernel computes the model of g (SIMD level 2, or 1 for sfp8mu_fc_rows256, and
 * the model's parameters) */
int sfp8mu_fc_covers(const uctx *g, int level);

/* B's panel of one column group, per l: E[16] then f[16] (the lanes' nominal exponents
 * and values as binary32 numbers) */
typedef struct {
    int32_t E[FC_LANES];
    float f[FC_LANES];
} fcpanel;

/* FC_ROWS rows (aE[r][l], af[r][l], l < k) by the sixteen columns of panel bp: c[r * 16 + q]
 * the running values (in: the addends, out: the results), cE their nominal exponents (NONE
 * for a zero), live[] 0 for a lane the generic kernel computes (cleared here when a lane
 * leaves the fast path), fl[] its flags (inexact raised here when need_lost) */
void sfp8mu_fc_rows(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp, int64_t k,
                    float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost);

/* sfp8mu_fc_rows at SIMD level 1 (AVX2): the same arguments and results; scratch: NULL, or
 * sfp8mu_fc_scratch(g, k, groups) bytes zeroed once per matrix product (its columns in
 * groups panels of 16) and kept across the calls, each of which names its panel (group,
 * every group of a row of FC_ROWS rows in turn from 0) */
void sfp8mu_fc_rows256(const uctx *g, const int32_t *const *aE, const float *const *af, const fcpanel *bp, int64_t k,
                       float *c, int32_t *cE, int *live, uint8_t *fl, int need_lost, void *scratch, int64_t group,
                       int64_t groups);

/* the bytes of sfp8mu_fc_rows256's scratch (0: it needs none) */
size_t sfp8mu_fc_scratch(const uctx *g, int64_t k, int64_t groups);

#endif
