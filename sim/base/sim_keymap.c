/* sim_keymap — see sim_keymap.h. */
#include "sim_keymap.h"

#include "sim_err.h"
#include "sim_hash.h"

#include <stdlib.h>
#include <string.h>

static int64_t slot_of(const sim_keymap *m, uint64_t key)
{
    /* Keys are usually well mixed already, but tests and callers may use
     * small consecutive ones, which would cluster under linear probing. */
    return (int64_t)(sim_hash_mix64(key) & (uint64_t)m->mask);
}

static int keymap_alloc(sim_keymap *m, int64_t cap)
{
    m->keys = malloc((size_t)cap * sizeof *m->keys);
    m->vals = malloc((size_t)cap * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = NULL;
        m->vals = NULL;
        return SIM_ENOMEM;
    }
    for (int64_t i = 0; i < cap; i++) m->vals[i] = -1;
    m->mask = cap - 1;
    m->n = 0;
    return 0;
}

int sim_keymap_init(sim_keymap *m, int64_t expect)
{
    int64_t cap = 16;
    while (cap < 2 * expect) cap *= 2;
    return keymap_alloc(m, cap);
}

void sim_keymap_fini(sim_keymap *m)
{
    if (!m) return;
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->mask = -1;
    m->n = 0;
}

int sim_keymap_reserve(sim_keymap *m, int64_t n)
{
    int64_t cap = m->mask + 1;
    if (2 * n <= cap) return 0;
    while (cap < 2 * n) cap *= 2;
    sim_keymap old = *m;
    if (keymap_alloc(m, cap) < 0) {
        *m = old;
        return SIM_ENOMEM;
    }
    for (int64_t i = 0; i <= old.mask; i++) {
        if (old.vals[i] < 0) continue;
        int64_t s = slot_of(m, old.keys[i]);
        while (m->vals[s] >= 0) s = (s + 1) & m->mask;
        m->keys[s] = old.keys[i];
        m->vals[s] = old.vals[i];
        m->n++;
    }
    free(old.keys);
    free(old.vals);
    return 0;
}

int32_t sim_keymap_get(const sim_keymap *m, uint64_t key)
{
    for (int64_t s = slot_of(m, key);; s = (s + 1) & m->mask) {
        if (m->vals[s] < 0) return -1;
        if (m->keys[s] == key) return m->vals[s];
    }
}

int sim_keymap_put(sim_keymap *m, uint64_t key, int32_t val)
{
    int rc = sim_keymap_reserve(m, m->n + 1);
    if (rc < 0) return rc;
    int64_t s = slot_of(m, key);
    while (m->vals[s] >= 0 && m->keys[s] != key) s = (s + 1) & m->mask;
    if (m->vals[s] < 0) m->n++;
    m->keys[s] = key;
    m->vals[s] = val;
    return 0;
}

int sim_keymap_del(sim_keymap *m, uint64_t key)
{
    int64_t s = slot_of(m, key);
    while (m->vals[s] >= 0 && m->keys[s] != key) s = (s + 1) & m->mask;
    if (m->vals[s] < 0) return 0;
    /* Backward-shift deletion: pull later members of the probe run into the
     * hole when their home slot is not between the hole and them, so no
     * tombstones accumulate under heavy insert/evict churn. */
    int64_t hole = s;
    for (int64_t j = (s + 1) & m->mask; m->vals[j] >= 0; j = (j + 1) & m->mask) {
        int64_t home = slot_of(m, m->keys[j]);
        int64_t d_home = (j - home) & m->mask, d_hole = (j - hole) & m->mask;
        if (d_home >= d_hole) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->vals[hole] = -1;
    m->n--;
    return 1;
}
