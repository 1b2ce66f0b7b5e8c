/* sim_slot_table — see sim_slot_table.h. */
#include "sim_slot_table.h"

#include <stdlib.h>
#include <string.h>

int sim_slot_table_init(sim_slot_table *t, int32_t log2, int32_t log2_min, int32_t log2_max, size_t entry_size,
                        const char *what, sim_err *err)
{
    memset(t, 0, sizeof *t);
    if (log2 < log2_min || log2 > log2_max || log2 < 0 || log2 >= (int32_t)(8 * sizeof(size_t)) - 1)
        return sim_err_set(err, SIM_EINVAL, "%s size 2^%d out of range [2^%d, 2^%d]", what, log2, log2_min,
                           log2_max);
    t->slots = calloc((size_t)1 << log2, entry_size);
    if (!t->slots) return sim_err_set(err, SIM_ENOMEM, "out of memory for the %s", what);
    t->mask = ((uint64_t)1 << log2) - 1;
    return SIM_OK;
}

void sim_slot_table_release(sim_slot_table *t)
{
    if (!t) return;
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void sim_slot_table_stats(const sim_slot_table *t, uint64_t *hits, uint64_t *misses)
{
    if (hits) *hits = t ? t->hits : 0;
    if (misses) *misses = t ? t->misses : 0;
}
