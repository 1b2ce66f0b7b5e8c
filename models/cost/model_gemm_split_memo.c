/* model_gemm_split_memo — direct-mapped memo of split-K picks; see the
 * header. */
#include "model_gemm_split_memo.h"

#include "sim_slot_table.h"

#include <stdlib.h>
#include <string.h>

#define SPLIT_ARGS 8 /* sms, tiles, k, tc_full, bytes, bw, partial, smooth */

typedef struct {
    uint64_t key[SPLIT_ARGS]; /* the arguments' bits */
    int used;
    model_gemm_split r;
} split_ent;

struct model_gemm_split_memo {
    sim_slot_table t; /* of split_ent */
};

int model_gemm_split_memo_create(int32_t slots_log2, model_gemm_split_memo **out, sim_err *err)
{
    *out = NULL;
    model_gemm_split_memo *m = calloc(1, sizeof *m);
    if (!m) return sim_err_set(err, SIM_ENOMEM, "out of memory for the split-K memo");
    int rc = sim_slot_table_init(&m->t, slots_log2, 4, 20, sizeof(split_ent), "split-K memo", err);
    if (rc < 0) {
        free(m);
        return rc;
    }
    *out = m;
    return SIM_OK;
}

void model_gemm_split_memo_free(model_gemm_split_memo *m)
{
    if (!m) return;
    sim_slot_table_release(&m->t);
    free(m);
}

void model_gemm_split_memo_stats(const model_gemm_split_memo *m, uint64_t *hits, uint64_t *misses)
{
    sim_slot_table_stats(m ? &m->t : NULL, hits, misses);
}

model_gemm_split model_gemm_split_pick_memo(model_gemm_split_memo *m, double sms, double tiles, double k,
                                            double tc_full, double bytes, double bw, double partial, int smooth)
{
    if (!m) return model_gemm_split_pick(sms, tiles, k, tc_full, bytes, bw, partial, smooth);
    const double args[SPLIT_ARGS - 1] = {sms, tiles, k, tc_full, bytes, bw, partial};
    uint64_t key[SPLIT_ARGS], h = 0;
    memcpy(key, args, sizeof args);
    key[SPLIT_ARGS - 1] = (uint64_t)(smooth != 0);
    for (int i = 0; i < SPLIT_ARGS; i++) {
        h = (h ^ key[i]) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    h ^= h >> 33; /* the high bits down to the slot's */
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    split_ent *e = SIM_SLOT_AT(&m->t, split_ent, h);
    if (e->used && !memcmp(e->key, key, sizeof key)) {
        m->t.hits++;
        return e->r;
    }
    m->t.misses++;
    e->r = model_gemm_split_pick(sms, tiles, k, tc_full, bytes, bw, partial, smooth);
    memcpy(e->key, key, sizeof key);
    e->used = 1;
    return e->r;
}
