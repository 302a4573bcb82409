/* IEEE P3109 (Interim Report v4.0) block operations (clause 5), exact with one
 * rounding: every result is the report's omega-Project (4.7.3) of the exact value
 * of its definition, computed here from the codes' fields -- products of a scale
 * and an element exactly in 64 bits, sums in the superaccumulator (accum.c),
 * products of a whole block in a big integer, quotients by a scale as a 64-bit
 * quotient with its remainder as sticky -- and rounded once by the core
 * (sfp8_round_value) inside sfp8_p3109_project, which applies the projection's
 * Saturate (core_p3109.c).  docs/semantics.md, "P3109 operations". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "core_p3109.h"
#include "elem.h"

/* an exact datum of the report: NaN, +-inf, or (-1)^sign sig 2^exp (sig = 0: zero,
   which carries no sign: P3109 has no -0) */
enum { V_FIN = 0, V_INF = 1, V_NAN = 2 };
typedef struct {
    int kind, sign;
    uint64_t sig;
    int64_t exp;
} pval;

static uint32_t load(const sfp8_format *f, const void *a, size_t i)
{
    return (f->bits <= 8 ? ((const uint8_t *)a)[i] : ((const uint16_t *)a)[i]) & sfp8_code_mask(f);
}

static void store(const sfp8_format *f, void *a, size_t i, uint32_t v)
{
    if (f->bits <= 8)
        ((uint8_t *)a)[i] = (uint8_t)v;
    else
        ((uint16_t *)a)[i] = (uint16_t)v;
}

static pval decode(const sfp8_format *f, uint32_t code)
{
    pval v = {V_FIN, 0, 0, 0};
    int cls = sfp8_classify(f, code);
    if (cls >= SFP8_CLASS_QNAN) {
        v.kind = V_NAN;
    } else if (cls == SFP8_CLASS_INF) {
        v.kind = V_INF;
        v.sign = sfp8_signbit(f, code);
    } else if (cls != SFP8_CLASS_ZERO && !(cls == SFP8_CLASS_SUBNORMAL && f->subnormals == SFP8_SUBNORMALS_FLUSH)) {
        v.sign = sfp8_signbit(f, code);
        acc_finite_value(f, code, &v.sig, &v.exp);
    }
    return v;
}

static const pval NAN_V = {V_NAN, 0, 0, 0};

/* omega-Multiply (4.10.4); finite significands of <= 32 bits each */
static pval omul(pval a, pval b)
{
    pval r = {V_FIN, a.sign ^ b.sign, 0, 0};
    if (a.kind == V_NAN || b.kind == V_NAN) return NAN_V;
    if (a.kind == V_INF || b.kind == V_INF) {
        if ((a.kind == V_FIN && a.sig == 0) || (b.kind == V_FIN && b.sig == 0)) return NAN_V;
        r.kind = V_INF;
        return r;
    }
    if (a.sig == 0 || b.sig == 0) return (pval){V_FIN, 0, 0, 0};
    r.sig = a.sig * b.sig;
    r.exp = a.exp + b.exp;
    return r;
}

/* the superaccumulator's exact sum as (sign, hi:lo, exp, sticky): 128 bits, hi's top
   bit set, value (hi 2^64 + lo + sticky delta) 2^exp; 0 if the sum is zero */
static int acc_extract(SuperAcc *a, int *sign, uint64_t *hi, uint64_t *lo, int64_t *exp, int *sticky)
{
    int n = a->nlimbs, i, top = -1, lz;
    uint64_t l1, l2;
    *sign = (int)(a->limb[n - 1] >> 63);
    if (*sign) { /* negate the two's complement limbs */
        unsigned __int128 c = 1;
        for (i = 0; i < n; i++) {
            c += (unsigned __int128)(~a->limb[i]);
            a->limb[i] = (uint64_t)c;
            c >>= 64;
        }
    }
    for (i = n - 1; i >= 0; i--)
        if (a->limb[i]) {
            top = i;
            break;
        }
    if (top < 0) {
        *sign = 0;
        return 0;
    }
    lz = __builtin_clzll(a->limb[top]);
    l1 = top > 0 ? a->limb[top - 1] : 0;
    l2 = top > 1 ? a->limb[top - 2] : 0;
    *hi = lz ? (a->limb[top] << lz | l1 >> (64 - lz)) : a->limb[top];
    *lo = lz ? (l1 << lz | l2 >> (64 - lz)) : l1;
    *sticky = lz ? (l2 << lz) != 0 : l2 != 0;
    for (i = top - 3; i >= 0 && !*sticky; i--) *sticky = a->limb[i] != 0;
    *exp = a->qmin + (int64_t)(top - 1) * 64 - lz;
    return 1;
}

