/* sim_loadtree — see sim_loadtree.h. Layout: a complete binary tree in an
 * array, node 1 the root, leaves at [cap, cap + n); leaves past n hold
 * INT64_MAX so they never win. */
#include "sim_loadtree.h"

#include <stdlib.h>

struct sim_loadtree {
    int32_t n, cap;
    int64_t *mn; /* 2·cap entries; mn[k] = min of node k's leaves */
};

sim_loadtree *sim_loadtree_create(int32_t n)
{
    if (n < 1) return NULL;
    sim_loadtree *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    int32_t cap = 1;
    while (cap < n) cap *= 2;
    t->n = n;
    t->cap = cap;
    t->mn = malloc(2 * (size_t)cap * sizeof *t->mn);
    if (!t->mn) {
        free(t);
        return NULL;
    }
    for (int32_t i = 0; i < cap; i++) t->mn[cap + i] = i < n ? 0 : INT64_MAX;
    for (int32_t k = cap - 1; k >= 1; k--) t->mn[k] = t->mn[2 * k] < t->mn[2 * k + 1] ? t->mn[2 * k] : t->mn[2 * k + 1];
    return t;
}

void sim_loadtree_destroy(sim_loadtree *t)
{
    if (!t) return;
    free(t->mn);
    free(t);
}

int32_t sim_loadtree_size(const sim_loadtree *t) { return t->n; }

void sim_loadtree_set(sim_loadtree *t, int32_t i, int64_t v)
{
    int32_t k = t->cap + i;
    if (t->mn[k] == v) return;
    t->mn[k] = v;
    for (k /= 2; k >= 1; k /= 2) {
        int64_t m = t->mn[2 * k] < t->mn[2 * k + 1] ? t->mn[2 * k] : t->mn[2 * k + 1];
        if (t->mn[k] == m) break; /* nothing above changes */
        t->mn[k] = m;
    }
}

/* Leftmost leaf with index ≥ lo holding m, or -1: walks up from leaf lo
 * to the first subtree to its right that contains m, then down into it. */
static int32_t first_at_or_after(const sim_loadtree *t, int32_t lo, int64_t m)
{
    int32_t k = t->cap + lo;
    if (t->mn[k] == m) return lo;
    /* Climb: whenever k is a left child, its right sibling covers the
     * leaves just after k's subtree. */
    for (;;) {
        if (k == 1) return -1;
        if ((k & 1) == 0 && t->mn[k + 1] == m) {
            k = k + 1;
            break;
        }
        k /= 2;
    }
    while (k < t->cap) k = t->mn[2 * k] == m ? 2 * k : 2 * k + 1;
    return k - t->cap;
}

int32_t sim_loadtree_first_min_from(const sim_loadtree *t, int32_t start)
{
    int64_t m = t->mn[1];
    int32_t i = first_at_or_after(t, start, m);
    if (i >= 0 && i < t->n) return i;
    return first_at_or_after(t, 0, m);
}
