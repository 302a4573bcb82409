/* The counter-based generator behind sfp8_random_u32 (internal), split so that
 * array loops can hoist the parts that depend only on the seed and the stream.
 * sfp8_random_u32(seed, stream, i) ==
 *     sfp8r_bits(sfp8r_seed_key(seed), sfp8r_stream_key(stream), i). */
#ifndef SOFTFP8_RNG_H
#define SOFTFP8_RNG_H
#include <stdint.h>

static inline uint64_t sfp8r_mix64(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdULL;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ULL;
    z ^= z >> 33;
    return z;
}

static inline uint64_t sfp8r_seed_key(uint64_t seed) { return sfp8r_mix64(seed + 0x94D049BB133111EBULL); }

static inline uint64_t sfp8r_stream_key(uint64_t stream)
{
    return stream * 0xBF58476D1CE4E5B9ULL + 0x632BE59BD9B4E019ULL;
}

static inline uint32_t sfp8r_bits(uint64_t seed_key, uint64_t stream_key, uint64_t index)
{
    return (uint32_t)(sfp8r_mix64(sfp8r_mix64(index * 0x9E3779B97F4A7C15ULL + stream_key) ^ seed_key) >> 32);
}
#endif