/* (hi 2^64 + lo + sticky delta) 2^exp / d exactly enough for one rounding: the 128-bit
   quotient (the remainder and delta below it: floor((H + delta) / d) = floor(H / d)),
   its top 64 bits with the rest as sticky */
static pval div128(int sign, uint64_t hi, uint64_t lo, int64_t exp, int sticky, uint64_t d, int *st_out)
{
    unsigned __int128 h = (unsigned __int128)hi << 64 | lo, q = h / d;
    int st = sticky || (h % d) != 0;
    uint64_t qh = (uint64_t)(q >> 64), ql = (uint64_t)q;
    pval r = {V_FIN, sign, 0, exp};
    int lz = qh ? __builtin_clzll(qh) : 64 + __builtin_clzll(ql);
    q <<= lz;
    r.sig = (uint64_t)(q >> 64);
    st = st || (uint64_t)q != 0;
    r.exp = exp + 64 - lz;
    *st_out = st;
    return r;
}

static uint32_t project(const sfp8_format *f, pval v, int sticky, const sfp8_env *env, int sat)
{
    uint8_t fl = 0;
    return sfp8_p3109_project_value(f, v.kind, v.sign, v.sig, v.exp, sticky, env, sat, &fl);
}

/* v / S exactly (omega-BlockProject's division, 5.1.2): a 64-bit quotient and sticky */
static uint32_t project_div(const sfp8_format *f, pval z, pval s, const sfp8_env *env, int sat)
{
    pval r = {V_FIN, 0, 0, 0};
    int sticky = 0;
    if (s.kind == V_NAN || z.kind == V_NAN) return project(f, NAN_V, 0, env, sat);
    if (s.kind == V_FIN && s.sig == 0) return project(f, r, 0, env, sat);
    if (s.kind == V_INF) { /* sgn(Z) sgn(S): the report's rule */
        if (z.kind == V_INF || z.sig != 0) r = (pval){V_FIN, z.sign ^ s.sign, 1, 0};
        return project(f, r, 0, env, sat);
    }
    if (z.kind == V_INF) return project(f, (pval){V_INF, z.sign ^ s.sign, 0, 0}, 0, env, sat);
    if (z.sig == 0) return project(f, r, 0, env, sat);
    {
        int lz = __builtin_clzll(z.sig);
        r = div128(z.sign ^ s.sign, z.sig << lz, 0, z.exp - lz - 64 - s.exp, 0, s.sig, &sticky);
    }
    return project(f, r, sticky, env, sat);
}

/* the lowest quantum and the span (bits) of products of k values of the formats */
static void span_of(const sfp8_format *const fs[], int k, int64_t *qmin, int64_t *span)
{
    *qmin = 0;
    *span = 8;
    for (int i = 0; i < k; i++) {
        *qmin += (int64_t)-fs[i]->bias - fs[i]->man_bits - 1;
        *span += ((int64_t)1 << fs[i]->exp_bits) + 2 + fs[i]->man_bits;
    }
}

/* an exact sum of terms (omega-Add 4.10.3 of the specials), projected into fr */
typedef struct {
    SuperAcc acc;
    int nan, pinf, ninf;
} psum;

static int psum_init(psum *p, const sfp8_format *const fs[], int k, size_t n)
{
    int64_t qmin, span;
    span_of(fs, k, &qmin, &span);
    span += 64 - __builtin_clzll((uint64_t)n | 1);
    if (span + 66 > (int64_t)64 * ACC_MAX_LIMBS) return 0;
    acc_init_span(&p->acc, qmin, span);
    p->nan = p->pinf = p->ninf = 0;
    return 1;
}

static void psum_add(psum *p, pval v)
{
    if (v.kind == V_NAN)
        p->nan = 1;
    else if (v.kind == V_INF)
        *(v.sign ? &p->ninf : &p->pinf) = 1;
    else if (v.sig)
        acc_add_mag(&p->acc, v.sig, v.exp - p->acc.qmin, v.sign);
}

static uint32_t psum_project(psum *p, const sfp8_format *f, const pval *scale, const sfp8_env *env, int sat)
{
    pval r = {V_FIN, 0, 0, 0};
    uint64_t lo = 0;
    int sticky = 0;
    if (p->nan || (p->pinf && p->ninf))
        r = NAN_V;
    else if (p->pinf || p->ninf)
        r = (pval){V_INF, p->ninf, 0, 0};
    else if (acc_extract(&p->acc, &r.sign, &r.sig, &lo, &r.exp, &sticky)) {
        if (scale == NULL || (scale->kind == V_FIN && scale->sig != 0)) {
            if (scale != NULL)
                r = div128(r.sign ^ scale->sign, r.sig, lo, r.exp - scale->exp, sticky, scale->sig, &sticky);
            else
                r.exp += 64, sticky = sticky || lo != 0;
            return project(f, r, sticky, env, sat);
        }
    }
    return scale == NULL ? project(f, r, 0, env, sat) : project_div(f, r, *scale, env, sat);
}

