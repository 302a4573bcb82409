/* The matrix engine's registered fast paths (mm_paths.def) and their call counters:
 * softfp8._ext.matrix_paths() / matrix_path_counts() read them (mm.h), the engine's
 * files count each path's calls (mm_paths.h).  A leaf of mm/: it calls no other
 * file of the engine. */
#include <stdint.h>

#include "mm_paths.h"

static const sfp8m_path_info PATHS[SFP8M_NUM_PATHS] = {
#define SFP8M_PATH(id, name, levels, what) {name, levels, what},
#include "mm_paths.def"
#undef SFP8M_PATH
};

static uint64_t counts[SFP8M_NUM_PATHS][3];

const sfp8m_path_info *sfp8m_path(int id) { return id >= 0 && id < SFP8M_NUM_PATHS ? &PATHS[id] : NULL; }

int mm_path_level(int path, int level)
{
    while (level > 0 && !(PATHS[path].levels >> level & 1)) level--;
    return level;
}

void mm_count(int path, int level)
{
    __atomic_fetch_add(&counts[path][mm_path_level(path, level)], 1, __ATOMIC_RELAXED);
}

uint64_t sfp8m_path_count(int id, int level)
{
    if (id < 0 || id >= SFP8M_NUM_PATHS || level < 0 || level > 2) return 0;
    return __atomic_load_n(&counts[id][level], __ATOMIC_RELAXED);
}

void sfp8m_reset_path_counts(void)
{
    for (int i = 0; i < SFP8M_NUM_PATHS; i++)
        for (int l = 0; l < 3; l++) __atomic_store_n(&counts[i][l], 0, __ATOMIC_RELAXED);
}
