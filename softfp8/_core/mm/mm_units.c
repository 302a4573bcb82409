/*
 * The matrix engine's entry for the matrix-unit models (sfp8m_unit_gemm): softfp8.matmul
 * with a softfp8.BlockFMA, a profile (softfp8.Accumulation.profile), the pairwise and
 * Kahan orders, or an addend.  The generic kernel, and the definition, is bfma.c's
 * (sfp8u_gemm, exact in integers); it is what runs with the fast paths off.
 *
 * The fast path (mm_paths.def: block_fma) computes the block-FMA model with global
 * alignment and the addend among the products -- the models of the NVIDIA units -- from
 * operands decoded once: per block, the largest nominal exponent E of the products and the
 * running value (at least min_exponent), every term truncated toward zero (with its
 * sticky bit) to the unit 2^(E - W), the integers summed in 64 bits, the sum rounded once
 * to p + 1 significant bits by the model's rounding, and that value carried into the next
 * block (docs/matrix-units.md).  It takes an output only if its row of A and its column of
 * B hold no NaN or infinity, its addend is finite, and every block result is a normal
 * number of the output format; anything else (overflow, a subnormal block result) is left
 * to the generic kernel, which computes that output again from the start.  The harness
 * proves the path equal to the generic kernel (tests/harness/matrix.py, "block_fma").
 *
 * DERIVED from core.c round_pack: round_block rounds a normal block result to P
 * significant bits by the model's rounding (toward zero, nearest even or away, upward,
 * downward) as sfp8_round_value does in bfma.c's deliver, and leaves every other case to
 * it; proof: tests/harness/test_harness.py::test_entry (entry block_fma).
 */
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "mm.h"
#include "mm_paths.h"
#include "mm_simd.h"

#define NONE (-(1 << 28)) /* the nominal exponent of a zero term: below every other */

/* operands decoded: value (-1)^neg sig 2^x (sig odd, or 0), nominal exponent E */
typedef struct {
    uint32_t *sig, *neg;
    int32_t *x, *E;
} uline;

/* the running value of an output: a term like the operands' (sig 0: +0) */
typedef struct {
    uint64_t sig;
    int64_t x, E;
    int neg;
} uterm;

typedef struct {
    const sfp8u_model *md;
    int W, P, rounding, sticky, norm;
    int64_t emin_a, emin_b, emin_o, emax_o, min_exp;
} uctx;

