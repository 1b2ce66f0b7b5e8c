/* sim_kvtier — see sim_kvtier.h. */
#include "sim_kvtier.h"

#include "sim_prefix_keys.h"

#include <stdlib.h>

typedef struct {
    uint64_t key;
    int32_t prev, next; /* LRU list; next doubles as the free-list link */
} entry;

struct sim_kvtier {
    int64_t capacity;
    entry *e;
    int32_t cap_e, used_e, free_head, n_free;
    int32_t head, tail; /* head = least recently used, tail = most */
    sim_keymap map;
};

int sim_kvtier_create(int64_t capacity_blocks, sim_kvtier **out, sim_err *err)
{
    *out = NULL;
    if (capacity_blocks < 0 || capacity_blocks >= INT32_MAX)
        return sim_err_set(err, SIM_EINVAL, "KV tier capacity %lld blocks out of range",
                           (long long)capacity_blocks);
    sim_kvtier *t = calloc(1, sizeof *t);
    if (!t) return sim_err_set(err, SIM_ENOMEM, "out of memory for a KV tier");
    t->capacity = capacity_blocks;
    t->free_head = t->head = t->tail = -1;
    if (sim_keymap_init(&t->map, 64) < 0) {
        free(t);
        return sim_err_set(err, SIM_ENOMEM, "out of memory for a KV tier");
    }
    *out = t;
    return 0;
}

void sim_kvtier_destroy(sim_kvtier *t)
{
    if (!t) return;
    sim_keymap_fini(&t->map);
    free(t->e);
    free(t);
}

int64_t sim_kvtier_size(const sim_kvtier *t) { return t->map.n; }
int64_t sim_kvtier_capacity(const sim_kvtier *t) { return t->capacity; }
int sim_kvtier_contains(const sim_kvtier *t, uint64_t key) { return sim_keymap_get(&t->map, key) >= 0; }

static void unlink_entry(sim_kvtier *t, int32_t i)
{
    entry *x = &t->e[i];
    if (x->prev >= 0) t->e[x->prev].next = x->next;
    else t->head = x->next;
    if (x->next >= 0) t->e[x->next].prev = x->prev;
    else t->tail = x->prev;
}

static void push_tail(sim_kvtier *t, int32_t i)
{
    t->e[i].prev = t->tail;
    t->e[i].next = -1;
    if (t->tail >= 0) t->e[t->tail].next = i;
    else t->head = i;
    t->tail = i;
}

static void drop(sim_kvtier *t, int32_t i)
{
    unlink_entry(t, i);
    sim_keymap_del(&t->map, t->e[i].key);
    t->e[i].next = t->free_head;
    t->free_head = i;
    t->n_free++;
}

int32_t sim_kvtier_peek(const sim_kvtier *t, const uint64_t *keys, int32_t n)
{
    int32_t i = 0;
    while (i < n && sim_keymap_get(&t->map, keys[i]) >= 0) i++;
    return i;
}

int32_t sim_kvtier_match(sim_kvtier *t, const uint64_t *keys, int32_t n)
{
    int32_t i = 0;
    for (; i < n; i++) {
        int32_t s = sim_keymap_get(&t->map, keys[i]);
        if (s < 0) break;
        unlink_entry(t, s);
        push_tail(t, s);
    }
    return i;
}

int sim_kvtier_insert(sim_kvtier *t, uint64_t key, sim_kvtier_evict_fn cb, void *ctx)
{
    if (t->capacity == 0) {
        if (cb) cb(ctx, key);
        return 0;
    }
    int32_t s = sim_keymap_get(&t->map, key);
    if (s >= 0) {
        unlink_entry(t, s);
        push_tail(t, s);
        return 1;
    }
    /* Allocate before evicting so that running out of memory leaves the
     * tier as it was. */
    if (t->n_free == 0 && t->used_e == t->cap_e && t->map.n < t->capacity) {
        int64_t cap = t->cap_e ? 2 * (int64_t)t->cap_e : 64;
        if (cap > t->capacity) cap = t->capacity;
        entry *ne = realloc(t->e, (size_t)cap * sizeof *ne);
        if (!ne) return SIM_ENOMEM;
        t->e = ne;
        t->cap_e = (int32_t)cap;
    }
    if (sim_keymap_reserve(&t->map, t->map.n + 1) < 0) return SIM_ENOMEM;
    if (t->map.n >= t->capacity) {
        int32_t victim = t->head;
        uint64_t vkey = t->e[victim].key;
        drop(t, victim);
        if (cb) cb(ctx, vkey);
    }
    if (t->free_head >= 0) {
        s = t->free_head;
        t->free_head = t->e[s].next;
        t->n_free--;
    } else {
        s = t->used_e++;
    }
    t->e[s].key = key;
    push_tail(t, s);
    int rc = sim_keymap_put(&t->map, key, s);
    SIM_ASSERT(rc == 0, t->map.n); /* reserved above */
    return 1;
}

int32_t sim_kvtier_take(sim_kvtier *t, const uint64_t *keys, int32_t n)
{
    int32_t i = 0;
    for (; i < n; i++) {
        int32_t s = sim_keymap_get(&t->map, keys[i]);
        if (s < 0) break;
        drop(t, s);
    }
    return i;
}

int sim_kvtier_remove(sim_kvtier *t, uint64_t key)
{
    int32_t s = sim_keymap_get(&t->map, key);
    if (s < 0) return 0;
    drop(t, s);
    return 1;
}

int64_t sim_kvtier_evict(sim_kvtier *t, int64_t n, sim_kvtier_evict_fn cb, void *ctx)
{
    int64_t done = 0;
    while (done < n && t->head >= 0) {
        int32_t victim = t->head;
        uint64_t vkey = t->e[victim].key;
        drop(t, victim);
        if (cb) cb(ctx, vkey);
        done++;
    }
    return done;
}

int64_t sim_kvtier_keys_lru(const sim_kvtier *t, uint64_t *out, int64_t cap)
{
    int64_t k = 0;
    for (int32_t i = t->head; i >= 0 && k < cap; i = t->e[i].next) out[k++] = t->e[i].key;
    return k;
}
