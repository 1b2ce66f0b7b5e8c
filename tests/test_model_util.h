/* test_model_util — the cost model the simulator builds for a plain pool
 * (TP only, bf16 weights and KV, 8 GPUs a node), so timing tests can
 * recompute iteration latencies by hand. Include after test_util.h. */
#ifndef TEST_MODEL_UTIL_H
#define TEST_MODEL_UTIL_H

#include "model_catalog.h"
#include "model_cost.h"

#include <string.h>

/* The op called name in an iteration's breakdown, or NULL. */
static inline const model_op *test_find_op(const model_op *ops, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    return NULL;
}

/* The op called name in the breakdown of one iteration of batch b under c
 * (ops holds up to cap of them), or NULL. */
static inline const model_op *test_breakdown_op(const model_cost *c, const model_batch *b, model_op *ops, int32_t cap,
                                                const char *name)
{
    int32_t n = 0;
    model_cost_breakdown(c, b, ops, cap, &n, NULL);
    return test_find_op(ops, n < cap ? n : cap, name);
}

/* A catalogue model's spec (zeroed, then filled); a failed check names the
 * model and the reason when the catalogue refuses it. */
static inline model_spec test_model_spec(const char *name)
{
    model_spec m;
    sim_err e = {""};
    memset(&m, 0, sizeof m);
    CHECK_MSG(model_catalog_model(name, &m, &e) == 0, "%s: %s", name, e.msg);
    return m;
}

/* A catalogue GPU's spec into *g: 0, or -1 with a failed check naming the
 * GPU and the catalogue's reason. */
static inline int test_gpu_spec(const char *name, model_gpu *g)
{
    sim_err e = {""};
    int rc = model_catalog_gpu(name, g, &e);
    CHECK_MSG(rc == 0, "%s: %s", name, e.msg);
    return rc == 0 ? 0 : -1;
}

/* The cost model of a catalogue model and GPU with layout l; NULL (with a
 * failed check) when the model, GPU or layout is refused. */
static inline model_cost *test_cost_layout(const char *model, const char *gpu, const model_layout *l)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG_OR(model_catalog_model(model, &m, &err) == 0, return NULL, "%s", err.msg);
    REQUIRE_MSG_OR(model_catalog_gpu(gpu, &g, &err) == 0, return NULL, "%s", err.msg);
    CHECK_MSG(model_cost_create(&m, &g, l, &c, &err) == 0, "%s", err.msg);
    return c;
}

/* NULL (with a failed check) when the model, GPU or layout is refused. */
static inline model_cost *test_cost_model(const char *model, const char *gpu, int tp, double overhead_us)
{
    model_layout l = {.tp = tp, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .overhead_s = overhead_us * 1e-6, .gpus_per_node = 8};
    return test_cost_layout(model, gpu, &l);
}

#endif
