/* The fast paths' switches: on / off / eager (SOFTFP8_FAST, sfp8f_set_enabled)
 * and the SIMD level (SOFTFP8_SIMD, sfp8f_set_simd), with the CPU's level; the
 * one environment of env-free tables.  Nothing here depends on the families:
 * the families table resolves every level's kernel once (families.c) and the
 * level read here picks the column. */
#include <stdlib.h>
#include <string.h>

#include "fast_impl.h"
#include "simd.h"

static int g_enabled = -1; /* -1: not read yet */
static int g_simd = -1;

int sfp8s_cpu_level(void)
{
#if SFP8_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vbmi"))
        return __builtin_cpu_supports("avx2") ? 2 : 0;
    /* level 1 kernels may use FMA and F16C (every AVX2 CPU of Intel and AMD has both) */
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) return 1;
#endif
    return 0;
}

static int env_off(const char *name)
{
    const char *v = getenv(name);
    return v && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0 ||
                 strcmp(v, "false") == 0);
}

int sfp8f_enabled(void)
{
    int e = __atomic_load_n(&g_enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        const char *v = getenv("SOFTFP8_FAST");
        e = env_off("SOFTFP8_FAST") ? 0 : (v && strcmp(v, "2") == 0) ? 2 : 1;
        __atomic_store_n(&g_enabled, e, __ATOMIC_RELAXED);
    }
    return e;
}

int sfp8f_set_enabled(int on)
{
    int old = sfp8f_enabled();
    __atomic_store_n(&g_enabled, on < 0 ? 0 : on > 2 ? 2 : on, __ATOMIC_RELAXED);
    return old;
}

int sfp8f_simd_level(void)
{
    int s = __atomic_load_n(&g_simd, __ATOMIC_RELAXED);
    if (s < 0) {
        /* SOFTFP8_SIMD=0 portable C, 1 at most AVX2, 2 (or unset) the best the CPU has */
        const char *v = getenv("SOFTFP8_SIMD");
        int cpu = sfp8s_cpu_level();
        s = env_off("SOFTFP8_SIMD") ? 0 : (v && strcmp(v, "1") == 0 && cpu > 1) ? 1 : cpu;
        __atomic_store_n(&g_simd, s, __ATOMIC_RELAXED);
    }
    return s;
}

int sfp8f_set_simd(int level)
{
    int old = sfp8f_simd_level();
    int cpu = sfp8s_cpu_level();
    __atomic_store_n(&g_simd, level < 0 ? 0 : level > cpu ? cpu : level, __ATOMIC_RELAXED);
    return old;
}

/* env-free operations share one table, built in this environment */
const sfp8_env sfp8f_free_env = {SFP8_ROUND_NEAREST_EVEN, 0, 0, 32, 0};