static int bitlen64(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

static int64_t fmt_emin(const sfp8_format *f) { return f->bits == 32 ? -126 : (int64_t)1 - f->bias; }

/* the fast path computes md */
static int covers(const sfp8u_model *md, int64_t k)
{
    int W = 23 + md->extra_bits, r = md->envo.rounding;
    return md->order == SFP8U_BLOCK && md->grouping == SFP8U_GLOBAL && !md->late_addend && !md->exact_align &&
           !md->promote && md->product_overflow && k >= 1 &&
           (r == SFP8_ROUND_TOWARD_ZERO || r == SFP8_ROUND_NEAREST_EVEN || r == SFP8_ROUND_NEAREST_AWAY ||
            r == SFP8_ROUND_UPWARD || r == SFP8_ROUND_DOWNWARD) &&
           /* terms below 2^(W + 3) with the sticky bit, block + 1 of them: |sum| < 2^62 */
           W + 3 + bitlen64((uint64_t)md->block + 1) <= 62;
}

/* one operand into lane l of u: bad |= NaN or infinity; sub |= a subnormal code */
static void put(const uctx *g, const sfp8_format *f, int64_t emin, uint64_t code, uline *u, int64_t l, int *bad,
                int *sub)
{
    sfp8u_value v;
    sfp8u_decode(f, code, &v);
    *sub |= v.sub;
    u->sig[l] = 0;
    u->x[l] = 0;
    u->E[l] = NONE;
    u->neg[l] = v.neg;
    if (v.cls == SFP8U_NAN || v.cls == SFP8U_INF) {
        *bad = 1;
        return;
    }
    if (v.cls != SFP8U_FINITE || (v.sub && !g->md->in_subnormals)) return;
    {
        int tz = __builtin_ctzll(v.sig), top = (int)v.exp + bitlen64(v.sig) - 1;
        u->sig[l] = (uint32_t)(v.sig >> tz); /* the value unchanged: trailing zeros moved into x */
        u->x[l] = (int32_t)(v.exp + tz);
        u->E[l] = (int32_t)(top > emin ? top : emin);
    }
}

/* x / 2^-s truncated (s < 0) or x * 2^s; *lost: bits dropped */
static inline uint64_t align1(uint64_t sig, int64_t s, int *lost)
{
    uint64_t a;
    *lost = 0;
    if (s >= 0) return sig << s; /* below 2^(W + 2): the term's msb is at most E + 1 */
    if (s <= -64) {
        *lost = sig != 0;
        return 0;
    }
    a = sig >> -s;
    *lost = (a << -s) != sig;
    return a;
}

/* the block's sum rounded to P significant bits into *r; 0: not a normal number of fo
 * (left to the generic kernel) */
static int round_block(const uctx *g, int neg, uint64_t mag, int64_t e, uterm *r, uint8_t *lf)
{
    int bl = bitlen64(mag);
    int64_t top = e + bl - 1;
    if (top < g->emin_o || top > g->emax_o) return 0;
    if (bl > g->P) {
        int sh = bl - g->P, up = 0;
        uint64_t q = mag >> sh, rem = mag & (((uint64_t)1 << sh) - 1), half = (uint64_t)1 << (sh - 1);
        if (rem) {
            *lf |= SFP8_FLAG_INEXACT;
            switch (g->rounding) {
            case SFP8_ROUND_NEAREST_EVEN: up = rem > half || (rem == half && (q & 1)); break;
            case SFP8_ROUND_NEAREST_AWAY: up = rem >= half; break;
            case SFP8_ROUND_UPWARD: up = !neg; break;
            case SFP8_ROUND_DOWNWARD: up = neg; break;
            default: break;
            }
        }
        q += (uint64_t)up;
        if (q >> g->P) { /* carried into the next binade */
            q >>= 1;
            sh++;
            if (++top > g->emax_o) return 0;
        }
        mag = q;
        e += sh;
    }
    r->sig = mag;
    r->x = e;
    r->E = top; /* nominal(r, -126): top >= emin_o >= -126 */
    r->neg = neg;
    return 1;
}

/* the sum of one block's terms (a, b at l0 .. l0 + n - 1, and the running value) */
static int64_t block_sum(const uctx *g, const uline *a, const uline *b, int64_t l0, int64_t n, const uterm *cur,
                         int64_t ue, int *dropped)
{
    int64_t T = 0;
    int lost = 0;
    for (int64_t l = l0; l < l0 + n; l++) {
        uint64_t sig = (uint64_t)a->sig[l] * b->sig[l], t = align1(sig, (int64_t)a->x[l] + b->x[l] - ue, &lost);
        uint64_t m = -(uint64_t)(a->neg[l] ^ b->neg[l]);
        if (g->sticky) t = (t << 1) | (uint64_t)lost;
        *dropped |= lost;
        T += (int64_t)((t ^ m) - m);
    }
    if (cur->sig) {
        uint64_t t = align1(cur->sig, cur->x - ue, &lost), m = -(uint64_t)cur->neg;
        if (g->sticky) t = (t << 1) | (uint64_t)lost;
        *dropped |= lost;
        T += (int64_t)((t ^ m) - m);
    }
    return T;
}

/* the largest nominal exponent of the block's products and the running value */
static int64_t block_exp(const uctx *g, const uline *a, const uline *b, int64_t l0, int64_t n, const uterm *cur)
{
    int64_t E = cur->sig ? cur->E : NONE;
    for (int64_t l = l0; l < l0 + n; l++) {
        int64_t e = (int64_t)a->E[l] + b->E[l];
        if (g->norm && a->sig[l] && b->sig[l]) { /* normalised products: E + 1 when the msb is there */
            uint64_t sig = (uint64_t)a->sig[l] * b->sig[l];
            int64_t top = (int64_t)a->x[l] + b->x[l] + bitlen64(sig) - 1;
            if (top > e) e = top;
        }
        if (e > E) E = e;
    }
    return E;
}

/* output (a row, b a column) from the running value cur; 0: left to the generic kernel */
static int unit_dot(const uctx *g, const uline *a, const uline *b, int64_t k, uterm cur, uint64_t *out, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    uint8_t lf = 0;
    for (int64_t k0 = 0; k0 < k; k0 += md->block) {
        int64_t n = k - k0 < md->block ? k - k0 : md->block, E = block_exp(g, a, b, k0, n, &cur), T, ue;
        int dropped = 0;
        if (E < NONE / 2) { /* no term: +0 */
            memset(&cur, 0, sizeof cur);
            continue;
        }
        if (md->has_min_exp && E < md->min_exp) E = md->min_exp;
        ue = E - g->W;
        T = block_sum(g, a, b, k0, n, &cur, ue, &dropped);
        if (dropped) lf |= SFP8_FLAG_INEXACT;
        if (T == 0) {
            memset(&cur, 0, sizeof cur);
            continue;
        }
        if (!round_block(g, T < 0, T < 0 ? -(uint64_t)T : (uint64_t)T, g->sticky ? ue - 1 : ue, &cur, &lf))
            return 0;
    }
    if (!cur.sig) {
        *out = 0; /* +0 */
    } else {
        const sfp8_format *f = &md->fo;
        uint64_t frac = (cur.sig << (f->man_bits + 1 - bitlen64(cur.sig))) & (((uint64_t)1 << f->man_bits) - 1);
        *out = (uint64_t)cur.neg << (f->bits - 1) | (uint64_t)(cur.E + f->bias) << f->man_bits | frac;
    }
    *fl |= lf;
    return 1;
}

/* the addend of output (i, j) as the first running value; 0: left to the generic kernel */
static int addend(const uctx *g, const char *C, uint64_t code, uterm *cur, uint8_t *fl)
{
    const sfp8u_model *md = g->md;
    sfp8u_value v;
    memset(cur, 0, sizeof *cur);
    if (!C) return 1;
    sfp8u_decode(&md->fo, code, &v);
    if (v.cls == SFP8U_NAN || v.cls == SFP8U_INF) return 0;
    if (v.sub) *fl |= SFP8_FLAG_DENORMAL;
    if (v.cls != SFP8U_FINITE) return 1;
    if (v.sub && !md->out_subnormals) { /* read as +0 (docs: "The addend") */
        *fl |= SFP8_FLAG_INEXACT;
        return 1;
    }
    cur->sig = v.sig;
    cur->x = v.exp;
    cur->neg = v.neg;
    cur->E = (int64_t)v.exp + bitlen64(v.sig) - 1;
    if (cur->E < -126) cur->E = -126;
    return 1;
}

static int code_size(const sfp8_format *f) { return f->bits <= 8 ? 1 : f->bits <= 16 ? 2 : f->bits <= 32 ? 4 : 8; }

static void *lines(int64_t n, uline *u)
{
    char *mem = malloc((size_t)(n > 0 ? n : 1) * 16);
    if (!mem) return NULL;
    u->sig = (uint32_t *)mem;
    u->neg = (uint32_t *)(mem + 4 * n);
    u->x = (int32_t *)(mem + 8 * n);
    u->E = (int32_t *)(mem + 12 * n);
    return mem;
}

unsigned sfp8m_unit_gemm(const sfp8u_model *md, const char *A, ptrdiff_t am, ptrdiff_t ak, const char *B,
                         ptrdiff_t bk, ptrdiff_t bp, const char *C, ptrdiff_t cm, ptrdiff_t cp, char *O,
                         ptrdiff_t om, ptrdiff_t op, int64_t m, int64_t k, int64_t p, int fast)
{
    uctx g;
    uline ua, ub;
    void *ma = NULL, *mb = NULL;
    unsigned char *colbad = NULL, *colsub = NULL;
    int sa = code_size(&md->fa), sb = code_size(&md->fb), so = code_size(&md->fo), used = 0;
    unsigned flags = 0;
    if (m <= 0 || p <= 0) return 0;
    if (!fast || !covers(md, k)) return sfp8u_gemm(md, A, am, ak, B, bk, bp, C, cm, cp, O, om, op, m, k, p);
    memset(&g, 0, sizeof g);
    g.md = md;
    g.W = 23 + md->extra_bits;
    g.P = md->fo.man_bits + (md->extra_bits < 0 ? md->extra_bits : 0) + 1;
    g.rounding = md->envo.rounding;
    g.sticky = md->sticky;
    g.norm = md->normalized_products;
    g.emin_a = fmt_emin(&md->fa);
    g.emin_b = fmt_emin(&md->fb);
    g.emin_o = fmt_emin(&md->fo);
    g.emax_o = ((int64_t)1 << md->fo.exp_bits) - 2 - md->fo.bias;
    ma = lines(k, &ua);
    mb = lines(k * p, &ub);
    colbad = calloc((size_t)p, 2);
    if (!ma || !mb || !colbad) {
        free(ma);
        free(mb);
        free(colbad);
        return SFP8U_NOMEM;
    }
    colsub = colbad + p;
    for (int64_t j = 0; j < p; j++) { /* B decoded once, column by column */
        int bad = 0, sub = 0;
        for (int64_t l = 0; l < k; l++)
            put(&g, &md->fb, g.emin_b, load_raw(B + l * bk + j * bp, sb), &ub, j * k + l, &bad, &sub);
        colbad[j] = (unsigned char)bad;
        colsub[j] = (unsigned char)sub;
    }
    for (int64_t i = 0; i < m; i++) {
        int rowbad = 0, rowsub = 0;
        for (int64_t l = 0; l < k; l++) put(&g, &md->fa, g.emin_a, load_raw(A + i * am + l * ak, sa), &ua, l, &rowbad, &rowsub);
        for (int64_t j = 0; j < p; j++) {
            uint8_t fl = rowsub || colsub[j] ? SFP8_FLAG_DENORMAL : 0;
            uint64_t r, c = C ? load_raw(C + i * cm + j * cp, so) : 0;
            uterm cur;
            uline bj = {ub.sig + j * k, ub.neg + j * k, ub.x + j * k, ub.E + j * k};
            if (!rowbad && !colbad[j] && addend(&g, C, c, &cur, &fl) && unit_dot(&g, &ua, &bj, k, cur, &r, &fl)) {
                store_raw(O + i * om + j * op, so, r);
                flags |= fl;
                used = 1;
                continue;
            }
            /* the generic kernel, for this output alone */
            flags |= sfp8u_gemm(md, A + i * am, am, ak, B + j * bp, bk, bp, C ? C + i * cm + j * cp : NULL, cm, cp,
                                O + i * om + j * op, om, op, 1, k, 1);
        }
    }
    if (used) mm_count(SFP8M_BLOCK_FMA, 0);
    free(ma);
    free(mb);
    free(colbad);
    return flags;
}