#define BAD(fl) (*(fl) |= SFP8_FLAG_INVALID | SFP8_FLAG_BADCALL)

static int bad_sat(int sat) { return sat < SFP8_SAT_FINITE || sat > SFP8_SAT_NONE; }

static sfp8_env elem_env(const sfp8_env *env, const uint32_t *random, size_t i)
{
    sfp8_env e = *env;
    if (random) e.random = random[i];
    return e;
}

/* ConvertFromBlock (to = 0: Project(S X_i)) and ConvertToBlock (to = 1: Project(X_i / S)) */
static void convert_block(int to, const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x, size_t n,
                          const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                          int saturation, uint8_t *flags)
{
    pval S = decode(fs, s & sfp8_code_mask(fs));
    if (bad_sat(saturation)) {
        BAD(flags);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        sfp8_env e = elem_env(env, random, i);
        pval z = decode(fx, load(fx, x, i));
        store(fr, r, i, to ? project_div(fr, z, S, &e, saturation) : project(fr, omul(S, z), 0, &e, saturation));
    }
}

void sfp8_p3109_from_block(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x, size_t n,
                           const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                           int saturation, uint8_t *flags)
{
    convert_block(0, fs, s, fx, x, n, fr, r, env, random, saturation, flags);
}

void sfp8_p3109_to_block(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs, uint32_t s,
                         const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random, int saturation,
                         uint8_t *flags)
{
    convert_block(1, fs, s, fx, x, n, fr, r, env, random, saturation, flags);
}

uint32_t sfp8_p3109_max_abs_finite(const sfp8_format *fx, const void *x, size_t n, const sfp8_format *fs,
                                   const sfp8_env *env, int saturation, uint8_t *flags)
{
    /* reduce(MaximumFinite, [NaN, |X_1|, ...]) (5.2.3): NaN if every X_i is NaN (or
       none is given), +inf if none is finite, else the largest finite |X_i| */
    pval m = NAN_V;
    if (bad_sat(saturation)) {
        BAD(flags);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        pval v = decode(fx, load(fx, x, i));
        v.sign = 0;
        if (v.kind == V_NAN) continue;
        if (m.kind == V_NAN || (m.kind == V_INF && v.kind == V_FIN))
            m = v;
        else if (m.kind == V_FIN && v.kind == V_FIN && v.sig != 0 &&
                 (m.sig == 0 || (v.exp + 63 - __builtin_clzll(v.sig) > m.exp + 63 - __builtin_clzll(m.sig)) ||
                  (v.exp + 63 - __builtin_clzll(v.sig) == m.exp + 63 - __builtin_clzll(m.sig) &&
                   (v.sig << __builtin_clzll(v.sig)) > (m.sig << __builtin_clzll(m.sig)))))
            m = v;
    }
    return project(fs, m, 0, env, saturation);
}

uint32_t sfp8_p3109_block_reduce_add(const sfp8_format *fs, uint32_t s, const sfp8_format *fx, const void *x,
                                     size_t n, const sfp8_format *fr, const sfp8_env *env, int saturation,
                                     uint8_t *flags)
{
    const sfp8_format *fmts[2] = {fs, fx};
    pval S = decode(fs, s & sfp8_code_mask(fs));
    psum p;
    if (bad_sat(saturation) || !psum_init(&p, fmts, 2, n)) {
        BAD(flags);
        return 0;
    }
    for (size_t i = 0; i < n; i++) psum_add(&p, omul(S, decode(fx, load(fx, x, i))));
    return psum_project(&p, fr, NULL, env, saturation);
}

