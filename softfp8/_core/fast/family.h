/* Fast-path families (internal to softfp8/_core): the one call signature every
 * family runs with, the family descriptor, and the families' functions
 * declared from the table families.def.
 *
 * A family is one way of computing exactly the core's results faster: a
 * prepare step that looks at a call (operation, formats, environment, sizes)
 * and returns the family's parameters (a cached table, or parameters written
 * into the caller's scratch) or NULL to decline, and one kernel per SIMD level
 * (portable C always; AVX2, AVX-512 where the family has them) that runs the
 * call on strided data.  The array driver (driver.c) walks the table in order
 * and runs the first family that accepts a call; a level without a kernel of
 * its own runs the next lower level's.  See docs/architecture.md, "Fast-path
 * families". */
#ifndef SOFTFP8_FAMILY_H
#define SOFTFP8_FAMILY_H
#include <stddef.h>
#include <stdint.h>

#include "softfp8/softfp8.h"

/* SIMD levels: columns of families.def (sfp8f_simd_level() picks one) */
enum { SFP8F_PORTABLE = 0, SFP8F_AVX2 = 1, SFP8F_AVX512 = 2, SFP8F_LEVELS = 3 };

/* what a call asks for (a family's `kinds` is a mask of these) */
enum { SFP8F_OP = 1, SFP8F_CONVERT = 2, SFP8F_SUM = 4, SFP8F_BLOCK = 8 /* the block quantiser's kernels (blockq.h) */ };

/* the result of a SUM call: the exact sum as an integer multiple of the
   format's quantum 2^qmin (fast.h, sfp8f_sum), and the SFP8F_SUM_* categories
   seen (a NaN or infinity: the caller takes the generic path) */
typedef struct sfp8f_sum_acc {
    __int128 total;
    unsigned cats;
} sfp8f_sum_acc;

/* One call.  Strides are in bytes (any sign, zero allowed); outputs may overlap
 * inputs as NumPy's accumulate and reduce pass them (fast.h: the rules every
 * kernel follows); codes with bits above the format's width are read with those
 * bits ignored. */
struct sfp8f_blockq;
typedef struct sfp8f_call {
    int kind;                  /* SFP8F_OP, SFP8F_CONVERT, SFP8F_SUM or SFP8F_BLOCK */
    int op;                    /* SFP8F_OP: enum sfp8x_op (a code-only kind, ops.h); else -1 */
    const sfp8_format *f;      /* the operation's format, or the conversion's source */
    const sfp8_format *dst;    /* the conversion's destination (f for the other kinds) */
    const sfp8_env *env;
    int sr;                    /* 1: stochastic rounding (of an operation that rounds) whose random
                                  bits are generated: element i's are
                                  sfp8_random_u32(seed, stream, index0 + i) */
    uint64_t seed, stream, index0;
    int level;                 /* the SIMD level of the kernel that will run (set before prepare) */
    int isize, osize;          /* bytes of one operand / one result (sfp8d_size; 1 for booleans) */
    const char *a, *b, *c;     /* operands; b and c NULL beyond the arity */
    ptrdiff_t sa, sb, sc;
    char *o;
    ptrdiff_t so;
    ptrdiff_t n;               /* > 0 */
    uint8_t *flout;            /* per-element flags (contiguous), or NULL */
    sfp8f_sum_acc *sum;        /* SFP8F_SUM: the result */
    const struct sfp8f_blockq *block; /* SFP8F_BLOCK: the call's rows and phase (blockq.h) */
} sfp8f_call;

/* a call of one operand (a) and one result (o); the rest zero (no stochastic bits,
   level 0) */
static inline sfp8f_call sfp8f_call1(int kind, int op, const sfp8_format *f, const sfp8_format *dst,
                                     const sfp8_env *env, int isize, int osize, const char *a, ptrdiff_t sa, char *o,
                                     ptrdiff_t so, ptrdiff_t n, uint8_t *flout)
{
    const sfp8f_call c = {.kind = kind, .op = op, .f = f, .dst = dst, .env = env, .isize = isize, .osize = osize,
                          .a = a, .sa = sa, .o = o, .so = so, .n = n, .flout = flout};
    return c;
}

/* bytes a prepare step may write into its scratch (parameters that are not a
   cached table: cast16, sr_cast16) */
enum { SFP8F_SCRATCH = 256 };

/* the family's parameters for call c, or NULL: not this family's call */
typedef const void *(*sfp8f_prepare_fn)(const sfp8f_call *c, void *scratch);
/* run call c with the parameters prepare returned: the OR of the elements' flags */
typedef unsigned (*sfp8f_run_fn)(const void *t, const sfp8f_call *c);

typedef struct sfp8f_family {
    const char *name;          /* the contract's name: _ext.fast_families() */
    const char *what;          /* one line */
    const char *space;         /* the parameter space prepare accepts (docs) */
    unsigned kinds;            /* SFP8F_OP | SFP8F_CONVERT | SFP8F_SUM */
    int sr;                    /* 1: only calls with c->sr (stochastic, generated bits) */
    sfp8f_prepare_fn prepare;
    sfp8f_run_fn run[SFP8F_LEVELS]; /* the family's own kernels; NULL: none at that level */
} sfp8f_family;

/* family ids, in table order: SFP8F_FAM_<name> */
enum {
#define SFP8F_FAMILY(name, kinds, sr, prepare, k0, k1, k2, what, space) SFP8F_FAM_##name,
#include "families.def"
#undef SFP8F_FAMILY
    SFP8F_NFAMILIES
};

/* the families' prepare steps and kernels (defined in their files) */
#define KERNEL(fn) unsigned fn(const void *t, const sfp8f_call *c);
#define NONE
#define SFP8F_FAMILY(name, kinds, sr, prepare, k0, k1, k2, what, space)                                      \
    const void *prepare(const sfp8f_call *c, void *scratch);                                                  \
    k0 k1 k2
#include "families.def"
#undef SFP8F_FAMILY
#undef KERNEL
#undef NONE

/* the table (families.c), in the order the driver tries them */
extern const sfp8f_family sfp8f_families[SFP8F_NFAMILIES];

/* the kernel a family runs at some SIMD level: its own, or the next lower level's */
typedef struct sfp8f_kernel {
    sfp8f_run_fn run;
    int level; /* the kernel's own level */
} sfp8f_kernel;
/* every family's kernel at SIMD level `level`, indexed by family id (families.c:
   resolved once for every level) */
const sfp8f_kernel *sfp8f_kernels(int level);
/* count one run of family k at kernel level l (relaxed atomics, families.c) */
void sfp8f_family_count(int k, int l);
#endif
