/* test_slot_table — sim_slot_table: a size in range gives 2^n zeroed
 * slots whose index wraps by the mask; a size out of range or an entry
 * array that cannot be allocated (an injected failure) fails with the owner's name in the
 * message and leaves the table empty; the counters read back through
 * stats (zeros for no table); release is safe twice. */
#include "sim_slot_table.h"
#include "test_alloc_fail.h"
#include "test_util.h"

#include <string.h>

typedef struct {
    uint64_t key;
    double value;
} ent;

static void case_slots_zeroed_and_masked(void)
{
    sim_slot_table t;
    sim_err err = {{0}};
    REQUIRE(sim_slot_table_init(&t, 5, 4, 20, sizeof(ent), "test memo", &err) == SIM_OK);
    CHECK(t.mask == 31 && t.hits == 0 && t.misses == 0);
    int zero = 1;
    for (uint64_t h = 0; h < 32; h++) zero &= SIM_SLOT_AT(&t, ent, h)->key == 0 && SIM_SLOT_AT(&t, ent, h)->value == 0;
    CHECK(zero);
    /* The hash's high bits are masked off: 32 + 7 is slot 7. */
    SIM_SLOT_AT(&t, ent, 7)->key = 99;
    CHECK(SIM_SLOT_AT(&t, ent, 32 + 7)->key == 99);
    CHECK(SIM_SLOT_AT(&t, ent, UINT64_MAX) == SIM_SLOT_AT(&t, ent, 31));
    CHECK((char *)SIM_SLOT_AT(&t, ent, 1) - (char *)SIM_SLOT_AT(&t, ent, 0) == (ptrdiff_t)sizeof(ent));
    t.hits += 3, t.misses += 2;
    uint64_t hits = 0, misses = 0;
    sim_slot_table_stats(&t, &hits, &misses);
    CHECK(hits == 3 && misses == 2);
    sim_slot_table_stats(&t, NULL, &misses); /* either pointer may be NULL */
    CHECK(misses == 2);
    sim_slot_table_release(&t);
    CHECK(t.slots == NULL && t.mask == 0);
    sim_slot_table_release(&t);
}

static void case_bounds(void)
{
    sim_slot_table t;
    sim_err err = {{0}};
    CHECK(sim_slot_table_init(&t, 4, 4, 6, sizeof(ent), "test memo", &err) == SIM_OK);
    sim_slot_table_release(&t);
    CHECK(sim_slot_table_init(&t, 6, 4, 6, sizeof(ent), "test memo", &err) == SIM_OK);
    CHECK(t.mask == 63);
    sim_slot_table_release(&t);
    CHECK(sim_slot_table_init(&t, 3, 4, 6, sizeof(ent), "test memo", &err) == SIM_EINVAL);
    CHECK(t.slots == NULL);
    CHECK_CONTAINS(err.msg, "test memo size 2^3 out of range [2^4, 2^6]");
    memset(&err, 0, sizeof err);
    CHECK(sim_slot_table_init(&t, 7, 4, 6, sizeof(ent), "test memo", &err) == SIM_EINVAL);
    CHECK(sim_slot_table_init(&t, 70, 0, 80, sizeof(ent), "test memo", &err) == SIM_EINVAL);
    CHECK(sim_slot_table_init(&t, -1, -4, 6, sizeof(ent), "test memo", &err) == SIM_EINVAL);
    CHECK(sim_slot_table_init(&t, 3, 4, 6, sizeof(ent), "test memo", NULL) == SIM_EINVAL); /* err may be NULL */
}

/* An entry array that cannot be allocated: SIM_ENOMEM, the owner's name
 * in the message, the table empty; the next init succeeds. */
static void case_out_of_memory(void)
{
    sim_slot_table t;
    sim_err err = {{0}};
    test_alloc_fail_after(0);
    CHECK(sim_slot_table_init(&t, 4, 4, 20, sizeof(ent), "test memo", &err) == SIM_ENOMEM);
    test_alloc_fail_off();
    CHECK(t.slots == NULL && t.mask == 0);
    CHECK_CONTAINS(err.msg, "out of memory for the test memo");
    uint64_t hits = 1, misses = 1;
    sim_slot_table_stats(NULL, &hits, &misses);
    CHECK(hits == 0 && misses == 0);
    sim_slot_table_release(&t);
    sim_slot_table_release(NULL);
    REQUIRE(sim_slot_table_init(&t, 4, 4, 20, sizeof(ent), "test memo", &err) == SIM_OK);
    sim_slot_table_release(&t);
}

static const test_case cases[] = {
    {"slots_zeroed_and_masked", case_slots_zeroed_and_masked},
    {"bounds", case_bounds},
    {"out_of_memory", case_out_of_memory},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_slot_table", cases);
}
