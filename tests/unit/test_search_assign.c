/* test_search_assign — sim_search_assign splits a wave over MPI ranks by
 * longest processing time first: deterministic (ties by index, then by the
 * lower rank), balanced on hand cases, every candidate owned by one rank
 * in range, round-robin beyond SIM_SEARCH_ASSIGN_MAX. */
#include "sim_search_impl.h"
#include "test_util.h"

static double rank_load(const double *cost, const int32_t *owner, int32_t n, int32_t r)
{
    double t = 0;
    for (int32_t j = 0; j < n; j++)
        if (owner[j] == r) t += cost[j];
    return t;
}

static void case_hand(void)
{
    /* 8,1,1,1,1,1,1,1 over 2 ranks: the 8 alone, the seven 1s on the other
     * (round-robin would give 8+1+1+1 = 11 against 4). */
    const double c1[8] = {8, 1, 1, 1, 1, 1, 1, 1};
    int32_t o1[8], o1b[8];
    sim_search_assign(c1, 8, 2, o1);
    CHECK(o1[0] == 0);
    for (int32_t j = 1; j < 8; j++) CHECK_MSG(o1[j] == 1, "candidate %d on rank %d", (int)j, (int)o1[j]);
    sim_search_assign(c1, 8, 2, o1b);
    CHECK(memcmp(o1, o1b, sizeof o1) == 0);

    /* 5,4,3,3,3 over 2 ranks: LPT gives 5+3 / 4+3+3 (8 against 10). */
    const double c2[5] = {3, 5, 3, 4, 3};
    int32_t o2[5];
    sim_search_assign(c2, 5, 2, o2);
    CHECK(o2[1] == 0 && o2[3] == 1 && o2[0] == 1 && o2[2] == 0 && o2[4] == 1);
    CHECK(rank_load(c2, o2, 5, 0) == 8 && rank_load(c2, o2, 5, 1) == 10);

    /* Equal costs: round-robin order (ties by index, then lower rank). */
    const double c3[6] = {2, 2, 2, 2, 2, 2};
    int32_t o3[6];
    sim_search_assign(c3, 6, 3, o3);
    for (int32_t j = 0; j < 6; j++) CHECK(o3[j] == j % 3);

    /* More ranks than candidates, and one rank: every owner in range. */
    int32_t o4[8];
    sim_search_assign(c1, 8, 32, o4);
    for (int32_t j = 0; j < 8; j++) CHECK(o4[j] == j);
    sim_search_assign(c1, 8, 1, o4);
    for (int32_t j = 0; j < 8; j++) CHECK(o4[j] == 0);

}

/* A 16-candidate wave of simulation sizes as the search sees them: the
 * busier rank within the largest single cost of the ideal half. */
static void case_wave(void)
{
    const double c5[16] = {4096, 4096, 2048, 5024, 5024, 1024, 2048, 4096,
                           4096, 7264, 4096, 4096, 2048, 5024, 5024, 1024};
    int32_t o5[16];
    double total = 0, big = 0;
    for (int32_t j = 0; j < 16; j++) {
        total += c5[j];
        if (c5[j] > big) big = c5[j];
    }
    sim_search_assign(c5, 16, 2, o5);
    double l0 = rank_load(c5, o5, 16, 0), l1 = rank_load(c5, o5, 16, 1);
    CHECK(l0 + l1 == total);
    CHECK_MSG((l0 > l1 ? l0 : l1) <= total / 2 + big, "loads %.0f %.0f", l0, l1);
    CHECK_MSG((l0 > l1 ? l0 - l1 : l1 - l0) <= 1024, "loads %.0f %.0f", l0, l1);

}

/* Beyond SIM_SEARCH_ASSIGN_MAX: round-robin. */
static void case_beyond(void)
{
    enum { BIG = SIM_SEARCH_ASSIGN_MAX + 3 };
    double c6[BIG];
    int32_t o6[BIG];
    for (int32_t j = 0; j < BIG; j++) c6[j] = (double)(BIG - j);
    sim_search_assign(c6, BIG, 2, o6);
    for (int32_t j = 0; j < BIG; j++) CHECK(o6[j] == j % 2);
}

static const test_case cases[] = {
    {"hand", case_hand},
    {"wave", case_wave},
    {"beyond", case_beyond},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_assign", cases);
}
