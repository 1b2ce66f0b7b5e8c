/* sim_rng — see sim_rng.h. Seeds are mixed with splitmix64 over an FNV-1a
 * hash of the stream name, so nearby seeds give unrelated streams. */
#include "sim_rng.h"

#include "sim_hash.h"

/* One splitmix64 step: the golden increment, then the shared finaliser. */
static uint64_t splitmix64(uint64_t x) { return sim_hash_mix64(x + SIM_HASH_GAMMA); }

uint64_t sim_rng_derive(uint64_t seed, const char *stream, uint64_t index)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = stream; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ULL;
    }
    return splitmix64(splitmix64(seed ^ h) + index);
}

uint64_t sim_rng_replication_seed(uint64_t seed, uint64_t i) { return sim_rng_derive(seed, "replication", i) >> 11; }

gsl_rng *sim_rng_create(uint64_t seed, const char *stream, uint64_t index)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return NULL;
    /* mt19937 takes an unsigned long seed; 0 selects GSL's default, avoid it. */
    unsigned long s = (unsigned long)sim_rng_derive(seed, stream, index);
    gsl_rng_set(r, s ? s : 1);
    return r;
}
