/* model_op_table — the shared per-op tables (column layout of
 * ../shared/validation/ops/<gpu>/<family>/<backend>-<version>/<table>.csv.gz)
 * seen as model_op queries: one row → the op it measured and its latency,
 * and whole tables → samples grouped by op variant for fitting and scoring.
 * Rows are read through calib_optable (streaming, by column name).
 *
 * Ownership: model_op_groups owns its sample arrays (model_op_groups_free).
 * Failure returns: negative SIM_E* with err naming file:line and column. */
#ifndef MODEL_OP_TABLE_H
#define MODEL_OP_TABLE_H

#include "calib_optable.h"
#include "model_op_fit.h"

#include <stddef.h>

/* The row's op. Returns 1 when the row is an op servesim prices (q and
 * *measured_s filled; *measured_s 0 when the row's latency is not > 0),
 * 0 when it is not modelled (*why says what), < 0 on a malformed row. */
int model_op_from_row(const calib_optable *t, model_op_query *q, double *measured_s, const char **why,
                      sim_err *err);

/* The model a DSA module row names (its `model` column), resolved once per
 * name: its MLA and indexer geometry fills the row's geometry fields (a
 * name servesim does not know leaves them 0: DeepSeek-V3.2's). */
typedef struct {
    char model[MODEL_NAME_MAX];
    int found;
    double f[MODEL_OPF_COUNT]; /* the geometry fields of that model */
} model_op_geometry_cache;

/* model_op_from_row with cache (zeroed by the caller before the first
 * row) keeping the last model's geometry. */
int model_op_from_row_cached(const calib_optable *t, model_op_geometry_cache *cache, model_op_query *q,
                             double *measured_s, const char **why, sim_err *err);

/* Backend of a row: the table folder's when given, else the framework
 * column lowercased ("trtllm", "vllm", "sglang"); NCCL rows are "nccl". */
const char *model_op_row_backend(const calib_optable *t, const model_op_query *q, const char *folder_backend);

typedef struct {
    char variant[64];
    model_op_sample *s;
    size_t n, cap;
} model_op_group;

typedef struct {
    model_op_group *g;
    size_t n, cap;
    size_t skipped_unmodelled, skipped_zero;
} model_op_groups;

/* Reads every row of the table at path into groups by variant. */
int model_op_groups_read(const char *path, model_op_groups *out, sim_err *err);
void model_op_groups_free(model_op_groups *gs);

#endif
