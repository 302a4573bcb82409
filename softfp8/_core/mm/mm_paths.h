/* The matrix engine's path registry (mm_paths.def) and the paths' call counters
 * (mm_paths.c): the public view is in mm.h (sfp8m_path, sfp8m_path_count,
 * sfp8m_reset_path_counts); these are the engine's own. */
#ifndef SOFTFP8_MM_PATHS_H
#define SOFTFP8_MM_PATHS_H
#include "mm.h"

/* one call of path `path` whose kernels ran at the machine's SIMD level `level` */
void mm_count(int path, int level);
/* the SIMD level path `path` ran its kernels at, the machine's level being `level` */
int mm_path_level(int path, int level);
#endif
