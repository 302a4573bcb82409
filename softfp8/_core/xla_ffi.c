/* XLA FFI handlers of softfp8.jax (docs/frameworks.md, "JAX"): the conversion float32 <->
 * codes of a format and the exact matrix product, called by XLA on the buffers of a
 * compiled JAX program -- no Python, no GIL.  They decode the call frame (xla_ffi.h:
 * softfp8's declarations of XLA's C ABI), check it, and run the array driver's
 * conversion (sfp8d_convert) or the matrix engine (sfp8m_gemm), the same calls NumPy's
 * casts and softfp8.matmul make, so results and flags are those of softfp8's NumPy
 * functions.  A malformed call (wrong stage, counts, dtypes, shapes, attributes, a bad
 * format) returns an XLA error (INVALID_ARGUMENT) naming what is wrong, which JAX raises
 * as an exception; nothing is written then.
 *
 * The floating-point environment: XLA's CPU runtime executes with flush-to-zero and
 * denormals-are-zero set (MXCSR FTZ / DAZ on x86, FPCR.FZ on Arm), which would flush the
 * subnormal binary32 values the fast paths read or compute in hardware.  Each handler
 * runs softfp8's code in the IEEE default environment (nearest even, no FTZ / DAZ, every
 * exception masked) and restores XLA's on return (fp_enter / fp_leave). */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfma.h"
#include "driver.h"
#include "mm/mm.h"
#include "quantize.h"
#include "xla_ffi.h"

#if defined(__x86_64__) || defined(_M_X64) || (defined(__i386__) && defined(__SSE2__))
#include <xmmintrin.h>
typedef unsigned fpstate;
static fpstate fp_enter(void)
{
    fpstate s = _mm_getcsr();
    _mm_setcsr(0x1F80u); /* every exception masked, no flags, nearest even, no FTZ / DAZ */
    return s;
}
static void fp_leave(fpstate s) { _mm_setcsr(s); }
#elif defined(__aarch64__)
typedef uint64_t fpstate;
static fpstate fp_enter(void)
{
    uint64_t c, d;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(c));
    d = c & ~((uint64_t)0x1F << 22 | (uint64_t)1 << 19); /* AHP, DN, FZ, RMode = nearest, FZ16 off */
    __asm__ __volatile__("msr fpcr, %0" : : "r"(d));
    return c;
}
static void fp_leave(fpstate s) { __asm__ __volatile__("msr fpcr, %0" : : "r"(s)); }
#else
typedef fenv_t fpstate;
static fpstate fp_enter(void)
{
    fpstate s;
    fegetenv(&s);
    fesetenv(FE_DFL_ENV);
    return s;
}
static void fp_leave(fpstate s) { fesetenv(&s); }
#endif

static sfx_error *fail(const sfx_call_frame *cf, int code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    sfx_error_create_args a;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memset(&a, 0, sizeof a);
    a.struct_size = SFX_ERROR_CREATE_ARGS_SIZE;
    a.message = msg;
    a.errc = code;
    return cf->api->error_create(&a);
}

#define BAD(...) fail(cf, SFX_ERR_INVALID_ARGUMENT, "softfp8 " __VA_ARGS__)

/* The metadata query (*done = 1: answered) and the frame's checks. */
static sfx_error *frame_start(sfx_call_frame *cf, const char *name, int nargs, int nrets, int *done)
{
    *done = 0;
    if (cf->struct_size < SFX_CALL_FRAME_SIZE)
        return BAD("%s: XLA_FFI_CallFrame of %zu bytes, expected at least %zu (jaxlib too old?)", name,
                   cf->struct_size, (size_t)SFX_CALL_FRAME_SIZE);
    if (cf->extension_start && cf->extension_start->type == SFX_EXT_METADATA) {
        sfx_metadata_ext *e = (sfx_metadata_ext *)cf->extension_start;
        if (e->extension_base.struct_size < SFX_METADATA_EXT_SIZE || !e->metadata ||
            e->metadata->struct_size < SFX_METADATA_SIZE)
            return BAD("%s: metadata extension too small", name);
        e->metadata->api_version.struct_size = SFX_API_VERSION_SIZE;
        e->metadata->api_version.extension_start = NULL;
        e->metadata->api_version.major_version = SFX_API_MAJOR;
        e->metadata->api_version.minor_version = SFX_API_MINOR;
        e->metadata->traits = 0;
        *done = 1;
        return NULL;
    }
    if (cf->stage != SFX_STAGE_EXECUTE)
        return BAD("%s: called at execution stage %d, registered for the execute stage (3) only", name, cf->stage);
    if (cf->args.struct_size < SFX_LIST_SIZE || cf->rets.struct_size < SFX_LIST_SIZE ||
        cf->attrs.struct_size < SFX_ATTRS_SIZE)
        return BAD("%s: argument / result / attribute lists smaller than this ABI's", name);
    if (cf->args.size != nargs || cf->rets.size != nrets)
        return BAD("%s: %lld operands and %lld results, expected %d and %d", name, (long long)cf->args.size,
                   (long long)cf->rets.size, nargs, nrets);
    for (int i = 0; i < nargs; i++)
        if (cf->args.types[i] != SFX_BUFFER ||
            ((sfx_buffer *)cf->args.items[i])->struct_size < SFX_BUFFER_SIZE)
            return BAD("%s: operand %d is not an array buffer", name, i);
    for (int i = 0; i < nrets; i++)
        if (cf->rets.types[i] != SFX_BUFFER ||
            ((sfx_buffer *)cf->rets.items[i])->struct_size < SFX_BUFFER_SIZE)
            return BAD("%s: result %d is not an array buffer", name, i);
    return NULL;
}

static sfx_buffer *arg(const sfx_call_frame *cf, int i) { return (sfx_buffer *)cf->args.items[i]; }
static sfx_buffer *ret(const sfx_call_frame *cf, int i) { return (sfx_buffer *)cf->rets.items[i]; }

/* the index of attribute `name`, or -1 */
static int64_t attr_find(const sfx_call_frame *cf, const char *name)
{
    size_t len = strlen(name);
    for (int64_t i = 0; i < cf->attrs.size; i++) {
        const sfx_bytespan *s = cf->attrs.names[i];
        if (s->len == len && memcmp(s->ptr, name, len) == 0) return i;
    }
    return -1;
}

/* the attribute `name`: an int32 array of exactly n entries (or an int32 scalar, n = 1)
   copied to out */
static sfx_error *attr_i32(const sfx_call_frame *cf, const char *op, const char *name, int n, int32_t *out)
{
    int64_t i = attr_find(cf, name);
    if (i < 0) return BAD("%s: attribute %s missing", op, name);
    if (cf->attrs.types[i] == SFX_ATTR_ARRAY) {
        const sfx_array *a = (const sfx_array *)cf->attrs.attrs[i];
        if (a->dtype != SFX_S32 || a->size != (size_t)n)
            return BAD("%s: attribute %s must be an int32 array of %d entries (dtype %d, %zu entries given)", op,
                       name, n, a->dtype, a->size);
        memcpy(out, a->data, (size_t)n * sizeof(int32_t));
        return NULL;
    }
    if (cf->attrs.types[i] == SFX_ATTR_SCALAR && n == 1) {
        const sfx_scalar *s1 = (const sfx_scalar *)cf->attrs.attrs[i];
        if (s1->dtype != SFX_S32) return BAD("%s: attribute %s must be an int32 scalar", op, name);
        memcpy(out, s1->value, sizeof(int32_t));
        return NULL;
    }
    return BAD("%s: attribute %s has attribute type %d, expected an int32 array", op, name, cf->attrs.types[i]);
}

