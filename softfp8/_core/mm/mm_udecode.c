/* The block_fma path's operand decoding (mm_udecode.h): one code into the lane values of
 * its kernels, and per-format tables of every code where they repay their cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mm_udecode.h"
#include "mm_value.h"

void sfp8mu_decode1(const uctx *g, const sfp8_format *f, int64_t emin, uint64_t code, ucode *d)
{
    sfp8u_value v;
    sfp8u_decode(f, code, &v);
    memset(d, 0, sizeof *d);
    d->sub = v.sub;
    d->E = NONE;
    d->neg = v.neg ? ~(uint32_t)0 : 0;
    d->bad = v.cls == SFP8U_NAN || v.cls == SFP8U_INF;
    d->top = NONE;
    d->d = v.neg && !d->bad ? -0.0 : 0.0;
    if (v.cls != SFP8U_FINITE || (v.sub && !g->md->in_subnormals)) return;
    sfp8mu_finite(g, emin, v.sig, v.exp, d);
    {
        d->d = ldexp(v.neg ? -(double)d->sig : (double)d->sig, d->x); /* exact: the operand range (sfp8u_check) */
        if (g->fexact || (g->fvals && d->x >= -149 && d->top <= 127 && d->wide <= 24))
            d->f = (d->neg ? -1.0f : 1.0f) * (float)d->sig * ldexpf(1.0f, d->x); /* exact: a binary32 number */
        else
            d->nof = 1;
    }
}

int sfp8mu_decoder_init(const uctx *g, udecoder *D, const sfp8_format *f, int64_t emin, int64_t count)
{
    D->f = f;
    D->emin = emin;
    D->tab = NULL;
    D->mask = f->bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f->bits) - 1;
    /* IEEE layout, every value a binary32 number (below 2^128, multiples of 2^-149; so 2^x a
       normal binary64 number): decoded
       from the bits, no table of 2^bits codes to build */
    D->ieee = f->bits > 8 && f->bits <= 32 && f->is_signed && f->specials == SFP8_SPECIALS_IEEE &&
              f->subnormals == SFP8_SUBNORMALS_IEEE && f->man_bits <= 23 && fmt_low(f) >= -150 &&
              ((int64_t)1 << f->exp_bits) - 1 - f->bias <= 128;
    if (D->ieee) return 1;
    if (f->bits > 16 || (f->bits > 8 && count < ((int64_t)1 << f->bits))) return 1;
    if (!(D->tab = malloc(sizeof(ucode) << f->bits))) return 0;
    for (uint64_t c = 0; c <= D->mask; c++) sfp8mu_decode1(g, f, emin, c, &D->tab[c]);
    return 1;
}
