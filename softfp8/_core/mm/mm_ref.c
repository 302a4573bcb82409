/*
 * The matrix engine's generic kernels: the definition every fast path is proven
 * equal to (codes and flags), and what runs with fast paths off.  One output
 * element at a time, written from docs/training.md ("Accumulation models", "Scaled
 * matmul") step by step:
 *
 *   exact model: round_out(sum_l a_il * b_lj * s_l), the products and the sum held
 *     exactly in a superaccumulator (accum.c) and rounded once;
 *   sequential models: exact products (rounded into the product format if any), a
 *     sum rounded into the accumulator after every addition, chunk sums promoted
 *     into the running sum, the final product by the scale rounded once.
 *
 * Every rounding is the core's (mm_value.c, accum.c).
 */
#include <string.h>

#include "core_x.h"
#include "mm_impl.h"

/* the widest operand formats (16 exponent bits, no mantissa bit) times the exact products of
   two binary32 powers of two (scale_exact: 2^-298 .. < 2^256; a rounded binary32 scale
   product spans less), as acc_init_span counts limbs */
_Static_assert((2 * ((1 << 16) + 1) + 256 + 298 + 66 + 63) / 64 <= ACC_MAX_LIMBS,
               "ACC_MAX_LIMBS must hold every scaled product of two valid formats");

/* the superaccumulator of every product a * b * s of the call (s: mm_scale_low .. _top) */
void mm_exact_init(const mm_call *c, SuperAcc *sa)
{
    const sfp8m_model *md = c->md;
    int64_t low = fmt_low(&md->fa) + fmt_low(&md->fb) + mm_scale_low(md);
    int64_t span = fmt_top(&md->fa) - fmt_low(&md->fa) + fmt_top(&md->fb) - fmt_low(&md->fb) +
                   mm_scale_top(md) - mm_scale_low(md);
    acc_init_span(sa, low, span);
}

/* the NaN operands of one output's products, for the ISA conventions' NaN rules */
typedef struct {
    int from_operand;   /* the first NaN product has a NaN operand (else it is inf * 0) */
    int have_snan;      /* a signalling NaN operand was read: the first is snan_code */
    uint32_t snan_code;
} mm_nans;

/* The NaN of a NaN sum under ISA convention isa (not the default; docs/golden-model.md,
 * "ISA conventions", matrix products): Arm DN / RISC-V the default NaN; Arm (DN = 0) the
 * first signalling NaN operand quieted, else as x86; x86 the first NaN product's NaN
 * operand quieted, or the convention's default NaN for an invalid sum (inf * 0, inf - inf) */
static uint32_t isa_sum_nan(const sfp8_format *f, const SuperAcc *sa, const mm_nans *nn, int isa)
{
    if (isa == SFP8_ISA_ARM_DN || isa == SFP8_ISA_RISCV) return (uint32_t)sfp8x_isa_default_nan(f, isa);
    if (isa == SFP8_ISA_ARM && nn->have_snan) return (uint32_t)sfp8x_quiet_nan(f, nn->snan_code);
    if (sa->nan && nn->from_operand) return (uint32_t)sfp8x_quiet_nan(f, sa->nan_code);
    return (uint32_t)sfp8x_isa_default_nan(f, isa);
}

/* NaN and infinite sums of the exact model.  SFP8M_NAN_OPERAND (fa == fb, no scales):
 * as fa's addition delivers the first NaN product's operand code (the default NaN for
 * inf * 0 and inf - inf) or the infinity, converted when the output is another
 * format -- under an ISA convention (env->isa) the convention's NaN (isa_sum_nan), converted
 * by its rule; SFP8M_NAN_CANONICAL: the output format's NaN / infinity from binary64. */
