/* The flat encoding of a matrix-unit model (sfp8u_model) as int32 values: the one way
 * Python hands a model to C -- softfp8.matrix_units.model_ints builds it, the extension's
 * mu_gemm and the XLA FFI matmul (xla_ffi.c) decode it here.  Layout (SFP8U_MODEL_INTS
 * values): order; fa, fb, fo (8 fields each, sfp8_format's order); envo (5: rounding,
 * saturate, tininess_before, sr_bits, isa); block, exact_align, extra_bits, sticky,
 * grouping, late_addend, align_rounding, addend_extra_bits, has_zero_addend_exp,
 * zero_addend_exp, normalized_products, has_min_exp, min_exp, product_overflow,
 * in_subnormals, out_subnormals, promote, has_prod; fp, envp, facc, envacc, fprom, envprom. */
#include <string.h>

#include "bfma.h"

static int format_ok(const sfp8_format *f)
{
    return memcmp(f, &sfp8_binary32, sizeof *f) == 0 || memcmp(f, &sfp8_binary64, sizeof *f) == 0 ||
           sfp8_validate(f) == SFP8_OK;
}

static const int32_t *take_format(const int32_t *v, sfp8_format *f)
{
    memset(f, 0, sizeof *f);
    f->bits = v[0], f->is_signed = v[1], f->exp_bits = v[2], f->man_bits = v[3];
    f->bias = v[4], f->specials = v[5], f->subnormals = v[6], f->saturate = v[7];
    return v + 8;
}

static const int32_t *take_env(const int32_t *v, sfp8_env *e, int *ok)
{
    memset(e, 0, sizeof *e);
    e->rounding = v[0], e->saturate = v[1], e->tininess_before = v[2], e->sr_bits = v[3], e->isa = v[4];
    *ok = *ok && v[0] >= 0 && v[0] < SFP8_NUM_ROUNDING && (v[1] == 0 || v[1] == 1) && (v[2] == 0 || v[2] == 1) &&
          v[3] >= 1 && v[3] <= 32 && v[4] >= 0 && v[4] < 256;
    return v + 5;
}

const char *sfp8u_model_from_ints(const int32_t *v, int64_t n, sfp8u_model *m)
{
    int envs_ok = 1;
    if (n != SFP8U_MODEL_INTS) return "a model encoding of the wrong length";
    memset(m, 0, sizeof *m);
    m->order = *v++;
    v = take_format(v, &m->fa);
    v = take_format(v, &m->fb);
    v = take_format(v, &m->fo);
    v = take_env(v, &m->envo, &envs_ok);
    m->block = v[0], m->exact_align = v[1], m->extra_bits = v[2], m->sticky = v[3], m->grouping = v[4];
    m->late_addend = v[5], m->align_rounding = v[6], m->addend_extra_bits = v[7];
    m->has_zero_addend_exp = v[8], m->zero_addend_exp = v[9], m->normalized_products = v[10];
    m->has_min_exp = v[11], m->min_exp = v[12], m->product_overflow = v[13], m->in_subnormals = v[14];
    m->out_subnormals = v[15], m->promote = v[16], m->has_prod = v[17];
    v += 18;
    v = take_format(v, &m->fp);
    v = take_env(v, &m->envp, &envs_ok);
    v = take_format(v, &m->facc);
    v = take_env(v, &m->envacc, &envs_ok);
    v = take_format(v, &m->fprom);
    take_env(v, &m->envprom, &envs_ok);
    if (!format_ok(&m->fa) || !format_ok(&m->fb) || !format_ok(&m->fo) || !format_ok(&m->fp) ||
        !format_ok(&m->facc) || !format_ok(&m->fprom))
        return "an invalid format descriptor";
    if (!envs_ok) return "an environment field out of range";
    if (m->grouping < SFP8U_GLOBAL || m->grouping > SFP8U_PAIRWISE_TREE) return "unknown grouping";
    if (m->align_rounding < 0 || m->align_rounding >= SFP8_NUM_ROUNDING) return "alignment rounding out of range";
    return sfp8u_check(m);
}
