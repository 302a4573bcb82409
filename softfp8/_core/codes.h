/* Loading and storing one element of a strided array (internal), shared by the
 * array driver and the NumPy glue.  Unaligned access is allowed (memcpy).
 * Codes of formats of <= 8 bits are one byte, of <= 16 bits a native uint16;
 * raw elements are 1, 2, 4 or 8 bytes (codes, binary32/64 bit patterns, int64). */
#ifndef SOFTFP8_CODES_H
#define SOFTFP8_CODES_H
#include <stdint.h>
#include <string.h>

static inline uint32_t load_code(const char *p, int size)
{
    if (size == 1) return *(const uint8_t *)p;
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline void store_code(char *p, int size, uint32_t v)
{
    if (size == 1) {
        *(uint8_t *)p = (uint8_t)v;
    } else {
        uint16_t w = (uint16_t)v;
        memcpy(p, &w, 2);
    }
}

static inline uint64_t load_raw(const char *p, int size)
{
    uint64_t v = 0;
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: { uint16_t t; memcpy(&t, p, 2); return t; }
    case 4: { uint32_t t; memcpy(&t, p, 4); return t; }
    case 8: memcpy(&v, p, 8); return v;
    default: return 0;
    }
}

static inline void store_raw(char *p, int size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); break; }
    case 8: memcpy(p, &v, 8); break;
    }
}
#endif