static uint64_t exact_special(const mm_call *c, const SuperAcc *sa, const mm_nans *nn, const sfp8_env *env,
                              uint8_t *fl)
{
    const sfp8m_model *md = c->md;
    const sfp8_format *f = &md->fa;
    int isa = env->isa & 0xFF, nan = sa->nan || (sa->pinf && sa->ninf);
    sfp8_env e0 = *env;
    gval v;
    e0.isa = 0;
    memset(&v, 0, sizeof v);
    if (sa->pinf && sa->ninf && !sa->nan) *fl |= SFP8_FLAG_INVALID;
    if (md->nan_rule == SFP8M_NAN_OPERAND) {
        uint32_t code = sa->nan ? sa->nan_code : sa->pinf && sa->ninf ? sfp8_default_nan(f) : sa->inf_code;
        int same = !memcmp(&md->fout, f, sizeof *f);
        if (nan && isa != SFP8_ISA_DEFAULT) {
            code = isa_sum_nan(f, sa, nn, isa);
            return same ? code : sfp8_convert(f, &md->fout, code, env, fl);
        }
        if (same && !(sa->pinf && sa->ninf && !sa->nan)) return sfp8_add(f, code, code, &e0, fl);
        if (same) return code;
        return sfp8_convert(f, &md->fout, code, &e0, fl);
    }
    v.cls = nan ? GV_NAN : GV_INF;
    v.neg = (uint8_t)sa->ninf;
    return gv_round(&md->fout, env, &v, fl);
}

/* DAZ (an ISA convention's): a subnormal operand v, the code at p, read as the zero of its
   sign the core's DAZ gives, with the denormal flag */
static gval daz_value(const sfp8_format *f, gval v, const char *p, int sz, uint32_t mask)
{
    uint8_t fl = 0;
    if (!(v.fl & SFP8_FLAG_DENORMAL)) return v;
    gv_decode(f, sfp8x_daz(f, load_code(p, sz) & mask, &fl), &v);
    v.fl = SFP8_FLAG_DENORMAL;
    return v;
}

/* 1 if the code at p (of sz bytes) is a NaN or an infinity, by its binary64 decoding */
static inline int special(const sfp8f_conv *dec, const char *p, int sz)
{
    return ((dec->val[load_code(p, sz) & (uint32_t)(dec->n - 1)] >> 52) & 0x7ff) == 0x7ff;
}

uint64_t mm_exact_element(mm_call *c, int64_t i, int64_t j, int only_special, const sfp8_env *env, uint8_t *fl)
{
    const sfp8m_model *md = c->md;
    SuperAcc *sa = c->sacc;
    gval s = mm_one, x, t;
    int64_t sblk = -1;
    mm_nans nn = {0, 0, 0};
    sfp8_env e0 = *env; /* the core's rounding; the ISA convention's steps are taken here */
    uint64_t r;
    e0.isa = 0;
    mm_exact_init(c, sa);
    for (int64_t l = 0; l < c->k; l++) {
        gval va, vb;
        if (only_special && c->deca && !special(c->deca, c->A + i * c->am + l * c->ak, c->sza) &&
            !special(c->decb, c->B + l * c->bk + j * c->bp, c->szb))
            continue; /* a finite product: the caller raised its operands' denormal flags */
        va = mm_a(c, i, l), vb = mm_b(c, l, j);
        if (env->isa & SFP8_ISA_DAZ) {
            va = daz_value(&md->fa, va, c->A + i * c->am + l * c->ak, c->sza, c->mask_a);
            vb = daz_value(&md->fb, vb, c->B + l * c->bk + j * c->bp, c->szb, c->mask_b);
        }
        int64_t blk = md->kblock ? l / md->kblock : 0;
        if (blk != sblk) {
            mm_scale_at(md, i, l, j, &s, fl);
            sblk = blk;
        }
        *fl |= va.fl | vb.fl;
        if (only_special && va.cls <= GV_FIN && vb.cls <= GV_FIN) continue;
        gv_mul(&va, &vb, &x, fl);
        gv_mul(&x, &s, &t, fl);
        switch (t.cls) {
        case GV_NAN:
            {
                uint32_t ca = load_code(c->A + i * c->am + l * c->ak, c->sza) & c->mask_a;
                uint32_t cb = load_code(c->B + l * c->bk + j * c->bp, c->szb) & c->mask_b;
                if (!sa->nan) { /* the first NaN product: its operand's code, else (inf * 0) the default NaN */
                    sa->nan_code = va.cls == GV_NAN ? ca : vb.cls == GV_NAN ? cb : sfp8_default_nan(&md->fa);
                    nn.from_operand = va.cls == GV_NAN || vb.cls == GV_NAN;
                }
                if (!nn.have_snan && (va.snan || vb.snan)) { /* the first signalling NaN operand */
                    nn.have_snan = 1;
                    nn.snan_code = va.snan ? ca : cb;
                }
            }
            sa->nan = 1;
            break;
        case GV_INF:
            if (t.neg) sa->ninf = 1;
            else sa->pinf = 1;
            if (md->nan_rule == SFP8M_NAN_OPERAND) { /* fa's infinity of the product's sign */
                uint32_t code = va.cls == GV_INF ? load_code(c->A + i * c->am + l * c->ak, c->sza)
                                                  : load_code(c->B + l * c->bk + j * c->bp, c->szb);
                code = sfp8_abs(&md->fa, code & c->mask_a);
                sa->inf_code = t.neg ? sfp8_neg(&md->fa, code) : code;
            }
            break;
        case GV_ZERO:
            if (t.neg) sa->neg_zero = 1;
            else sa->pos_zero = 1;
            break;
        default:
            sa->nonzero = 1;
            acc_add_mag(sa, t.sig, t.exp - sa->qmin, t.neg);
        }
    }
    if (sa->nan || sa->pinf || sa->ninf) return exact_special(c, sa, &nn, env, fl);
    /* zeros only: -0 if every term is -0; a cancellation: -0 only rounding downward */
    r = acc_round_float(sa, &md->fa, &md->fout, &e0, fl);
    /* FTZ (an ISA convention's): a subnormal result becomes the zero of its sign */
    return env->isa & SFP8_ISA_FTZ ? sfp8x_ftz(&md->fout, r, fl) : r;
}

