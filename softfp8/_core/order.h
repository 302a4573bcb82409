/* Order keys of codes (internal), shared by the NumPy ordering functions
 * (npy/order.c: sort, argsort, argmax, argmin, searchsorted) and the 16-bit
 * comparison / min-max fast path (fast/order16.c).
 *
 * Every code maps to a key below 2^bits such that key(a) < key(b) exactly when
 * a < b by value, and key(a) == key(b) exactly when the values are equal (+0 and
 * -0, and a subnormal that a flushing format reads as zero, share the key of
 * zero) or both are NaN (the largest key: NaN sorts last).  The map relies on
 * one property of every encoding softfp8 has: among codes of one sign the value
 * grows with the magnitude bits, and the NaN magnitudes form the top of that
 * range (IEEE-style) or are the "-0" code (FNUZ-style).  The NaN test comes from
 * the core's sfp8_classify (a binary search over magnitudes).  Checked against
 * the core's comparison and the exact reference model by
 * tests/numpy_glue/test_order.py and tests/harness/test_harness.py::test_entry [order16].
 * Bits above the format's width are ignored (docs/semantics.md). */
#ifndef SOFTFP8_ORDER_H
#define SOFTFP8_ORDER_H
#include <stdint.h>
#include "softfp8/softfp8.h"

typedef struct sfp8_order {
    int ready;           /* set by sfp8_order_init */
    int bits;
    int sign_shift;      /* bits - 1, or -1 for an unsigned format */
    int flush;           /* subnormals read as zero */
    int man_bits;
    uint32_t mask;       /* (1 << bits) - 1 */
    uint32_t mag_mask;   /* magnitude bits */
    uint32_t nan_from;   /* magnitudes >= this are NaN (mag_mask + 1: none) */
    int negzero_nan;     /* the sign-only code is NaN (FNUZ-style) */
    int has_nan;
    uint32_t nan_key;    /* (1 << bits) - 1 */
} sfp8_order;

static inline void sfp8_order_init(sfp8_order *o, const sfp8_format *f)
{
    uint32_t lo, hi;
    o->bits = f->bits;
    o->sign_shift = f->is_signed ? f->bits - 1 : -1;
    o->flush = f->subnormals == SFP8_SUBNORMALS_FLUSH;
    o->man_bits = f->man_bits;
    o->mask = ((uint32_t)1 << f->bits) - 1;
    o->mag_mask = f->is_signed ? o->mask >> 1 : o->mask;
    /* the smallest NaN magnitude: "magnitude m is NaN" is false below it and
       true from there up */
    lo = 0;
    hi = o->mag_mask + 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sfp8_classify(f, mid) >= SFP8_CLASS_QNAN) hi = mid;
        else lo = mid + 1;
    }
    o->nan_from = lo;
    o->negzero_nan = f->is_signed && sfp8_classify(f, (uint32_t)1 << (f->bits - 1)) >= SFP8_CLASS_QNAN;
    o->has_nan = o->negzero_nan || o->nan_from <= o->mag_mask;
    o->nan_key = o->mask;
    o->ready = 1;
}

static inline uint32_t sfp8_order_key(const sfp8_order *o, uint32_t c)
{
    uint32_t s, m;
    c &= o->mask;
    if (o->sign_shift < 0) {
        s = 0;
        m = c;
    } else {
        s = c >> o->sign_shift;
        m = c & o->mag_mask;
    }
    if (m >= o->nan_from || (s && m == 0 && o->negzero_nan)) return o->nan_key;
    if (o->flush && (m >> o->man_bits) == 0) m = 0;
    if (o->sign_shift < 0) return m;
    /* signed: -max .. -0 | +0 .. +max onto 0 .. 2^bits - 2 */
    return s ? o->mag_mask - m : o->mag_mask + m;
}

static inline int sfp8_order_is_nan(const sfp8_order *o, uint32_t key)
{
    return o->has_nan && key == o->nan_key;
}
#endif