/* a format descriptor from its 8 fields (sfp8_format's, in order), validated; binary32
   too where allowed (an accumulator, the promoted sum) */
static sfx_error *format_from(const sfx_call_frame *cf, const char *op, const char *name, const int32_t *v,
                              int binary32_ok, sfp8_format *f)
{
    int err;
    f->bits = v[0], f->is_signed = v[1], f->exp_bits = v[2], f->man_bits = v[3];
    f->bias = v[4], f->specials = v[5], f->subnormals = v[6], f->saturate = v[7];
    if (binary32_ok && memcmp(f, &sfp8_binary32, sizeof *f) == 0) return NULL;
    err = sfp8_validate(f);
    if (err != SFP8_OK)
        return BAD("%s: %s is not a valid format descriptor (bad field %s)", op, name, sfp8_error_field(err));
    return NULL;
}

/* an environment from (rounding, saturate (-1: f's default), tininess_before, sr_bits) */
static sfx_error *env_from(const sfx_call_frame *cf, const char *op, const int32_t *v, const sfp8_format *f,
                           sfp8_env *env)
{
    if (v[0] < 0 || v[0] >= SFP8_NUM_ROUNDING) return BAD("%s: rounding mode %d out of range 0..%d", op, v[0],
                                                          SFP8_NUM_ROUNDING - 1);
    if (v[1] < -1 || v[1] > 1) return BAD("%s: saturate %d not -1, 0 or 1", op, v[1]);
    if (v[2] < 0 || v[2] > 1) return BAD("%s: tininess_before %d not 0 or 1", op, v[2]);
    if (v[3] < 1 || v[3] > 32) return BAD("%s: sr_bits %d out of range 1..32", op, v[3]);
    memset(env, 0, sizeof *env);
    env->rounding = v[0];
    env->saturate = v[1] < 0 ? f->saturate : v[1];
    env->tininess_before = v[2];
    env->sr_bits = v[3];
    return NULL;
}

/* a format descriptor attribute (int32[8]) */
static sfx_error *attr_format(const sfx_call_frame *cf, const char *op, const char *name, sfp8_format *f)
{
    int32_t v[8];
    sfx_error *e = attr_i32(cf, op, name, 8, v);
    return e ? e : format_from(cf, op, name, v, 0, f);
}

/* the environment attribute "env" (int32[4]) */
static sfx_error *attr_env(const sfx_call_frame *cf, const char *op, const sfp8_format *f, sfp8_env *env)
{
    int32_t v[4];
    sfx_error *e = attr_i32(cf, op, "env", 4, v);
    return e ? e : env_from(cf, op, v, f, env);
}

/* The optional attribute "model" (int32[38]): an accumulation model of softfp8.matmul
   (docs/training.md, "Accumulation models"): has_prod, fp[8], envp[4], facc[8],
   envacc[4], promote, fprom[8], envprom[4].  Absent: the exact product (*exact = 1). */
static sfx_error *attr_model(const sfx_call_frame *cf, const char *op, sfp8m_model *md, int *exact)
{
    int32_t v[38];
    sfx_error *e;
    *exact = attr_find(cf, "model") < 0;
    if (*exact) return NULL;
    if ((e = attr_i32(cf, op, "model", 38, v))) return e;
    if (v[0] != 0 && v[0] != 1) return BAD("%s: model has_prod %d not 0 or 1", op, v[0]);
    if (v[25] < 0) return BAD("%s: model promote %d < 0", op, v[25]);
    md->exact = 0;
    md->has_prod = v[0];
    md->promote = v[25];
    if ((e = format_from(cf, op, "the model's product format", v + 1, 0, &md->fp)) ||
        (e = env_from(cf, op, v + 9, &md->fp, &md->envp)) ||
        (e = format_from(cf, op, "the model's accumulator", v + 13, 1, &md->facc)) ||
        (e = env_from(cf, op, v + 21, &md->facc, &md->envacc)) ||
        (e = format_from(cf, op, "the model's promoted format", v + 26, 1, &md->fprom)) ||
        (e = env_from(cf, op, v + 34, &md->fprom, &md->envprom)))
        return e;
    return NULL;
}

static int64_t count(const sfx_buffer *b, int64_t from, int64_t to)
{
    int64_t n = 1;
    for (int64_t i = from; i < to; i++) n *= b->dims[i];
    return n;
}

/* 1 if buffer dtype dt holds codes of f: same byte size, an integer or float type */
static int code_dtype(int dt, const sfp8_format *f)
{
    int size = sfp8d_size(f);
    switch (dt) {
    case SFX_U8: case SFX_S8: case SFX_F8E5M2: case SFX_F8E4M3FN: case SFX_F8E4M3B11FNUZ: case SFX_F8E5M2FNUZ:
    case SFX_F8E4M3FNUZ: case SFX_F8E4M3: case SFX_F8E3M4: case SFX_F8E8M0FNU:
        return size == 1;
    case SFX_U16: case SFX_S16: case SFX_F16: case SFX_BF16:
        return size == 2;
    default:
        return 0;
    }
}