uint32_t sfp8_p3109_block_dot(const sfp8_format *fsx, uint32_t sx, const sfp8_format *fx, const void *x,
                              const sfp8_format *fsy, uint32_t sy, const sfp8_format *fy, const void *y, size_t n,
                              const sfp8_format *fr, const sfp8_env *env, int saturation, uint8_t *flags)
{
    const sfp8_format *fmts[4] = {fsx, fx, fsy, fy};
    pval SX = decode(fsx, sx & sfp8_code_mask(fsx)), SY = decode(fsy, sy & sfp8_code_mask(fsy));
    psum p;
    if (bad_sat(saturation) || !psum_init(&p, fmts, 4, n)) {
        BAD(flags);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        psum_add(&p, omul(omul(SX, decode(fx, load(fx, x, i))), omul(SY, decode(fy, load(fy, y, i)))));
    return psum_project(&p, fr, NULL, env, saturation);
}

/* BlockReduceMultiply: the exact product of the block in a big integer */
uint32_t sfp8_p3109_block_reduce_multiply(const sfp8_format *fs, uint32_t s, const sfp8_format *fx,
                                          const void *x, size_t n, const sfp8_format *fr, const sfp8_env *env,
                                          int saturation, uint8_t *flags)
{
    pval S = decode(fs, s & sfp8_code_mask(fs)), r = {V_FIN, 0, 1, 0};
    int any_nan = 0, any_inf = 0, any_zero = 0, neg = 0, sticky = 0;
    size_t nl = 1, cap, i;
    uint64_t *big;
    int64_t exp = 0;
    if (bad_sat(saturation)) {
        BAD(flags);
        return 0;
    }
    cap = n / 2 + 2; /* every factor S X_i has a significand below 2^32 */
    big = (uint64_t *)calloc(cap, sizeof *big);
    if (big == NULL) {
        BAD(flags);
        return 0;
    }
    big[0] = 1;
    for (i = 0; i < n; i++) {
        pval z = omul(S, decode(fx, load(fx, x, i)));
        if (z.kind == V_NAN) any_nan = 1;
        if (z.kind == V_INF) any_inf = 1;
        if (z.kind == V_FIN && z.sig == 0) any_zero = 1;
        neg ^= z.sign;
        if (z.kind != V_FIN || z.sig == 0 || any_nan || any_zero) continue;
        {
            unsigned __int128 c = 0;
            for (size_t k = 0; k < nl; k++) {
                c += (unsigned __int128)big[k] * z.sig;
                big[k] = (uint64_t)c;
                c >>= 64;
            }
            if (c) big[nl++] = (uint64_t)c;
            exp += z.exp;
        }
    }
    if (any_nan || (any_inf && any_zero)) {
        r = NAN_V;
    } else if (any_inf) {
        r = (pval){V_INF, neg, 0, 0};
    } else if (any_zero) {
        r.sig = 0;
    } else {
        size_t top = nl - 1;
        int lz = __builtin_clzll(big[top]);
        uint64_t lo = top > 0 ? big[top - 1] : 0;
        r.sign = neg;
        r.sig = big[top] << lz | (lz ? lo >> (64 - lz) : 0);
        sticky = top > 0 && (lz ? (lo << lz) != 0 : lo != 0);
        for (size_t k = 0; top >= 2 && k + 2 <= top && !sticky; k++) sticky = big[k] != 0;
        r.exp = exp + (int64_t)top * 64 - lz;
        /* far beyond every format's range: the side decides (as bits.round_exact) */
        if (r.exp > ((int64_t)1 << 40)) r.exp = (int64_t)1 << 40;
        if (r.exp < -((int64_t)1 << 40)) r.exp = -((int64_t)1 << 40);
    }
    free(big);
    return project(fr, r, sticky, env, saturation);
}

/* order of exact data (not NaN): -inf < finite < +inf, finite by value (zero unsigned) */
static int cmp_mag(pval a, pval b) /* |a| vs |b|, finite: -1, 0, 1 */
{
    int64_t la, lb;
    uint64_t ma, mb;
    if (a.sig == 0 || b.sig == 0) return (a.sig != 0) - (b.sig != 0);
    la = a.exp + 63 - __builtin_clzll(a.sig);
    lb = b.exp + 63 - __builtin_clzll(b.sig);
    if (la != lb) return la < lb ? -1 : 1;
    ma = a.sig << __builtin_clzll(a.sig);
    mb = b.sig << __builtin_clzll(b.sig);
    return (ma > mb) - (ma < mb);
}

static int cmp(pval a, pval b)
{
    int ra = a.kind == V_INF ? (a.sign ? -2 : 2) : 0, rb = b.kind == V_INF ? (b.sign ? -2 : 2) : 0;
    int sa = a.sig ? (a.sign ? -1 : 1) : 0, sb = b.sig ? (b.sign ? -1 : 1) : 0, m;
    if (ra || rb) return (ra > rb) - (ra < rb);
    if (sa != sb) return (sa > sb) - (sa < sb);
    m = cmp_mag(a, b);
    return sa < 0 ? -m : m;
}

static pval absval(pval a)
{
    a.sign = 0;
    return a;
}

/* the selections of 4.11 on exact data: Minimum / Maximum (max = 1) and the Number,
   Magnitude and Finite variants */
static pval pick(pval x, pval y, int max, int number, int magnitude, int finite)
{
    int c;
    if (number || finite) {
        if (x.kind == V_NAN) return y;
        if (y.kind == V_NAN) return x;
        if (finite && (x.kind == V_INF) != (y.kind == V_INF)) return x.kind == V_INF ? y : x;
    }
    if (x.kind == V_NAN || y.kind == V_NAN) return NAN_V;
    c = magnitude ? cmp(absval(x), absval(y)) : 0;
    if (c == 0) c = cmp(x, y);
    return (c < 0) != (max != 0) ? x : y;
}

/* omega-Divide (4.10.5) of x by y, then by the result scale R (BlockProject's
   quotient), projected into fr */
static uint32_t divide_project(const sfp8_format *fr, pval x, pval y, pval R, const sfp8_env *env, int sat)
{
    pval q;
    int sticky = 0;
    if (x.kind == V_NAN || y.kind == V_NAN || (y.kind == V_FIN && y.sig == 0) ||
        (x.kind == V_INF && y.kind == V_INF))
        return project_div(fr, NAN_V, R, env, sat);
    if (x.kind == V_INF) return project_div(fr, (pval){V_INF, x.sign ^ y.sign, 0, 0}, R, env, sat);
    if (y.kind == V_INF || x.sig == 0) return project_div(fr, (pval){V_FIN, 0, 0, 0}, R, env, sat);
    if (R.kind != V_FIN || R.sig == 0) /* BlockProject's rules need the sign of x / y only */
        return project_div(fr, (pval){V_FIN, x.sign ^ y.sign, 1, 0}, R, env, sat);
    {
        int lz = __builtin_clzll(x.sig);
        q = div128(x.sign ^ y.sign ^ R.sign, x.sig << lz, 0, x.exp - lz - 64 - y.exp - R.exp, 0, y.sig * R.sig,
                   &sticky);
    }
    return project(fr, q, sticky, env, sat);
}

/* N / D for a 3-limb N (in place) and D < 2^64: the remainder */
static uint64_t div3(uint64_t lim[3], uint64_t D)
{
    uint64_t rem = 0;
    for (int i = 2; i >= 0; i--) {
        unsigned __int128 cur = (unsigned __int128)rem << 64 | lim[i];
        lim[i] = (uint64_t)(cur / D);
        rem = (uint64_t)(cur % D);
    }
    return rem;
}

/* omega-Sqrt / omega-RSqrt (4.10.8: NaN below zero and RSqrt(0) = NaN, Sqrt(+inf) =
   +inf, RSqrt(+inf) = 0) of z, divided by the result scale R, projected once.  With
   z = m 2^e (e even) and R = d 2^k: Sqrt is sqrt(m / d^2) 2^(e/2 - k), RSqrt
   sqrt(1 / (m d^2)) 2^(-e/2 - k); each is floor(sqrt(W)) 2^-t for W = floor(N / D)
   (N = m 2^2t, D = d^2; N = 2^2t, D = m then d^2), W < 2^125 so the root has 59+
   bits, exact iff every division is exact and W a square (floor sqrt(N / D) = floor
   sqrt(floor(N / D)), floor(floor(a / b) / c) = floor(a / bc)) */
static uint32_t root_project(const sfp8_format *fr, int recip, pval z, pval R, const sfp8_env *env, int sat)
{
    uint64_t m = z.sig, D, lim[3] = {0, 0, 0}, U;
    int64_t e = z.exp, t2, x;
    unsigned __int128 W;
    int bm, bd, lz, sticky;
    if (z.kind == V_NAN || (z.sign && (z.kind == V_INF || z.sig != 0)) || (recip && z.kind == V_FIN && !z.sig))
        return project_div(fr, NAN_V, R, env, sat);
    if (z.kind == V_INF || z.sig == 0) /* Sqrt: +inf, 0; RSqrt(+inf) = 0 */
        return project_div(fr, recip ? (pval){V_FIN, 0, 0, 0} : z, R, env, sat);
    if (R.kind != V_FIN || R.sig == 0) /* BlockProject needs the class only: positive */
        return project_div(fr, (pval){V_FIN, 0, 1, 0}, R, env, sat);
    if (e & 1) m <<= 1, e -= 1;
    D = R.sig * R.sig;
    bm = 64 - __builtin_clzll(m);
    bd = 64 - __builtin_clzll(D);
    t2 = (recip ? 121 + bm + bd : 124 - bm + bd) & ~(int64_t)1; /* W < 2^125 */
    x = recip ? 1 : (int64_t)m;
    lim[t2 / 64] = (uint64_t)x << (t2 % 64);
    if (t2 % 64 && t2 / 64 < 2) lim[t2 / 64 + 1] = (uint64_t)x >> (64 - t2 % 64);
    sticky = recip && div3(lim, m) != 0;
    sticky |= div3(lim, D) != 0;
    W = (unsigned __int128)lim[1] << 64 | lim[0];
    U = (uint64_t)sqrtl((long double)W);
    while ((unsigned __int128)U * U > W) U--;
    while ((unsigned __int128)(U + 1) * (U + 1) <= W) U++;
    sticky |= (unsigned __int128)U * U != W;
    lz = __builtin_clzll(U);
    return project(fr, (pval){V_FIN, R.sign, U << lz, (recip ? -e : e) / 2 - t2 / 2 - R.exp - lz}, sticky, env,
                   sat);
}

/* the elementwise operations of 5.4 whose value is exact on the scaled operands */
static int exact_op(const char *name, int nop, const pval z[3], pval *out)
{
    static const char *const sel[] = {"Minimum", "Maximum", "MinimumNumber", "MaximumNumber",
                                      "MinimumMagnitude", "MaximumMagnitude", "MinimumMagnitudeNumber",
                                      "MaximumMagnitudeNumber", "MinimumFinite", "MaximumFinite"};
    int i;
    if (nop == 1 && !strcmp(name, "Convert")) *out = z[0];
    else if (nop == 1 && !strcmp(name, "Abs")) *out = absval(z[0]);
    else if (nop == 1 && !strcmp(name, "Negate")) *out = z[0], out->sign = (z[0].sig || z[0].kind == V_INF) && !z[0].sign;
    else if (nop == 2 && !strcmp(name, "Multiply")) *out = omul(z[0], z[1]);
    else if (nop == 2 && !strcmp(name, "CopySign")) {
        *out = (z[0].kind == V_NAN || z[1].kind == V_NAN) ? NAN_V : z[0];
        if (out->kind != V_NAN) out->sign = (z[1].sig || z[1].kind == V_INF) && z[1].sign && (out->sig || out->kind);
    } else if (nop == 3 && !strcmp(name, "Clamp")) {
        if (z[0].kind == V_NAN || z[1].kind == V_NAN || z[2].kind == V_NAN || cmp(z[2], z[1]) < 0) *out = NAN_V;
        else *out = cmp(z[1], z[0]) >= 0 ? z[1] : cmp(z[0], z[2]) >= 0 ? z[2] : z[0];
    } else {
        for (i = 0; i < 10; i++)
            if (nop == 2 && !strcmp(name, sel[i])) break;
        if (i == 10) return 0;
        *out = pick(z[0], z[1], i & 1, i == 2 || i == 3 || i == 6 || i == 7, i >= 4 && i <= 7, i >= 8);
    }
    if (out->kind == V_NAN) out->sign = 0;
    return 1;
}

/* ---- the elementary functions of 5.4 on blocks: f(S X) / S_r projected once ----
 * (the unary ones, and Hypot, ArcTan2, ArcTan2Pi of two blocks)
 *
 * The correctly rounded functions of elem*.c evaluated at the exact S X (a significand
 * of up to 32 bits) through their value-level entry (elem.h, rounding targets): every
 * value they would round -- exact, or just above / just below a 64-bit sig 2^exp from
 * Ziv's interval ends -- is divided here by S_r = d 2^k exactly enough (a 128-bit
 * quotient whose remainder is sticky) and projected.  Ziv's interval test stays valid
 * because the projection of v / S_r is monotone in v; and as f's value is never within
 * 2^-49 relative of a boundary unless it is one (elem_explog.c), the boundaries of
 * the projection of v / S_r in v -- B d 2^k, B a boundary of fr with p + 1 bits
 * (stochastic: p + 1 + sr_bits) -- must have at most 49 bits: always for the
 * deterministic modes (p <= 16, d < 2^16), checked for stochastic rounding. */
typedef struct {
    const sfp8_format *fr;
    pval R;
    const sfp8_env *env;
    int sat;
} elem_ctx;

static uint32_t elem_deliver(const sfp8e_target *t, int kind, int sign, uint64_t sig, int64_t exp, int side,
                             uint8_t *flags)
{
    const elem_ctx *c = (const elem_ctx *)t->ctx;
    pval v = {V_FIN, sign, sig, exp}, R = c->R;
    unsigned __int128 q, h;
    uint64_t rem;
    int lz, st;
    (void)flags; /* the report defines no flags: the codes decide Ziv's test */
    if (kind == SFP8X_NAN) return project_div(c->fr, NAN_V, R, c->env, c->sat);
    if (kind == SFP8X_INF) return project_div(c->fr, (pval){V_INF, sign, 0, 0}, R, c->env, c->sat);
    if (kind == SFP8X_ZERO || sig == 0) return project_div(c->fr, (pval){V_FIN, 0, 0, 0}, R, c->env, c->sat);
    if (side == 0 || R.kind != V_FIN || R.sig == 0) /* exact, or only the class matters */
        return project_div(c->fr, v, R, c->env, c->sat);
    lz = __builtin_clzll(sig);
    h = (unsigned __int128)(sig << lz) << 64;
    q = h / R.sig;
    rem = (uint64_t)(h % R.sig);
    if (side < 0 && rem == 0) q -= 1; /* just below an exact quotient */
    st = 1;                           /* just above or below: never exact */
    lz = (uint64_t)(q >> 64) ? __builtin_clzll((uint64_t)(q >> 64)) : 64 + __builtin_clzll((uint64_t)q);
    q <<= lz;
    v.sign = sign ^ R.sign;
    v.sig = (uint64_t)(q >> 64);
    /* sig 2^exp / (d 2^k) = (h / d) 2^(exp - clz(sig) - 64 - k), h / d = q, and q << lz
       keeps its top 64 bits: v.sig 2^(exp - clz(sig) - k - lz) */
    v.exp = exp - __builtin_clzll(sig) - R.exp - lz;
    return project(c->fr, v, st, c->env, c->sat);
}

static const struct {
    const char *name;
    sfp8e_unary_fn fn;
} ELEM_OPS[] = {
    {"Exp", sfp8_exp},         {"Exp2", sfp8_exp2},       {"Log", sfp8_log},         {"Log2", sfp8_log2},
    {"LogOnePlus", sfp8_log1p}, {"ExpMinusOne", sfp8_expm1}, {"Sin", sfp8_sin},      {"Cos", sfp8_cos},
    {"Tan", sfp8_tan},         {"ArcSin", sfp8_arcsin},   {"ArcCos", sfp8_arccos},   {"ArcTan", sfp8_arctan},
    {"Sinh", sfp8_sinh},       {"Cosh", sfp8_cosh},       {"Tanh", sfp8_tanh},       {"ArcSinh", sfp8_arcsinh},
    {"ArcCosh", sfp8_arccosh}, {"ArcTanh", sfp8_arctanh}, {"SinPi", sfp8_sinpi},     {"CosPi", sfp8_cospi},
    {"TanPi", sfp8_tanpi},     {"ArcSinPi", sfp8_asinpi}, {"ArcCosPi", sfp8_acospi}, {"ArcTanPi", sfp8_atanpi},
    {"Softplus", sfp8_softplus},
};

static sfp8e_unary_fn elem_fn(const char *name)
{
    for (size_t i = 0; i < sizeof ELEM_OPS / sizeof ELEM_OPS[0]; i++)
        if (!strcmp(name, ELEM_OPS[i].name)) return ELEM_OPS[i].fn;
    return NULL;
}

/* the binary ones: Hypot (4.10.14), ArcTan2(y, x), ArcTan2Pi(y, x) (4.10.15-16) */
static sfp8e_binary_fn elem_fn2(const char *name)
{
    if (!strcmp(name, "Hypot")) return sfp8_hypot;
    return !strcmp(name, "ArcTan2") ? sfp8_arctan2 : !strcmp(name, "ArcTan2Pi") ? sfp8_atan2pi : NULL;
}

/* a finite or infinite datum as the functions' decoded operand, canonical (odd
   significand: equal values have equal fields, as atan2pi's |y| = |x| test needs) */
static sfp8x_val elem_val(pval z)
{
    sfp8x_val v;
    memset(&v, 0, sizeof v);
    v.kind = z.kind == V_INF ? SFP8X_INF : z.sig ? SFP8X_FINITE : SFP8X_ZERO;
    v.sign = z.kind == V_INF || z.sig ? z.sign : 0;
    if (v.kind == SFP8X_FINITE) {
        int tz = __builtin_ctzll(z.sig);
        v.sig = z.sig >> tz;
        v.exp = z.exp + tz;
    }
    return v;
}

/* the stochastic boundaries of fr times S_r's odd significand within 49 bits */
static int elem_env_ok(const sfp8_format *fr, pval R, const sfp8_env *env)
{
    int bd = (R.kind == V_FIN && R.sig) ? 64 - __builtin_clzll(R.sig >> __builtin_ctzll(R.sig)) : 0;
    int sr = env->rounding == SFP8_ROUND_STOCHASTIC ? env->sr_bits : 0;
    return fr->man_bits + 2 + sr + bd <= 49;
}

/* Project(fn(z[0] [, z[1]]) / R): NaN operands (Hypot's too: 4.10.14) and the report's
   NaNs beyond IEEE 754's (4.10: TanPi(n + 1/2), ArcTan2 / ArcTan2Pi of (0, 0) and
   (+-inf, +-inf)) here, the rest through the function's value-level entry */
static uint32_t elem_project(const char *name, int nop, const sfp8_format *fr, const pval z[2], pval R,
                             const sfp8_env *env, int sat)
{
    elem_ctx c = {fr, R, env, sat};
    sfp8e_target t;
    uint8_t fl = 0;
    int k;
    for (k = 0; k < nop; k++)
        if (z[k].kind == V_NAN) return project_div(fr, NAN_V, R, env, sat);
    if (nop == 1 && !strcmp(name, "TanPi") && z[0].kind == V_FIN && z[0].sig &&
        z[0].exp + __builtin_ctzll(z[0].sig) == -1)
        return project_div(fr, NAN_V, R, env, sat);
    if (nop == 2 && strcmp(name, "Hypot") && ((z[0].kind == V_INF && z[1].kind == V_INF) ||
                     (z[0].kind == V_FIN && !z[0].sig && z[1].kind == V_FIN && !z[1].sig)))
        return project_div(fr, NAN_V, R, env, sat);
    memset(&t, 0, sizeof t);
    t.x = elem_val(z[0]);
    if (nop == 2) t.y = elem_val(z[1]);
    t.round = elem_deliver;
    t.ctx = &c;
    if (nop == 1) return sfp8e_unary_value(elem_fn(name), &t, env, &fl);
    return sfp8e_binary_value(elem_fn2(name), &t, env, &fl);
}

int sfp8_p3109_block_op(int op, int nblocks, const sfp8_format *const fss[], const uint32_t s[],
                        const sfp8_format *const fxs[], const void *const xs[], size_t n, const sfp8_format *fsr,
                        uint32_t sr, const sfp8_format *fr, void *r, const sfp8_env *env, const uint32_t *random,
                        int saturation, uint8_t *flags)
{
    const char *name = sfp8_p3109_name(op);
    int add = name && (!strcmp(name, "Add") || !strcmp(name, "Subtract") || !strcmp(name, "FMA") ||
                       !strcmp(name, "FAA"));
    pval S[3], SR;
    int k;
    if (name == NULL || nblocks < 1 || nblocks > 3 || bad_sat(saturation)) {
        BAD(flags);
        return 0;
    }
    for (k = 0; k < nblocks; k++) S[k] = decode(fss[k], s[k] & sfp8_code_mask(fss[k]));
    SR = decode(fsr, sr & sfp8_code_mask(fsr));
    if (((nblocks == 1 && elem_fn(name)) || (nblocks == 2 && elem_fn2(name))) && !elem_env_ok(fr, SR, env)) {
        BAD(flags); /* before any element: nothing written */
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        pval z[3], out;
        sfp8_env e = elem_env(env, random, i);
        for (k = 0; k < nblocks; k++) z[k] = omul(S[k], decode(fxs[k], load(fxs[k], xs[k], i)));
        if (add) {
            const sfp8_format *fm[6];
            psum p;
            int np = 0;
            for (k = 0; k < nblocks; k++) fm[np++] = fss[k], fm[np++] = fxs[k];
            if (!psum_init(&p, fm, np, 4)) {
                BAD(flags);
                return 0;
            }
            if (!strcmp(name, "Subtract") && nblocks == 2) z[1].sign ^= (z[1].kind != V_NAN);
            if (!strcmp(name, "FMA") && nblocks == 3) {
                psum_add(&p, omul(z[0], z[1]));
                psum_add(&p, z[2]);
            } else if (nblocks == (!strcmp(name, "FAA") ? 3 : 2)) {
                for (k = 0; k < nblocks; k++) psum_add(&p, z[k]);
            } else {
                BAD(flags);
                return 0;
            }
            store(fr, r, i, psum_project(&p, fr, &SR, &e, saturation));
            continue;
        }
        if ((nblocks == 1 && elem_fn(name) != NULL) || (nblocks == 2 && elem_fn2(name) != NULL)) {
            store(fr, r, i, elem_project(name, nblocks, fr, z, SR, &e, saturation));
            continue;
        }
        if (nblocks == 1 && (!strcmp(name, "Sqrt") || !strcmp(name, "RSqrt"))) {
            store(fr, r, i, root_project(fr, name[0] == 'R', z[0], SR, &e, saturation));
            continue;
        }
        if ((nblocks == 2 && !strcmp(name, "Divide")) || (nblocks == 1 && !strcmp(name, "Recip"))) {
            pval one = {V_FIN, 0, 1, 0};
            store(fr, r, i, nblocks == 2 ? divide_project(fr, z[0], z[1], SR, &e, saturation)
                                         : divide_project(fr, one, z[0], SR, &e, saturation));
            continue;
        }
        if (!exact_op(name, nblocks, z, &out)) {
            BAD(flags);
            return 0;
        }
        store(fr, r, i, project_div(fr, out, SR, &e, saturation));
    }
    return 1;
}
