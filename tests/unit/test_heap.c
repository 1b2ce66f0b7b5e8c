/* test_heap — the one heap (sim_heap.h): sift up/down, remove and heapify
 * keep the heap order for 2- and 4-ary heaps of every size up to 70, pop in
 * sorted order with ties broken by LESS, and the intrusive PLACE hook always
 * holds every element's position. */
#include "sim_heap.h"
#include "test_util.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    int32_t key, id;
} ent;

typedef struct {
    int32_t pos[256]; /* by id: position in the heap, -1 = not in it */
} owner;

static inline int ent_less(owner *o, const ent *a, const ent *b)
{
    (void)o;
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}
#define ENT_PLACE(o, e, i) ((o)->pos[(e).id] = (int32_t)(i))
SIM_HEAP_DEFINE(h2, ent, 2, owner *, ent_less, ENT_PLACE)
SIM_HEAP_DEFINE(h4, ent, 4, owner *, ent_less, ENT_PLACE)

static int ordered(const ent *h, size_t n, size_t d)
{
    for (size_t i = 1; i < n; i++)
        if (ent_less(NULL, &h[i], &h[(i - 1) / d])) return 0;
    return 1;
}

static int placed(const owner *o, const ent *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (o->pos[h[i].id] != (int32_t)i) return 0;
    return 1;
}

static void case_heapify_every_size(void)
{
    uint64_t s = 7;
    for (size_t n = 0; n <= 70; n++) {
        ent a[80], b[80];
        owner o;
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            a[i] = (ent){(int32_t)(s >> 59), (int32_t)i}; /* keys 0..31: many ties */
        }
        memcpy(b, a, sizeof a);
        h2_heapify(&o, a, n);
        h4_heapify(&o, b, n);
        CHECK_MSG(ordered(a, n, 2), "2-ary heapify of %zu elements out of order", n);
        CHECK_MSG(ordered(b, n, 4), "4-ary heapify of %zu elements out of order", n);
    }
}

static void case_push_pop_sorted(void)
{
    ent h[200];
    owner o;
    size_t n = 0;
    memset(&o, 0xff, sizeof o);
    uint64_t s = 11;
    for (int32_t id = 0; id < 200; id++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[n] = (ent){(int32_t)(s >> 58), id};
        h4_up(&o, h, n++);
    }
    CHECK(ordered(h, n, 4) && placed(&o, h, n));
    ent prev = {-1, -1};
    int sorted = 1;
    while (n > 0) {
        ent top = h[0];
        o.pos[top.id] = -1;
        h4_remove(&o, h, --n, 0);
        if (!ent_less(NULL, &prev, &top)) sorted = 0;
        prev = top;
        if (!ordered(h, n, 4) || !placed(&o, h, n)) sorted = 0;
    }
    CHECK(sorted);
}

static void case_remove_anywhere(void)
{
    ent h[100];
    owner o;
    size_t n = 0;
    for (int32_t id = 0; id < 100; id++) {
        h[n] = (ent){(id * 37) % 23, id};
        h2_up(&o, h, n++);
    }
    /* Remove by id through the intrusive positions, every third one. */
    for (int32_t id = 0; id < 100; id += 3) {
        size_t at = (size_t)o.pos[id];
        REQUIRE(at < n && h[at].id == id);
        o.pos[id] = -1;
        h2_remove(&o, h, --n, at);
        CHECK(ordered(h, n, 2) && placed(&o, h, n));
    }
    CHECK(n == 100 - 34);
    /* Increase a key in place and sift it down. */
    size_t at = (size_t)o.pos[1];
    h[at].key += 100;
    h2_down(&o, h, n, at);
    CHECK(ordered(h, n, 2) && placed(&o, h, n));
    CHECK(h[o.pos[1]].id == 1);
}

static const test_case cases[] = {
    {"heapify_every_size", case_heapify_every_size},
    {"push_pop_sorted", case_push_pop_sorted},
    {"remove_anywhere", case_remove_anywhere},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_heap", cases);
}