/* a's leading `nb` dims equal b's */
static int same_lead(const sfx_buffer *a, const sfx_buffer *b, int64_t nb)
{
    if (a->rank < nb || b->rank < nb) return 0;
    for (int64_t i = 0; i < nb; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* the conversion's direction (attribute "dir": 1 quantise float32 x -> codes y, 0 dequantise),
   format ("fmt") and environment ("env"), and x / y checked against them (same shape) */
static sfx_error *conversion(const sfx_call_frame *cf, const char *op, const sfx_buffer *x, const sfx_buffer *y,
                             int32_t *dir, sfp8_format *f, sfp8_env *env)
{
    sfx_error *e;
    if ((e = attr_i32(cf, op, "dir", 1, dir))) return e;
    if (*dir != 0 && *dir != 1) return BAD("%s: attribute dir %d not 0 (dequantise) or 1 (quantise)", op, *dir);
    if ((e = attr_format(cf, op, "fmt", f)) || (e = attr_env(cf, op, f, env))) return e;
    const sfx_buffer *codes = *dir ? y : x, *vals = *dir ? x : y;
    if (vals->dtype != SFX_F32)
        return BAD("%s: the %s must be float32 (XLA dtype %d given)", op, *dir ? "operand" : "result", vals->dtype);
    if (!code_dtype(codes->dtype, f))
        return BAD("%s: XLA dtype %d cannot hold the codes of a %d-bit format (need %d-byte elements)", op,
                   codes->dtype, f->bits, sfp8d_size(f));
    if (x->rank != y->rank || !same_lead(x, y, x->rank)) return BAD("%s: operand and result shapes differ", op);
    return NULL;
}

sfx_error *sfp8_xla_convert(sfx_call_frame *cf)
{
    static const char op[] = "convert";
    int done, dir;
    sfp8_format f;
    sfp8_env env;
    sfx_error *e = frame_start(cf, op, 2, 2, &done);
    if (e || done) return e;
    const sfx_buffer *x = arg(cf, 0), *seed = arg(cf, 1), *y = ret(cf, 0), *fl = ret(cf, 1);
    int32_t d;
    if ((e = conversion(cf, op, x, y, &d, &f, &env))) return e;
    dir = d;
    if (seed->dtype != SFX_U32 || seed->rank < 1 || seed->dims[seed->rank - 1] != 2)
        return BAD("%s: the seed operand must be uint32 of shape (..., 2)", op);
    int64_t nb = seed->rank - 1;
    if (!same_lead(x, seed, nb) || fl->dtype != SFX_U8 || fl->rank != nb || !same_lead(fl, seed, nb))
        return BAD("%s: the seed's batch dims (leading) must match the operand's and the flags'", op);
    int64_t batches = count(seed, 0, nb), per = count(x, nb, x->rank);
    const sfp8_format *src = dir ? &sfp8_binary32 : &f, *dst = dir ? &f : &sfp8_binary32;
    ptrdiff_t ss = sfp8d_size(src), ds = sfp8d_size(dst);
    const uint32_t *sd = (const uint32_t *)seed->data;
    uint8_t *fo = (uint8_t *)fl->data;
    fpstate fps = fp_enter();
    for (int64_t b = 0; b < batches; b++) {
        sfp8_rng rng = {NULL, (uint64_t)sd[2 * b] | (uint64_t)sd[2 * b + 1] << 32, 0, 0};
        fo[b] = (uint8_t)sfp8d_convert(src, dst, &env, &rng, (const char *)x->data + b * per * ss, ss,
                                       (char *)y->data + b * per * ds, ds, per, NULL);
    }
    fp_leave(fps);
    return NULL;
}

/* a scale operand of the scaled product: float32 (..., gr, gc) whose grid divides the
   operand (rows x cols); fills the scale of batch 0 (the caller offsets s per batch) and
   *kb, the products per K-block (0: constant along K); kdim 1: K is the operand's columns */
static sfx_error *scale_of(const sfx_call_frame *cf, const char *op, const char *name, const sfx_buffer *s,
                           int64_t nb, const sfx_buffer *like, int64_t rows, int64_t cols, int kdim,
                           sfp8m_scale *sc, int64_t *kb)
{
    if (s->dtype != SFX_F32 || s->rank != nb + 2 || !same_lead(s, like, nb))
        return BAD("%s: %s must be float32 of shape (..., rows, cols) with the operands' batch dims", op, name);
    int64_t gr = s->dims[nb], gc = s->dims[nb + 1];
    if (gr < 1 || gc < 1 || rows % gr || cols % gc)
        return BAD("%s: %s grid (%lld, %lld) does not divide its operand (%lld, %lld)", op, name, (long long)gr,
                   (long long)gc, (long long)rows, (long long)cols);
    int64_t total = count(s, 0, s->rank);
    const uint32_t *v = (const uint32_t *)s->data;
    for (int64_t i = 0; i < total; i++)
        if ((v[i] >> 31) || v[i] == 0 || (v[i] & 0x7F800000u) == 0x7F800000u)
            return BAD("%s: %s holds 0x%08x at flat index %lld: scales must be positive finite float32 values", op,
                       name, (unsigned)v[i], (long long)i);
    sc->s = v;
    sc->rs = (ptrdiff_t)gc;
    sc->cs = 1;
    sc->br = rows / gr > 0 ? rows / gr : 1;
    sc->bc = cols / gc > 0 ? cols / gc : 1;
    int64_t kg = kdim ? gc : gr, kd = kdim ? cols : rows;
    *kb = kg > 1 ? kd / kg : 0;
    return NULL;
}

/* the shapes of a product: a (..., m, k), b (..., k, p), float32 o (..., m, p), uint8 flags fl (...) */
static sfx_error *product_shapes(const sfx_call_frame *cf, const char *op, const sfx_buffer *a, const sfx_buffer *b,
                                 const sfx_buffer *o, const sfx_buffer *fl, int64_t *nb, int64_t *m, int64_t *k,
                                 int64_t *p)
{
    if (o->dtype != SFX_F32) return BAD("%s: the result must be float32", op);
    *nb = a->rank - 2;
    if (*nb < 0 || b->rank != a->rank || o->rank != a->rank || !same_lead(a, b, *nb) || !same_lead(a, o, *nb) ||
        fl->dtype != SFX_U8 || fl->rank != *nb || !same_lead(a, fl, *nb))
        return BAD("%s: operands (..., m, k) and (..., k, p) with equal batch dims, float32 (..., m, p) "
                   "and uint8 flags (...) expected", op);
    *m = a->dims[*nb], *k = a->dims[*nb + 1], *p = b->dims[*nb + 1];
    if (b->dims[*nb] != *k || o->dims[*nb] != *m || o->dims[*nb + 1] != *p)
        return BAD("%s: shapes (%lld, %lld) @ (%lld, %lld) do not fit", op, (long long)*m, (long long)*k,
                   (long long)b->dims[*nb], (long long)*p);
    return NULL;
}

/* matmul (scaled 0) and scaled_mm (scaled 1): operands a, b[, scale_a, scale_b] */
static sfx_error *matmul_run(sfx_call_frame *cf, const char *op, int scaled)
{
    int done;
    sfp8_format fa, fb;
    sfp8_env env;
    sfp8m_model md;
    sfx_error *e = frame_start(cf, op, scaled ? 4 : 2, 2, &done);
    if (e || done) return e;
    const sfx_buffer *a = arg(cf, 0), *b = arg(cf, 1), *o = ret(cf, 0), *fl = ret(cf, 1);
    if ((e = attr_format(cf, op, "fmt_a", &fa)) || (e = attr_format(cf, op, "fmt_b", &fb))) return e;
    if ((e = attr_env(cf, op, &sfp8_binary32, &env))) return e;
    if (env.rounding == SFP8_ROUND_STOCHASTIC)
        return BAD("%s: stochastic rounding of the products is not offered (use a deterministic mode)", op);
    if (!code_dtype(a->dtype, &fa) || !code_dtype(b->dtype, &fb))
        return BAD("%s: operand XLA dtypes %d, %d cannot hold codes of %d- and %d-bit formats", op, a->dtype,
                   b->dtype, fa.bits, fb.bits);
    int64_t nb, m, k, p;
    if ((e = product_shapes(cf, op, a, b, o, fl, &nb, &m, &k, &p))) return e;
    int exact;
    int64_t ka = 0, kb = 0, sas = 0, sbs = 0;
    memset(&md, 0, sizeof md);
    if ((e = attr_model(cf, op, &md, &exact))) return e;
    if (scaled) {
        if ((e = scale_of(cf, op, "scale_a", arg(cf, 2), nb, a, m, k, 1, &md.sa, &ka)) ||
            (e = scale_of(cf, op, "scale_b", arg(cf, 3), nb, a, k, p, 0, &md.sb, &kb)))
            return e;
        if (ka && kb && ka != kb)
            return BAD("%s: scale_a and scale_b block K differently (%lld and %lld products)", op, (long long)ka,
                       (long long)kb);
        md.kblock = ka ? ka : kb;
        if (!exact && md.kblock) { /* scales varying along K apply per promoted chunk */
            if (md.promote == 0) md.promote = md.kblock;
            else if (md.kblock % md.promote)
                return BAD("%s: promote_every %lld must divide the scales' K-block of %lld products", op,
                           (long long)md.promote, (long long)md.kblock);
        }
        sas = count(arg(cf, 2), nb, nb + 2);
        sbs = count(arg(cf, 3), nb, nb + 2);
    }
    if (!scaled && exact && fa.bits == fb.bits && fa.is_signed == fb.is_signed && fa.exp_bits == fb.exp_bits &&
        fa.man_bits == fb.man_bits && fa.bias == fb.bias && fa.specials == fb.specials &&
        fa.subnormals == fb.subnormals) {
        sfp8m_exact_model(&md, &fa, &sfp8_binary32, &env); /* `@` / matmul(out_dtype=float32)'s model */
    } else {
        /* softfp8.matmul of two formats or with a model, scaled_mm: canonical NaNs */
        md.fa = fa;
        md.fb = fb;
        md.nan_rule = SFP8M_NAN_CANONICAL;
        md.fout = sfp8_binary32;
        md.envout = env;
        if (exact) {
            md.exact = 1;
            md.fp = md.facc = md.fprom = sfp8_binary32;
            md.envp = md.envacc = md.envprom = env;
        }
    }
    if (scaled && attr_find(cf, "scale_exact") >= 0) { /* E8M0 scales: exact products (softfp8.mx.matmul) */
        int32_t sx;
        if ((e = attr_i32(cf, op, "scale_exact", 1, &sx))) return e;
        md.scale_exact = sx != 0;
    }
    ptrdiff_t sa = sfp8d_size(&fa), sb = sfp8d_size(&fb);
    int64_t batches = count(a, 0, nb);
    uint8_t *fo = (uint8_t *)fl->data;
    int fast = sfp8m_fast_level();
    unsigned nomem = 0;
    const uint32_t *sa0 = md.sa.s, *sb0 = md.sb.s;
    fpstate fps = fp_enter();
    for (int64_t t = 0; t < batches && !nomem; t++) {
        if (scaled) md.sa.s = sa0 + t * sas, md.sb.s = sb0 + t * sbs;
        unsigned r = sfp8m_gemm(&md, NULL, (const char *)a->data + t * m * k * sa, k * sa, sa,
                                (const char *)b->data + t * k * p * sb, p * sb, sb,
                                (char *)o->data + t * m * p * 4, p * 4, 4, m, k, p, fast);
        nomem = r & SFP8M_NOMEM;
        fo[t] = (uint8_t)r;
    }
    fp_leave(fps);
    return nomem ? fail(cf, SFX_ERR_RESOURCE_EXHAUSTED, "softfp8 %s: out of memory", op) : NULL;
}

sfx_error *sfp8_xla_matmul(sfx_call_frame *cf) { return matmul_run(cf, "matmul", 0); }

sfx_error *sfp8_xla_scaled_mm(sfx_call_frame *cf) { return matmul_run(cf, "scaled_mm", 1); }

/* ---- the per-tensor scaled cast and the delayed-scaling update (softfp8.jax's layer,
 * docs/frameworks.md "JAX layers"): the arithmetic of softfp8.scaling's quantize /
 * ScaledArray.dequantize / DelayedScaling, here so that no step runs under XLA's FTZ / DAZ. */

static int f32_bits_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
/* a positive finite binary32 value, by its bits: a check on floats before fp_enter would read a
   subnormal as zero (XLA's DAZ) */
static int f32_bits_positive(uint32_t u) { return u != 0 && u < 0x7F800000u; }
static float f32_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* compute_scale of one float32 amax a for the float32 target t (scaling._scales_f32): RN_f32(t / a), float32's
   max past it, its least subnormal below; `fallback` for an amax of 0, inf or NaN; pow2: the power of two of
   the scale (its mantissa bits cleared). */
__attribute__((noinline)) static float scale_of_amax(float a, float t, int pow2, float fallback)
{
    if (!(a > 0) || !(a <= FLT_MAX)) return fallback;
    float q = t / a;
    if (q > FLT_MAX) q = FLT_MAX;
    if (q == 0) q = f32_of(1);
    if (pow2) {
        uint32_t u = bits_of(q);
        if (u >= 0x00800000u) u &= 0xFF800000u;
        else u = 1u << (31 - __builtin_clz(u));
        q = f32_of(u);
    }
    return q;
}

/* The binary32 arithmetic of these handlers runs in functions the compiler cannot inline,
   so none of it is scheduled before fp_enter has set the IEEE environment. */
__attribute__((noinline)) static void mul_chunk(double *out, const float *x, float s, int64_t n)
{
    for (int64_t j = 0; j < n; j++) out[j] = (double)x[j] * (double)s; /* exact: 24 + 24 bits */
}

__attribute__((noinline)) static void div_chunk(float *out, const double *v, float s, int64_t n)
{
    for (int64_t j = 0; j < n; j++) out[j] = (float)(v[j] / (double)s);
}

__attribute__((noinline)) static void mul_scalar(float *y, const float *x, float s1, float s2, int64_t n)
{
    float s = s1 * s2;
    for (int64_t j = 0; j < n; j++) y[j] = x[j] * s;
}

__attribute__((noinline)) static float inverse(float s) { return 1.0f / s; }

/* NVFP4's tensor scale of a positive amax (mx._tensor_scale): RN_f32(amax / (6 * 448)), 2^-149 below */
__attribute__((noinline)) static float tensor_scale(float amax)
{
    float t = amax / 2688.0f;
    return t == 0 ? f32_of(1) : t;
}

/* a tile's scale (mx._f32_scale): RN_f32(amax / fmax), 1 for amax 0, 2^-149 below; *bad set beyond float32 */
__attribute__((noinline)) static float tile_scale(float amax, float fmax, const char **bad)
{
    if (amax == 0) return 1.0f;
    float q = amax / fmax;
    if (q > FLT_MAX) *bad = "a tile's amax needs a scale beyond float32";
    return q == 0 ? f32_of(1) : q;
}

/* row[c] = x[c] / s (s: the scale of c's tile, scales[c / tc]; a NaN scale: 0), rounded to odd at 53 bits:
   the nearest quotient, moved to its odd neighbour toward the exact quotient when inexact (the remainder
   x - q s is exact in binary64: fma) */
__attribute__((noinline)) static void tile_quotients(double *row, const float *x, const float *scales, int64_t tc,
                                                     int64_t n)
{
    for (int64_t c = 0; c < n; c++) {
        double s = scales[c / tc], xv = x[c];
        if (s != s) {
            row[c] = 0.0;
            continue;
        }
        double q = xv / s, rem = fma(-q, s, xv);
        uint64_t u;
        memcpy(&u, &q, 8);
        if (rem != 0 && !(u & 1)) q = nextafter(q, rem > 0 ? INFINITY : -INFINITY);
        row[c] = q;
    }
}

/* out = RN_f32(v * s): products exact in binary64 (BlockArray.dequantize) */
__attribute__((noinline)) static void scale_chunk(float *out, const double *v, double s, int64_t n)
{
    for (int64_t j = 0; j < n; j++) out[j] = (float)(v[j] * s);
}

/* largest |v| of n binary32 values, NaN skipped (np.fmax.reduce(np.abs(v), initial=0)) */
static float amax_f32(const float *v, int64_t n)
{
    uint32_t m = 0;
    const uint32_t *u = (const uint32_t *)v;
    for (int64_t i = 0; i < n; i++) {
        uint32_t a = u[i] & 0x7FFFFFFFu;
        if (a <= 0x7F800000u && a > m) m = a;
    }
    return f32_of(m);
}

/* scaled_convert: dir 1, x (float32) -> codes of x * s, the product exact in binary64 and rounded once
   (scaling.quantize's cast); dir 0, codes -> float32 RN(RN64(value / s)) (ScaledArray.dequantize).
   Operands x, scale (batch dims), seed (batch dims, 2); results y, flags (uint8), amax (float32: max |x| for
   dir 1, max |y| for dir 0, NaN skipped), the scale used and its inverse RN_f32(1 / scale) (float32, as
   ScaledArray.scale_inv).  Attribute "rule" int32[3]:
   (0: the scale operand / 1: the current scale compute_scale(amax(x)), the float32 target's bits, pow2). */
sfx_error *sfp8_xla_scaled_convert(sfx_call_frame *cf)
{
    static const char op[] = "scaled_convert";
    enum { CHUNK = 1024 };
    int done;
    sfp8_format f;
    sfp8_env env;
    int32_t d, rule[3];
    sfx_error *e = frame_start(cf, op, 3, 5, &done);
    if (e || done) return e;
    const sfx_buffer *x = arg(cf, 0), *sc = arg(cf, 1), *seed = arg(cf, 2);
    const sfx_buffer *y = ret(cf, 0), *fl = ret(cf, 1), *am = ret(cf, 2), *su = ret(cf, 3), *si = ret(cf, 4);
    if ((e = conversion(cf, op, x, y, &d, &f, &env)) || (e = attr_i32(cf, op, "rule", 3, rule))) return e;
    if (rule[0] != 0 && (rule[0] != 1 || d != 1))
        return BAD("%s: rule %d not 0 (given scale) or 1 (current scale, quantise only)", op, rule[0]);
    float target = f32_of((uint32_t)rule[1]);
    if (rule[0] == 1 && !f32_bits_positive((uint32_t)rule[1]))
        return BAD("%s: the target 0x%08x is not a positive finite float32", op, (unsigned)rule[1]);
    int64_t nb = sc->rank;
    if (sc->dtype != SFX_F32 || !same_lead(x, sc, nb))
        return BAD("%s: the scale must be float32 with the operand's leading (batch) dims", op);
    if (seed->dtype != SFX_U32 || seed->rank != nb + 1 || seed->dims[nb] != 2 || !same_lead(x, seed, nb))
        return BAD("%s: the seed operand must be uint32 of shape (batch..., 2)", op);
    const sfx_buffer *outs[4] = {fl, am, su, si};
    for (int i = 0; i < 4; i++)
        if (outs[i]->dtype != (i ? SFX_F32 : SFX_U8) || outs[i]->rank != nb || !same_lead(outs[i], sc, nb))
            return BAD("%s: result %d must be %s with the batch dims", op, i + 1, i ? "float32" : "uint8");
    int64_t batches = count(sc, 0, nb), per = count(x, nb, x->rank);
    const uint32_t *sv = (const uint32_t *)sc->data, *sd = (const uint32_t *)seed->data;
    if (rule[0] == 0)
        for (int64_t b = 0; b < batches; b++)
            if ((sv[b] >> 31) || sv[b] == 0 || (sv[b] & 0x7F800000u) == 0x7F800000u)
                return BAD("%s: scale 0x%08x at flat index %lld: scales must be positive finite float32 values",
                           op, (unsigned)sv[b], (long long)b);
    ptrdiff_t cs = sfp8d_size(&f);
    double tmp[CHUNK];
    fpstate fps = fp_enter();
    for (int64_t b = 0; b < batches; b++) {
        sfp8_rng rng = {NULL, (uint64_t)sd[2 * b] | (uint64_t)sd[2 * b + 1] << 32, 0, 0};
        unsigned flags = 0;
        const float *xs = (const float *)x->data + (d ? b * per : 0);
        const char *cin = (const char *)x->data + b * per * cs;
        float *yv = (float *)y->data + b * per;
        char *cout = (char *)y->data + b * per * cs;
        float s = f32_of(sv[b]);
        if (d) {
            float a = amax_f32(xs, per);
            ((float *)am->data)[b] = a;
            if (rule[0] == 1) s = scale_of_amax(a, target, rule[2], 1.0f);
        }
        ((float *)su->data)[b] = s;
        ((float *)si->data)[b] = inverse(s);
        for (int64_t i = 0; i < per; i += CHUNK) {
            int64_t n = per - i < CHUNK ? per - i : CHUNK;
            if (d) {
                mul_chunk(tmp, xs + i, s, n);
                flags |= sfp8d_convert(&sfp8_binary64, &f, &env, &rng, (const char *)tmp, 8, cout + i * cs, cs, n,
                                       NULL);
            } else {
                flags |= sfp8d_convert(&f, &sfp8_binary64, &env, &rng, cin + i * cs, cs, (char *)tmp, 8, n, NULL);
                div_chunk(yv + i, tmp, s, n);
            }
        }
        if (!d) ((float *)am->data)[b] = amax_f32(yv, per);
        ((uint8_t *)fl->data)[b] = (uint8_t)flags;
    }
    fp_leave(fps);
    return NULL;
}

/* delayed_update: DelayedScaling's record and update of one tensor.  Operands history (batch..., L) float32,
   amax (batch...) float32 (>= 0 or NaN), scale (batch...) float32; results the new history and scale.  Slot 0
   takes max(slot 0, amax) (NaN skipped); the amax used is the max of the history (NaN skipped; "rule"[0] = 0)
   or slot 0 (1); the history rolls by one (slot 0 to the end) and slot 0 is cleared; the scale is
   scale_of_amax(amax, target) with the old scale as the fallback.  "rule" int32[2]: (algo, target bits). */
sfx_error *sfp8_xla_delayed_update(sfx_call_frame *cf)
{
    static const char op[] = "delayed_update";
    int done;
    int32_t rule[2];
    sfx_error *e = frame_start(cf, op, 3, 2, &done);
    if (e || done) return e;
    const sfx_buffer *h = arg(cf, 0), *am = arg(cf, 1), *sc = arg(cf, 2), *ho = ret(cf, 0), *so = ret(cf, 1);
    if ((e = attr_i32(cf, op, "rule", 2, rule))) return e;
    if (rule[0] != 0 && rule[0] != 1) return BAD("%s: amax algorithm %d not 0 (max) or 1 (most recent)", op, rule[0]);
    float target = f32_of((uint32_t)rule[1]);
    if (!f32_bits_positive((uint32_t)rule[1]))
        return BAD("%s: the target 0x%08x is not a positive finite float32", op, (unsigned)rule[1]);
    int64_t nb = am->rank;
    const sfx_buffer *all[5] = {h, am, sc, ho, so};
    for (int i = 0; i < 5; i++)
        if (all[i]->dtype != SFX_F32) return BAD("%s: every operand and result must be float32", op);
    if (h->rank != nb + 1 || ho->rank != nb + 1 || sc->rank != nb || so->rank != nb || !same_lead(h, am, nb) ||
        !same_lead(h, sc, nb) || !same_lead(h, ho, nb + 1) || !same_lead(h, so, nb) || h->dims[nb] < 1)
        return BAD("%s: history (batch..., L >= 1), amax and scale (batch...) expected", op);
    int64_t batches = count(am, 0, nb), L = h->dims[nb];
    fpstate fps = fp_enter();
    for (int64_t b = 0; b < batches; b++) {
        const uint32_t *hi = (const uint32_t *)h->data + b * L;
        uint32_t *hn = (uint32_t *)ho->data + b * L;
        uint32_t a = ((const uint32_t *)am->data)[b], s0 = hi[0];
        if (!f32_bits_nan(a) && (f32_bits_nan(s0) || a > s0)) s0 = a; /* np.fmax of values >= 0 */
        uint32_t use = s0;
        if (rule[0] == 0)
            for (int64_t i = 1; i < L; i++)
                if (!f32_bits_nan(hi[i]) && (f32_bits_nan(use) || hi[i] > use)) use = hi[i];
        for (int64_t i = 1; i < L; i++) hn[i - 1] = hi[i];
        hn[L - 1] = s0;
        hn[0] = 0; /* slot 0 cleared (L = 1 too: the recorded amax rolls onto itself) */
        float old = ((const float *)sc->data)[b];
        ((float *)so->data)[b] = scale_of_amax(f32_of(use), target, 0, old);
    }
    fp_leave(fps);
    return NULL;
}

/* unit_matmul: softfp8.matmul(a, b, out_dtype=float32, accumulation=) under a matrix-unit model, a BlockFMA or
   the pairwise / Kahan orders (sfp8m_unit_gemm, the engine's entry for them).  Operands a (..., m, k), b (..., k,
   p): codes of the model's operand formats (float32 for TF32 operands); results float32 (..., m, p) and the flags
   (uint8, batch dims).  Attribute "unit": the model's int32 encoding (bfma_params.c), binary32 output. */
sfx_error *sfp8_xla_unit_matmul(sfx_call_frame *cf)
{
    static const char op[] = "unit_matmul";
    int done;
    sfp8u_model md;
    sfx_error *e = frame_start(cf, op, 2, 2, &done);
    if (e || done) return e;
    const sfx_buffer *a = arg(cf, 0), *b = arg(cf, 1), *o = ret(cf, 0), *fl = ret(cf, 1);
    int64_t i = attr_find(cf, "unit");
    if (i < 0) return BAD("%s: attribute unit missing", op);
    if (cf->attrs.types[i] != SFX_ATTR_ARRAY || ((const sfx_array *)cf->attrs.attrs[i])->dtype != SFX_S32)
        return BAD("%s: attribute unit must be an int32 array", op);
    const sfx_array *u = (const sfx_array *)cf->attrs.attrs[i];
    const char *why = sfp8u_model_from_ints((const int32_t *)u->data, (int64_t)u->size, &md);
    if (why) return BAD("%s: the model is not valid: %s", op, why);
    if (memcmp(&md.fo, &sfp8_binary32, sizeof md.fo) != 0) return BAD("%s: the model's output must be binary32", op);
    int f32a = memcmp(&md.fa, &sfp8_binary32, sizeof md.fa) == 0, f32b = memcmp(&md.fb, &sfp8_binary32, sizeof md.fb) == 0;
    if (!(f32a ? a->dtype == SFX_F32 : code_dtype(a->dtype, &md.fa)) ||
        !(f32b ? b->dtype == SFX_F32 : code_dtype(b->dtype, &md.fb)))
        return BAD("%s: operand XLA dtypes %d, %d do not hold the model's operand formats", op, a->dtype, b->dtype);
    int64_t nb, m, k, p;
    if ((e = product_shapes(cf, op, a, b, o, fl, &nb, &m, &k, &p))) return e;
    ptrdiff_t sa = f32a ? 4 : sfp8d_size(&md.fa), sb = f32b ? 4 : sfp8d_size(&md.fb);
    int64_t batches = count(a, 0, nb);
    uint8_t *fo = (uint8_t *)fl->data;
    int fast = sfp8m_fast_level();
    unsigned nomem = 0;
    fpstate fps = fp_enter();
    for (int64_t t = 0; t < batches && !nomem; t++) {
        unsigned r = sfp8m_unit_gemm(&md, (const char *)a->data + t * m * k * sa, k * sa, sa,
                                     (const char *)b->data + t * k * p * sb, p * sb, sb, NULL, 0, 0,
                                     (char *)o->data + t * m * p * 4, p * 4, 4, m, k, p, fast);
        nomem = r & SFP8U_NOMEM;
        fo[t] = (uint8_t)r;
    }
    fp_leave(fps);
    return nomem ? fail(cf, SFX_ERR_RESOURCE_EXHAUSTED, "softfp8 %s: out of memory", op) : NULL;
}

/* scale_product: y = x * (s1 * s2) in binary32 (IEEE environment): the epilogue of gemm "unit" (nn.Recipe.matmul:
   the float32 result times the product of the two inverse scales).  Operands x (float32, any shape), s1, s2
   (float32 scalars); result y of x's shape. */
sfx_error *sfp8_xla_scale_product(sfx_call_frame *cf)
{
    static const char op[] = "scale_product";
    int done;
    sfx_error *e = frame_start(cf, op, 3, 1, &done);
    if (e || done) return e;
    const sfx_buffer *x = arg(cf, 0), *s1 = arg(cf, 1), *s2 = arg(cf, 2), *y = ret(cf, 0);
    if (x->dtype != SFX_F32 || s1->dtype != SFX_F32 || s2->dtype != SFX_F32 || y->dtype != SFX_F32 ||
        s1->rank != 0 || s2->rank != 0 || y->rank != x->rank || !same_lead(x, y, x->rank))
        return BAD("%s: float32 x, two float32 scalars and a float32 result of x's shape expected", op);
    int64_t n = count(x, 0, x->rank);
    fpstate fps = fp_enter();
    mul_scalar((float *)y->data, (const float *)x->data, *(const float *)s1->data, *(const float *)s2->data, n);
    fp_leave(fps);
    return NULL;
}

/* ---- the block scalings of softfp8.jax.Linear (MX, NVFP4): softfp8.mx.quantize's C block quantiser
 * (quantize.h, the path mx.quantize takes with the fast paths on) and BlockArray.dequantize's values. */

/* block_quantize: rows of x (rows, n) float32 quantised in blocks of bs along each row.  Operands x, seed
   uint32[2]; results the element codes (rows, n) uint8, the scale codes (rows, ceil(n / bs)) uint8, the tensor
   scale (float32; NVFP4: RN_f32(amax / 2688), 1 for an all-zero tensor, 2^-149 below; MX: 1) and the elements'
   flags (uint8).  Attributes "kind" int32[7] (nvfp4, scale rule, the element's emax, mantissa bits, largest
   value (float32 bits), bs, int8), "efmt" (the element format), "sfmt" (NVFP4's scale format), "env". */
sfx_error *sfp8_xla_block_quantize(sfx_call_frame *cf)
{
    static const char op[] = "block_quantize";
    int done;
    int32_t kind[7];
    sfp8_format fe, fs;
    sfp8_env env;
    sfx_error *e = frame_start(cf, op, 2, 4, &done);
    if (e || done) return e;
    const sfx_buffer *x = arg(cf, 0), *seed = arg(cf, 1);
    const sfx_buffer *el = ret(cf, 0), *sc = ret(cf, 1), *tsb = ret(cf, 2), *fl = ret(cf, 3);
    if ((e = attr_i32(cf, op, "kind", 7, kind)) || (e = attr_format(cf, op, "efmt", &fe)) ||
        (e = attr_format(cf, op, "sfmt", &fs)) || (e = attr_env(cf, op, &fe, &env)))
        return e;
    if ((kind[0] != 0 && kind[0] != 1) || kind[1] < 0 || kind[1] > SFP8Q_RCEIL || kind[5] < 1 ||
        (kind[6] != 0 && kind[6] != 1) || (kind[6] && kind[0]) || (fe.bits > 8 && !kind[6]))
        return BAD("%s: kind (%d, %d, ..., bs %d) or an element format of %d bits out of range", op, kind[0], kind[1],
                   kind[5], fe.bits);
    float elem_max = f32_of((uint32_t)kind[4]);
    if (!f32_bits_positive((uint32_t)kind[4])) return BAD("%s: the element's largest value is not positive", op);
    if (x->dtype != SFX_F32 || x->rank != 2 || el->dtype != SFX_U8 || !same_lead(x, el, 2) || el->rank != 2)
        return BAD("%s: float32 x (rows, n) and uint8 element codes of its shape expected", op);
    int64_t rows = x->dims[0], n = x->dims[1], bs = kind[5], nbr = (n + bs - 1) / bs;
    if (sc->dtype != SFX_U8 || sc->rank != 2 || sc->dims[0] != rows || sc->dims[1] != nbr || tsb->dtype != SFX_F32 ||
        tsb->rank != 0 || fl->dtype != SFX_U8 || fl->rank != 0 || seed->dtype != SFX_U32 || seed->rank != 1 ||
        seed->dims[0] != 2)
        return BAD("%s: scales uint8 (rows, %lld), a float32 tensor scale, uint8 flags and a uint32[2] seed expected",
                   op, (long long)nbr);
    sfp8q_args a;
    memset(&a, 0, sizeof a);
    a.x = (const char *)x->data;
    a.isize = 4;
    a.rows = rows, a.n = n, a.rs = n * 4, a.es = 4, a.bs = bs;
    a.nvfp4 = kind[0], a.rule = kind[1], a.emax = kind[2], a.mbits = kind[3], a.elem_max = elem_max;
    a.int8 = kind[6]; /* MXINT8: efmt is the helper format, the codes int8 (k = helper value * 64) */
    a.efmt = &fe;
    a.sfmt = &fs;
    a.amax = malloc((size_t)(rows * nbr > 0 ? rows * nbr : 1) * sizeof(double));
    a.special = malloc((size_t)(rows * nbr > 0 ? rows * nbr : 1));
    a.scales = (uint8_t *)sc->data;
    a.out = (char *)el->data;
    if (!a.amax || !a.special) {
        free(a.amax), free(a.special);
        return fail(cf, SFX_ERR_RESOURCE_EXHAUSTED, "softfp8 %s: out of memory", op);
    }
    const uint32_t *sd = (const uint32_t *)seed->data;
    sfp8_rng rng = {NULL, (uint64_t)sd[0] | (uint64_t)sd[1] << 32, 0, 0};
    double tmax = 0;
    unsigned flags = 0;
    int ok;
    fpstate fps = fp_enter();
    ok = sfp8q_amax(&a, &tmax);
    float ts = 1.0f;
    if (ok && a.nvfp4 && tmax > 0) ts = tensor_scale((float)tmax); /* tmax: one of x's float32 values */
    a.ts = ts;
    if (ok) ok = sfp8q_finish(&a, &env, &rng, &flags);
    fp_leave(fps);
    free(a.amax), free(a.special);
    if (ok < 0) return fail(cf, SFX_ERR_RESOURCE_EXHAUSTED, "softfp8 %s: out of memory", op);
    if (!ok) return BAD("%s: the block quantiser declined (softfp8's fast paths are off: SOFTFP8_FAST=0)", op);
    *(float *)tsb->data = ts;
    *(uint8_t *)fl->data = (uint8_t)flags;
    return NULL;
}

/* block_values: BlockArray.dequantize to float32 of the rows of element codes (rows, n) with their block scales
   and tensor scale: element * scale (* tensor scale) exact in binary64, rounded once to binary32 (a NaN scale gives
   NaN; MXINT8 elements are k * 2^-6).  The scales: E8M0 codes (mode 0, MX) or UE4M3 codes in "sfmt" (mode 1,
   NVFP4), uint8 (rows, ceil(n / bs)); or float32 values (mode 2, DeepSeek tiles of tr rows: (ceil(rows / tr),
   ceil(n / bs))).  Attributes "efmt", "sfmt", "kind" int32[4] (mode, bs, int8, tr). */
sfx_error *sfp8_xla_block_values(sfx_call_frame *cf)
{
    static const char op[] = "block_values";
    enum { CHUNK = 1024 };
    int done;
    int32_t kind[4];
    sfp8_format fe, fs;
    sfx_error *e = frame_start(cf, op, 3, 1, &done);
    if (e || done) return e;
    const sfx_buffer *el = arg(cf, 0), *sc = arg(cf, 1), *tsb = arg(cf, 2), *y = ret(cf, 0);
    if ((e = attr_i32(cf, op, "kind", 4, kind)) || (e = attr_format(cf, op, "efmt", &fe)) ||
        (e = attr_format(cf, op, "sfmt", &fs)))
        return e;
    if (kind[0] < 0 || kind[0] > 2 || kind[1] < 1 || (kind[2] != 0 && kind[2] != 1) || (fe.bits > 8 && !kind[2]) ||
        kind[3] < 1 || (kind[3] > 1 && kind[0] != 2))
        return BAD("%s: kind (%d, bs %d, tr %d) or an element format of %d bits out of range", op, kind[0], kind[1],
                   kind[3], fe.bits);
    if (el->dtype != SFX_U8 || el->rank != 2 || y->dtype != SFX_F32 || y->rank != 2 || !same_lead(el, y, 2))
        return BAD("%s: uint8 element codes (rows, n) and a float32 result of their shape expected", op);
    int64_t rows = el->dims[0], n = el->dims[1], bs = kind[1], tr = kind[3], nbr = (n + bs - 1) / bs;
    if (sc->dtype != (kind[0] == 2 ? SFX_F32 : SFX_U8) || sc->rank != 2 || sc->dims[0] != (rows + tr - 1) / tr ||
        sc->dims[1] != nbr || tsb->dtype != SFX_F32 || tsb->rank != 0)
        return BAD("%s: scales (%lld, %lld) (uint8 codes, float32 for tiles) and a float32 tensor scale expected", op,
                   (long long)((rows + tr - 1) / tr), (long long)nbr);
    const uint8_t *sv = (const uint8_t *)sc->data;
    const float *sf = (const float *)sc->data;
    sfp8_env env;
    memset(&env, 0, sizeof env);
    env.sr_bits = 32;
    double ev[CHUNK], sval[1];
    uint8_t one[1];
    sfp8_rng rng = {NULL, 0, 0, 0}; /* unused: nearest even */
    fpstate fps = fp_enter();
    double ts = *(const float *)tsb->data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j0 = 0; j0 < n; j0 += bs) {
            int64_t cnt = n - j0 < bs ? n - j0 : bs, blk = (r / tr) * nbr + j0 / bs;
            double s;
            if (kind[0] == 2) {
                s = sf[blk]; /* a tile's float32 scale (NaN: the tile held an infinity or a NaN) */
            } else if (kind[0]) {
                one[0] = sv[blk];
                sfp8d_convert(&fs, &sfp8_binary64, &env, &rng, (const char *)one, 1, (char *)sval, 8, 1, NULL);
                s = sval[0] * ts; /* exact: 4 + 24 bits */
            } else {
                s = sv[blk] == 0xFF ? NAN : ldexp(1.0, (int)sv[blk] - 127);
            }
            for (int64_t c0 = 0; c0 < cnt; c0 += CHUNK) {
                int64_t m = cnt - c0 < CHUNK ? cnt - c0 : CHUNK;
                const uint8_t *src = (const uint8_t *)el->data + r * n + j0 + c0;
                if (kind[2]) /* MXINT8: k * 2^-6 */
                    for (int64_t j = 0; j < m; j++) ev[j] = ldexp((double)(int8_t)src[j], -6);
                else
                    sfp8d_convert(&fe, &sfp8_binary64, &env, &rng, (const char *)src, 1, (char *)ev, 8, m, NULL);
                scale_chunk((float *)y->data + r * n + j0 + c0, ev, s, m);
            }
        }
    fp_leave(fps);
    return NULL;
}

/* tile_quantize: softfp8.mx.quantize_tiles of float32 rows x (R, C) in tiles of (tr, tc) (DeepSeek-V3: 1 x 128,
   128 x 128).  Per tile the float32 scale RN_f32(amax / fmt.max) (1 for an all-zero tile, 2^-149 below; NaN for a
   tile holding an infinity or a NaN, whose elements are then zeros) and the elements x / scale, the quotient
   rounded to odd at 53 bits (one later rounding of it is the rounding of the exact quotient in every mode, SPEC
   §3) and cast once by the driver, saturating, in row-major order.  Operands x, seed uint32[2]; results the codes
   (R, C) uint8, the scales (ceil(R / tr), ceil(C / tc)) float32, the flags (uint8).  Attributes "tile" int32[3]
   (tr, tc, the float32 bits of fmt.max),
   "efmt" (an 8-bit format), "env". */
sfx_error *sfp8_xla_tile_quantize(sfx_call_frame *cf)
{
    static const char op[] = "tile_quantize";
    int done;
    int32_t tile[3];
    sfp8_format fe;
    sfp8_env env;
    sfx_error *e = frame_start(cf, op, 2, 3, &done);
    if (e || done) return e;
    const sfx_buffer *x = arg(cf, 0), *seed = arg(cf, 1), *el = ret(cf, 0), *sc = ret(cf, 1), *fl = ret(cf, 2);
    if ((e = attr_i32(cf, op, "tile", 3, tile)) || (e = attr_format(cf, op, "efmt", &fe)) ||
        (e = attr_env(cf, op, &fe, &env)))
        return e;
    float fmax = f32_of((uint32_t)tile[2]);
    if (tile[0] < 1 || tile[1] < 1 || fe.bits != 8 || !f32_bits_positive((uint32_t)tile[2]))
        return BAD("%s: tile (%d, %d) or an element format of %d bits (8 expected)", op, tile[0], tile[1], fe.bits);
    if (x->dtype != SFX_F32 || x->rank != 2 || el->dtype != SFX_U8 || el->rank != 2 || !same_lead(x, el, 2))
        return BAD("%s: float32 x (rows, n) and uint8 codes of its shape expected", op);
    int64_t R = x->dims[0], C = x->dims[1], tr = tile[0], tc = tile[1], gr = (R + tr - 1) / tr, gc = (C + tc - 1) / tc;
    if (sc->dtype != SFX_F32 || sc->rank != 2 || sc->dims[0] != gr || sc->dims[1] != gc || fl->dtype != SFX_U8 ||
        fl->rank != 0 || seed->dtype != SFX_U32 || seed->rank != 1 || seed->dims[0] != 2)
        return BAD("%s: scales float32 (%lld, %lld), uint8 flags and a uint32[2] seed expected", op, (long long)gr,
                   (long long)gc);
    const uint32_t *xv = (const uint32_t *)x->data;
    uint32_t *amax = calloc((size_t)(gr * gc > 0 ? gr * gc : 1), sizeof(uint32_t)); /* |x| bits; > inf: special */
    double *row = malloc((size_t)(C > 0 ? C : 1) * sizeof(double));
    if (!amax || !row) {
        free(amax), free(row);
        return fail(cf, SFX_ERR_RESOURCE_EXHAUSTED, "softfp8 %s: out of memory", op);
    }
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) {
            uint32_t a = xv[r * C + c] & 0x7FFFFFFFu, *m = &amax[(r / tr) * gc + c / tc];
            if (a >= 0x7F800000u) a = 0xFFFFFFFFu; /* infinity or NaN: the tile is special */
            if (a > *m) *m = a;
        }
    float *sv = (float *)sc->data;
    const char *bad = NULL;
    const uint32_t *sd = (const uint32_t *)seed->data;
    sfp8_rng rng = {NULL, (uint64_t)sd[0] | (uint64_t)sd[1] << 32, 0, 0};
    unsigned flags = 0;
    fpstate fps = fp_enter();
    for (int64_t t = 0; t < gr * gc && !bad; t++)
        sv[t] = amax[t] == 0xFFFFFFFFu ? NAN : tile_scale(f32_of(amax[t]), fmax, &bad);
    for (int64_t r = 0; r < R && !bad; r++) {
        tile_quotients(row, (const float *)x->data + r * C, sv + (r / tr) * gc, tc, C);
        flags |= sfp8d_convert(&sfp8_binary64, &fe, &env, &rng, (const char *)row, 8, (char *)el->data + r * C, 1, C,
                               NULL);
    }
    fp_leave(fps);
    free(amax), free(row);
    if (bad) return BAD("%s: %s", op, bad);
    *(uint8_t *)fl->data = (uint8_t)flags;
    return NULL;
}
