/* sim_hash — the one 64-bit hash finaliser (splitmix64's output mix: a
 * bijection with full avalanche), used for RNG seeding and prefix keys so
 * ids that differ in one low bit spread over all 64 bits. Pure, no state. */
#ifndef SIM_HASH_H
#define SIM_HASH_H

#include <stdint.h>

/* splitmix64's increment (2^64 / golden ratio), added before the mix by
 * the generator and by the key folds. */
#define SIM_HASH_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t sim_hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

#endif
