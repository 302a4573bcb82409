/*
 * The matrix engine's entry (sfp8m_gemm): which path computes each output (the
 * registry of the fast paths and their call counters are in mm_paths.c).
 *
 * Exact model: the BLAS paths (mm_blas.c) when the call qualifies, else 8-bit
 * operands in integers (mm_intdot.c), block by block, else the generic kernel.
 * Accumulation models: the model kernels (mm_model.c), block by block, when the call
 * repays their tables (65,536 multiply-adds, or always with fast == 2), else the
 * generic kernel.  A block a fast kernel declines (a NaN, an infinity, an overflow,
 * a scale product out of range) is computed by the generic kernel (mm_ref.c), which
 * is also everything fast == 0 runs.  Stochastic outputs (np.matmul under a
 * stochastic context) take the generic kernel, one random word per output in
 * row-major order.
 */
#include <fenv.h>
#include <stdlib.h>
#include <string.h>

#include "mm_impl.h"

void sfp8m_exact_model(sfp8m_model *md, const sfp8_format *f, const sfp8_format *out, const sfp8_env *env)
{
    memset(md, 0, sizeof *md);
    md->fa = md->fb = *f;
    md->exact = 1;
    md->nan_rule = SFP8M_NAN_OPERAND;
    md->facc = md->fprom = md->fp = *out;
    md->fout = *out;
    md->envout = md->envacc = md->envprom = md->envp = *env;
}

/* the exact model: integer blocks where they apply, the generic kernel for the rest */
static unsigned run_exact(mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int fast)
{
    const sfp8m_model *md = c->md;
    unsigned flags = 0;
    mm_int *it = NULL;
    int used = 0;
    sfp8_env env = md->envout;
    uint64_t index = md->index;
    if ((fast && mm_int_init(c, &it) < 0) || !mm_call_tables(c, c->m * c->k * c->p)) {
        mm_int_free(it);
        return SFP8M_NOMEM;
    }
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j0 = 0; j0 < c->p; j0 += MM_INT_WIDTH) {
            int n = c->p - j0 < MM_INT_WIDTH ? (int)(c->p - j0) : MM_INT_WIDTH;
            if (it && mm_int_block(it, c, O, om, op, i, j0, n, &flags)) {
                used = 1;
                continue;
            }
            for (int64_t j = j0; j < j0 + n; j++) {
                uint8_t fl = 0;
                if (env.rounding == SFP8_ROUND_STOCHASTIC)
                    env.random = sfp8_random_u32(md->seed, md->stream, index + (uint64_t)(i * c->p + j));
                mm_store(O + i * om + j * op, c->szo, mm_exact_element(c, i, j, 0, &env, &fl));
                flags |= fl;
            }
        }
    if (used) mm_count(SFP8M_INT_DOT, 0);
    mm_int_free(it);
    return flags;
}

/* accumulation models: the model kernels where they apply, the generic kernel for the rest */
static unsigned run_model(mm_call *c, char *O, ptrdiff_t om, ptrdiff_t op, int fast)
{
    mm_model_fast *t = NULL;
    unsigned flags = 0;
    int used = 0, bw;
    /* the model kernels' tables (65,536 products, decodings) are built when the call
       repays them, or always in eager mode (fast == 2), as the fast paths' tables; exact
       scale products beyond binary32 (mx.matmul) leave the call to the generic kernel */
    /* the generic kernel's decoding tables: built before the first block it computes (with
       the model kernels most calls have none; without memory it decodes each code it reads) */
    int tabled = 0;
    if (fast && !c->scale_wide && (fast >= 2 || c->m * c->k * c->p >= 65536) && mm_model_init(c, &t) < 0) {
        mm_model_free(t);
        return SFP8M_NOMEM;
    }
    bw = t ? mm_model_width(t) : 16;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j0 = 0; j0 < c->p; j0 += bw) {
            int n = c->p - j0 < bw ? (int)(c->p - j0) : bw;
            if (t && mm_model_block(t, c, O, om, op, i, j0, n, &flags)) {
                used = 1;
                continue;
            }
            if (!tabled) {
                (void)mm_call_tables(c, c->m * c->k * c->p);
                tabled = 1;
            }
            for (int64_t j = j0; j < j0 + n; j++) {
                uint8_t fl = 0;
                mm_store(O + i * om + j * op, c->szo, mm_model_element(c, i, j, &fl));
                flags |= fl;
            }
        }
    if (used) mm_count(mm_model_path(t), mm_model_level(t));
    mm_model_free(t);
    return flags;
}

unsigned sfp8m_gemm(const sfp8m_model *md, const sfp8m_blas *blas, const char *A, ptrdiff_t am, ptrdiff_t ak,
                    const char *B, ptrdiff_t bk, ptrdiff_t bp, char *O, ptrdiff_t om, ptrdiff_t op, int64_t m,
                    int64_t k, int64_t p, int fast)
{
    mm_call c;
    unsigned flags = 0, tok;
    fenv_t fe;
    if (m <= 0 || p <= 0) return 0;
    if (md->exact && md->envout.isa) fast = 0; /* an ISA convention (NumPy loops under softfp8.isa):
                                                  the generic kernel takes its steps, as the
                                                  array driver's fast paths decline such calls */
    /* the binary64 work of the paths raises no floating-point flag of the caller's
       thread: the results' flags are the returned ones */
    feholdexcept(&fe);
    tok = sfp8f_read_begin(); /* the cached tables the kernels read live until read_end */
    if (!mm_call_init(&c, md, A, am, ak, B, bk, bp, m, k, p)) {
        flags = SFP8M_NOMEM;
    } else if (md->exact) {
        int r = mm_blas_run(&c, blas, O, om, op, fast, &flags);
        if (r == -2) flags = SFP8M_BLASFAIL;
        else if (r == -1) flags = SFP8M_NOMEM;
        else if (r == 0) flags = run_exact(&c, O, om, op, fast);
    } else {
        flags = run_model(&c, O, om, op, fast);
    }
    mm_call_free(&c);
    sfp8f_read_end(tok);
    fesetenv(&fe);
    return flags;
}

int sfp8m_fast_level(void)
{
    return sfp8f_enabled();
}
