/* sim_prefix — see sim_prefix.h. */
#include "sim_prefix.h"

#include "sim_prefix_keys.h"
#include "sim_heap.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    sim_time last;     /* last access, ns */
    uint64_t tick;     /* access counter at last access: orders equal times */
    int64_t hits;
    int32_t parent;    /* node index, -1 = root; next free node when free */
    int32_t children;
    int32_t ref;
    int32_t heap;      /* position in the evictable heap, -1 = not in it */
} node;

struct sim_prefix {
    sim_prefix_policy policy;
    int64_t capacity;
    node *nodes;
    int32_t n_nodes_cap;   /* nodes allocated */
    int32_t n_used;        /* nodes handed out at least once (high-water mark) */
    int32_t free_head;     /* free list through node.parent, -1 = empty */
    int32_t n_free;        /* nodes on the free list */
    int64_t total, referenced, evicted;
    uint64_t tick;
    sim_keymap map;
    int32_t *heap;         /* node indices; capacity n_nodes_cap */
    int32_t heap_n;
    sim_prefix_evict_fn hook;
    void *hook_ctx;
};

int sim_prefix_policy_parse(const char *s, sim_prefix_policy *out)
{
    if (s && strcmp(s, "lru") == 0) *out = SIM_PREFIX_LRU;
    else if (s && strcmp(s, "lfu") == 0) *out = SIM_PREFIX_LFU;
    else return SIM_EINVAL;
    return 0;
}

const char *sim_prefix_policy_name(sim_prefix_policy p)
{
    return p == SIM_PREFIX_LFU ? "lfu" : "lru";
}

/* ---- evictable heap ---------------------------------------------------- */

/* 1 if a should be evicted before b. */
static int before(const sim_prefix *idx, const node *a, const node *b)
{
    if (idx->policy == SIM_PREFIX_LFU && a->hits != b->hits) return a->hits < b->hits;
    if (a->last != b->last) return a->last < b->last;
    return a->tick < b->tick;
}

static inline int heap_before(const sim_prefix *idx, const int32_t *a, const int32_t *b)
{
    return before(idx, &idx->nodes[*a], &idx->nodes[*b]);
}

/* Intrusive: a node keeps its heap position. */
#define HEAP_PLACE(idx, ni, i) ((idx)->nodes[(ni)].heap = (int32_t)(i))
SIM_HEAP_DEFINE(evict_heap, int32_t, 2, sim_prefix *, heap_before, HEAP_PLACE)

static void heap_push(sim_prefix *idx, int32_t ni)
{
    SIM_ASSERT(idx->nodes[ni].heap < 0, idx->nodes[ni].last);
    idx->heap[idx->heap_n++] = ni;
    evict_heap_up(idx, idx->heap, (size_t)idx->heap_n - 1);
}

static void heap_remove(sim_prefix *idx, int32_t ni)
{
    int32_t pos = idx->nodes[ni].heap;
    SIM_ASSERT(pos >= 0 && pos < idx->heap_n, idx->nodes[ni].last);
    idx->nodes[ni].heap = -1;
    idx->heap_n--;
    evict_heap_remove(idx, idx->heap, (size_t)idx->heap_n, (size_t)pos);
}

/* Puts ni in or out of the heap to match "unreferenced leaf". */
static void heap_sync(sim_prefix *idx, int32_t ni)
{
    node *nd = &idx->nodes[ni];
    int want = nd->ref == 0 && nd->children == 0;
    if (want && nd->heap < 0) heap_push(idx, ni);
    else if (!want && nd->heap >= 0) heap_remove(idx, ni);
}

/* ---- nodes --------------------------------------------------------------- */

/* Marks ni used at now; its heap position moves only later (a later time
 * or more hits), hence sift down. */
static void touch(sim_prefix *idx, int32_t ni, sim_time now, int hit)
{
    node *nd = &idx->nodes[ni];
    if (now > nd->last) nd->last = now;
    nd->tick = ++idx->tick;
    if (hit) nd->hits++;
    if (nd->heap >= 0) evict_heap_down(idx, idx->heap, (size_t)idx->heap_n, (size_t)nd->heap);
}

/* Makes room for `more` further nodes without reallocating later, so an
 * insert either fails up front or not at all. */
