/* test_pfor — sim_pfor runs fn once for every index, on however many
 * threads are asked for (capped by n and SIM_PFOR_MAX_THREADS), with each
 * index's slot written by exactly one call. */
#include "sim_pfor.h"
#include "test_util.h"

#include <stdatomic.h>

typedef struct {
    atomic_int *hits;
    atomic_long total;
} visit;

static void fn(void *ctx, int64_t i)
{
    visit *v = ctx;
    atomic_fetch_add(&v->hits[i], 1);
    atomic_fetch_add(&v->total, (long)i);
}

static void check_all(int64_t n, int threads, int want_threads)
{
    atomic_int *hits = calloc((size_t)(n > 0 ? n : 1), sizeof *hits);
    REQUIRE(hits);
    visit v = {.hits = hits};
    atomic_init(&v.total, 0);
    int used = sim_pfor(n, threads, fn, &v);
    CHECK_MSG(want_threads < 0 || used == want_threads, "n %lld threads %d: used %d", (long long)n, threads, used);
    int once = 1;
    for (int64_t i = 0; i < n; i++) once &= atomic_load(&hits[i]) == 1;
    CHECK_MSG(once, "n %lld threads %d: an index ran other than once", (long long)n, threads);
    CHECK(atomic_load(&v.total) == (long)(n * (n - 1) / 2));
    free(hits);
}

static void case_every_index_once(void)
{
    check_all(1000, 1, 1);
    check_all(1000, 3, 3);
    check_all(5, 8, 5);       /* no more threads than items */
    check_all(10000, 0, -1);  /* one per CPU */
    check_all(2000, 1000, SIM_PFOR_MAX_THREADS);
}

static void case_empty(void)
{
    CHECK(sim_pfor(0, 4, fn, NULL) == 0);
    CHECK(sim_pfor(-3, 4, fn, NULL) == 0);
}

static const test_case cases[] = {
    {"every_index_once", case_every_index_once},
    {"empty", case_empty},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_pfor", cases);
}
