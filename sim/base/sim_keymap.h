/* sim_keymap — an open-addressing (linear probing, backward-shift delete)
 * map from a 64-bit key to a non-negative int32 slot. It lives in caller
 * memory (_init/_fini) and owns only its two arrays; every growing call
 * returns SIM_ENOMEM on allocation failure and leaves the map unchanged. */
#ifndef SIM_KEYMAP_H
#define SIM_KEYMAP_H

#include <stdint.h>

typedef struct {
    uint64_t *keys;
    int32_t *vals;   /* slot value, -1 = empty */
    int64_t mask;    /* capacity - 1 (capacity is a power of two) */
    int64_t n;       /* entries held */
} sim_keymap;

/* Sets up an empty map sized for about `expect` entries. 0 or SIM_ENOMEM. */
int sim_keymap_init(sim_keymap *m, int64_t expect);
void sim_keymap_fini(sim_keymap *m);

/* Grows the table so that `n` entries in total fit without another
 * allocation (load factor <= 1/2). 0 or SIM_ENOMEM (map unchanged). */
int sim_keymap_reserve(sim_keymap *m, int64_t n);

/* The value stored for key, or -1 if absent. */
int32_t sim_keymap_get(const sim_keymap *m, uint64_t key);

/* Stores key → val (val >= 0), replacing any old value. 0 or SIM_ENOMEM. */
int sim_keymap_put(sim_keymap *m, uint64_t key, int32_t val);

/* Removes key. 1 if it was there, 0 if not. */
int sim_keymap_del(sim_keymap *m, uint64_t key);

#endif