static int reserve_nodes(sim_prefix *idx, int64_t more)
{
    int64_t free_n = (int64_t)idx->n_nodes_cap - idx->n_used + idx->n_free;
    if (free_n < more) {
        int64_t want = (int64_t)idx->n_nodes_cap + (more - free_n);
        int64_t cap = idx->n_nodes_cap ? idx->n_nodes_cap : 64;
        while (cap < want) cap *= 2;
        if (cap > INT32_MAX) return SIM_ENOMEM;
        node *nn = realloc(idx->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return SIM_ENOMEM;
        idx->nodes = nn;
        int32_t *nh = realloc(idx->heap, (size_t)cap * sizeof *nh);
        if (!nh) return SIM_ENOMEM;
        idx->heap = nh;
        idx->n_nodes_cap = (int32_t)cap;
    }
    return sim_keymap_reserve(&idx->map, idx->total + more);
}

static int32_t node_alloc(sim_prefix *idx)
{
    if (idx->free_head >= 0) {
        int32_t ni = idx->free_head;
        idx->free_head = idx->nodes[ni].parent;
        idx->n_free--;
        return ni;
    }
    SIM_ASSERT(idx->n_used < idx->n_nodes_cap, idx->n_used);
    return idx->n_used++;
}

/* Node for keys[i] if it is present and chained under `parent` (a 64-bit
 * collision could put an unrelated block there; it then ends the match). */
static int32_t find_child(const sim_prefix *idx, uint64_t key, int32_t parent)
{
    int32_t ni = sim_keymap_get(&idx->map, key);
    if (ni < 0 || idx->nodes[ni].parent != parent) return -1;
    return ni;
}

/* Marks the first m keys (known present) used at now, without a hit. */
static void touch_run(sim_prefix *idx, const uint64_t *keys, int32_t m, sim_time now)
{
    int32_t parent = -1;
    for (int32_t i = 0; i < m; i++) {
        parent = find_child(idx, keys[i], parent);
        touch(idx, parent, now, 0);
    }
}

static int32_t walk(const sim_prefix *idx, const uint64_t *keys, int32_t n, int32_t *last)
{
    int32_t parent = -1, i = 0;
    for (; i < n; i++) {
        int32_t ni = find_child(idx, keys[i], parent);
        if (ni < 0) break;
        parent = ni;
    }
    if (last) *last = parent;
    return i;
}

static void evict_one(sim_prefix *idx, sim_prefix_evict_fn cb, void *ctx)
{
    int32_t ni = idx->heap[0];
    node *nd = &idx->nodes[ni];
    SIM_ASSERT(nd->ref == 0 && nd->children == 0, nd->last);
    heap_remove(idx, ni);
    uint64_t key = nd->key;
    int32_t parent = nd->parent;
    sim_keymap_del(&idx->map, key);
    nd->parent = idx->free_head;
    idx->free_head = ni;
    idx->n_free++;
    idx->total--;
    idx->evicted++;
    if (parent >= 0) {
        idx->nodes[parent].children--;
        SIM_ASSERT(idx->nodes[parent].children >= 0, idx->nodes[parent].last);
        heap_sync(idx, parent);
    }
    if (cb) cb(ctx, key);
}

/* ---- API ------------------------------------------------------------------ */

int sim_prefix_create(int64_t capacity_blocks, sim_prefix_policy policy, sim_prefix **out,
                      sim_err *err)
{
    *out = NULL;
    if (capacity_blocks < 0 || capacity_blocks >= INT32_MAX)
        return sim_err_set(err, SIM_EINVAL, "prefix cache capacity %lld blocks out of range",
                           (long long)capacity_blocks);
    if (policy != SIM_PREFIX_LRU && policy != SIM_PREFIX_LFU)
        return sim_err_set(err, SIM_EINVAL, "unknown prefix cache policy %d", (int)policy);
    sim_prefix *idx = calloc(1, sizeof *idx);
    if (!idx) return sim_err_set(err, SIM_ENOMEM, "out of memory for the prefix index");
    idx->policy = policy;
    idx->capacity = capacity_blocks;
    idx->free_head = -1;
    if (sim_keymap_init(&idx->map, 64) < 0) goto fail;
    if (reserve_nodes(idx, 64) < 0) goto fail;
    *out = idx;
    return 0;
fail:
    sim_prefix_destroy(idx);
    return sim_err_set(err, SIM_ENOMEM, "out of memory for the prefix index");
}

void sim_prefix_destroy(sim_prefix *idx)
{
    if (!idx) return;
    sim_keymap_fini(&idx->map);
    free(idx->nodes);
    free(idx->heap);
    free(idx);
}

void sim_prefix_set_evict_hook(sim_prefix *idx, sim_prefix_evict_fn fn, void *ctx)
{
    idx->hook = fn;
    idx->hook_ctx = ctx;
}

int32_t sim_prefix_peek(const sim_prefix *idx, const uint64_t *keys, int32_t n)
{
    return walk(idx, keys, n, NULL);
}

int32_t sim_prefix_match(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now)
{
    int32_t parent = -1, i = 0;
    for (; i < n; i++) {
        int32_t ni = find_child(idx, keys[i], parent);
        if (ni < 0) break;
        touch(idx, ni, now, 1);
        parent = ni;
    }
    return i;
}

/* Walks keys[0, to) from the root (a block is named by its whole chain)
 * and adds delta to the refcounts of keys[from, to). */
static void ref_range(sim_prefix *idx, const uint64_t *keys, int32_t from, int32_t to,
                      int delta, sim_time now)
{
    int32_t parent = -1;
    for (int32_t i = 0; i < to; i++) {
        int32_t ni = find_child(idx, keys[i], parent);
        SIM_ASSERT(ni >= 0, now); /* acquiring or releasing a block that is not cached */
        parent = ni;
        if (i < from) continue;
        node *nd = &idx->nodes[ni];
        if (delta > 0) {
            if (nd->ref++ == 0) idx->referenced++;
        } else {
            SIM_ASSERT(nd->ref > 0, now); /* refcount would go negative */
            if (--nd->ref == 0) idx->referenced--;
        }
        touch(idx, ni, now, 0);
        heap_sync(idx, ni);
    }
}

void sim_prefix_acquire(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now)
{
    ref_range(idx, keys, 0, n, +1, now);
}

void sim_prefix_release(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now)
{
    ref_range(idx, keys, 0, n, -1, now);
}

void sim_prefix_acquire_range(sim_prefix *idx, const uint64_t *keys, int32_t from, int32_t to,
                              sim_time now)
{
    ref_range(idx, keys, from, to, +1, now);
}

void sim_prefix_release_range(sim_prefix *idx, const uint64_t *keys, int32_t from, int32_t to,
                              sim_time now)
{
    ref_range(idx, keys, from, to, -1, now);
}

int32_t sim_prefix_insert(sim_prefix *idx, const uint64_t *keys, int32_t n, sim_time now,
                          int32_t *created)
{
    if (created) *created = 0;
    int32_t last = -1;
    int32_t m = walk(idx, keys, n, &last);
    int64_t want = n - m;
    if (want > 0 && reserve_nodes(idx, want) < 0) return SIM_ENOMEM;
    touch_run(idx, keys, m, now);
    if (want <= 0) return m;
    /* Pin the deepest present block while evicting: it may be an
     * unreferenced leaf, and the chain is about to grow under it. Its
     * ancestors are safe because it is their descendant. */
    if (last >= 0) {
        idx->nodes[last].ref++;
        heap_sync(idx, last);
    }
    int64_t room = want;
    if (idx->capacity > 0) {
        int64_t free_blocks = idx->capacity - idx->total;
        if (free_blocks < want) {
            int64_t need = want - free_blocks;
            while (need > 0 && idx->heap_n > 0) {
                evict_one(idx, idx->hook, idx->hook_ctx);
                need--;
            }
            free_blocks = idx->capacity - idx->total;
        }
        if (room > free_blocks) room = free_blocks < 0 ? 0 : free_blocks;
    }
    int32_t parent = last;
    for (int64_t k = 0; k < room; k++) {
        int32_t ni = node_alloc(idx);
        node *nd = &idx->nodes[ni];
        nd->key = keys[m + k];
        nd->last = now;
        nd->tick = ++idx->tick;
        nd->hits = 1;
        nd->parent = parent;
        nd->children = 0;
        nd->ref = 1;
        nd->heap = -1;
        /* Cannot fail: reserve_nodes sized the map for these. */
        int rc = sim_keymap_put(&idx->map, nd->key, ni);
        SIM_ASSERT(rc == 0, now);
        if (parent >= 0) {
            idx->nodes[parent].children++;
            heap_sync(idx, parent);
        }
        idx->total++;
        idx->referenced++;
        parent = ni;
    }
    if (last >= 0) {
        idx->nodes[last].ref--;
        heap_sync(idx, last);
    }
    if (created) *created = (int32_t)room;
    return m + (int32_t)room;
}

int64_t sim_prefix_evict(sim_prefix *idx, int64_t n, sim_prefix_evict_fn cb, void *ctx)
{
    int64_t done = 0;
    while (done < n && idx->heap_n > 0) {
        evict_one(idx, cb, ctx);
        done++;
    }
    return done;
}

void sim_prefix_stats_get(const sim_prefix *idx, sim_prefix_stats *out)
{
    out->total = idx->total;
    out->referenced = idx->referenced;
    out->evictable = idx->heap_n;
    out->capacity = idx->capacity;
    out->evicted = idx->evicted;
}

int32_t sim_prefix_refcount(const sim_prefix *idx, uint64_t key)
{
    int32_t ni = sim_keymap_get(&idx->map, key);
    return ni < 0 ? -1 : idx->nodes[ni].ref;
}

int sim_prefix_check(const sim_prefix *idx, sim_err *err)
{
    int rc = 0;
    int32_t *kids = calloc((size_t)idx->n_used + 1, sizeof *kids);
    char *is_free = calloc((size_t)idx->n_used + 1, 1);
    if (!kids || !is_free) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory checking the prefix index");
        goto fail;
    }
    for (int32_t f = idx->free_head; f >= 0; f = idx->nodes[f].parent) is_free[f] = 1;
    int64_t live = 0, refd = 0, leaves = 0;
    for (int32_t i = 0; i < idx->n_used; i++) {
        if (is_free[i]) continue;
        const node *nd = &idx->nodes[i];
        live++;
        if (nd->ref < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "node %d: negative refcount %d", i, nd->ref);
            goto fail;
        }
        if (nd->ref > 0) refd++;
        if (sim_keymap_get(&idx->map, nd->key) != i) {
            rc = sim_err_set(err, SIM_EINVAL, "node %d: key not mapped to it", i);
            goto fail;
        }
        if (nd->parent >= 0) {
            if (nd->parent >= idx->n_used || is_free[nd->parent]) {
                rc = sim_err_set(err, SIM_EINVAL, "node %d: parent %d not held", i, nd->parent);
                goto fail;
            }
            kids[nd->parent]++;
        }
    }
    for (int32_t i = 0; i < idx->n_used; i++) {
        if (is_free[i]) continue;
        const node *nd = &idx->nodes[i];
        if (kids[i] != nd->children) {
            rc = sim_err_set(err, SIM_EINVAL, "node %d: %d children counted, %d recorded", i,
                             kids[i], nd->children);
            goto fail;
        }
        int leaf = nd->ref == 0 && nd->children == 0;
        if (leaf) leaves++;
        if (leaf != (nd->heap >= 0)) {
            rc = sim_err_set(err, SIM_EINVAL, "node %d: evictable %d but heap slot %d", i, leaf,
                             nd->heap);
            goto fail;
        }
        if (nd->heap >= 0) {
            if (idx->heap[nd->heap] != i) {
                rc = sim_err_set(err, SIM_EINVAL, "node %d: heap slot mismatch", i);
                goto fail;
            }
            if (nd->heap > 0 && before(idx, nd, &idx->nodes[idx->heap[(nd->heap - 1) / 2]])) {
                rc = sim_err_set(err, SIM_EINVAL, "node %d: heap order violated", i);
                goto fail;
            }
        }
    }
    if (live != idx->total || refd != idx->referenced || leaves != idx->heap_n ||
        idx->map.n != idx->total) {
        rc = sim_err_set(err, SIM_EINVAL,
                         "counts: %lld live vs total %lld, %lld referenced vs %lld, %lld leaves "
                         "vs heap %d, map %lld",
                         (long long)live, (long long)idx->total, (long long)refd,
                         (long long)idx->referenced, (long long)leaves, idx->heap_n,
                         (long long)idx->map.n);
        goto fail;
    }
    if (idx->capacity > 0 && idx->total > idx->capacity) {
        rc = sim_err_set(err, SIM_EINVAL, "%lld blocks held over capacity %lld",
                         (long long)idx->total, (long long)idx->capacity);
        goto fail;
    }
fail:
    free(kids);
    free(is_free);
    return rc;
}