/* chunk end after product l (0-based) */
static inline int chunk_end(const sfp8m_model *md, int64_t l, int64_t k)
{
    return md->promote && ((l + 1) % md->promote == 0 || l + 1 == k);
}

uint64_t mm_model_element(mm_call *c, int64_t i, int64_t j, uint8_t *fl)
{
    const sfp8m_model *md = c->md;
    gval acc = {GV_ZERO, 0, 0, 0, 0, 0}, F = acc, x, s, t;
    int aemp = 1, femp = 1;
    for (int64_t l = 0; l < c->k; l++) {
        gval va = mm_a(c, i, l), vb = mm_b(c, l, j);
        uint64_t r;
        *fl |= va.fl | vb.fl;
        gv_mul(&va, &vb, &x, fl);
        if (md->has_prod) gv_decode(&md->fp, gv_round(&md->fp, &md->envp, &x, fl), &x);
        r = aemp ? gv_round(&md->facc, &md->envacc, &x, fl) : gv_add_round(&md->facc, &md->envacc, &acc, &x, fl);
        gv_decode(&md->facc, r, &acc);
        aemp = 0;
        if (chunk_end(md, l, c->k)) {
            if (md->kblock) mm_scale_at(md, i, l, j, &s, fl);
            else s = mm_one;
            gv_mul(&acc, &s, &t, fl);
            r = femp ? gv_round(&md->fprom, &md->envprom, &t, fl) : gv_add_round(&md->fprom, &md->envprom, &F, &t, fl);
            gv_decode(&md->fprom, r, &F);
            femp = 0;
            aemp = 1;
            memset(&acc, 0, sizeof acc);
        }
    }
    /* S: the running sum (promotion) or the accumulator; +0 if empty (K = 0: no scale is
       read, as in the exact model) */
    x = md->promote ? F : acc;
    if (md->kblock || !c->k) s = mm_one;
    else mm_scale_at(md, i, 0, j, &s, fl);
    gv_mul(&x, &s, &t, fl);
    return gv_round(&md->fout, &md->envout, &t, fl);
}
