/* sim_loadtree — a min segment tree over the instances' outstanding tokens,
 * so least-loaded routing costs O(log N) per request instead of a scan of
 * every instance.
 *
 * The tree answers the exact question the scan answered: the first index,
 * in cyclic order from a start index, holding the smallest load (ties go to
 * the first candidate at or after the rotating cursor). Routing through it
 * therefore picks the same instance as the scan, bit for bit. Updating one
 * leaf costs O(log N), and O(1) when its load did not change.
 * The caller owns the tree; it holds no pointer to anything else. Creation
 * returns NULL when out of memory. */
#ifndef SIM_LOADTREE_H
#define SIM_LOADTREE_H

#include <stdint.h>

typedef struct sim_loadtree sim_loadtree;

/* n ≥ 1 leaves, all at load 0. NULL when out of memory or n < 1. */
sim_loadtree *sim_loadtree_create(int32_t n);
void sim_loadtree_destroy(sim_loadtree *t);

int32_t sim_loadtree_size(const sim_loadtree *t);

/* Sets leaf i (0 ≤ i < n) to load v; O(log N), O(1) when unchanged. */
void sim_loadtree_set(sim_loadtree *t, int32_t i, int64_t v);

/* The smallest index, in cyclic order start, start+1, ..., n-1, 0, ...,
 * start-1, whose load equals the minimum over all leaves. O(log N). */
int32_t sim_loadtree_first_min_from(const sim_loadtree *t, int32_t start);

#endif
