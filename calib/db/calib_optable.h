/* calib_optable — streaming reader of measured per-op latency tables
 * (comma-separated, plain or gzip-compressed: `<table>.csv` or
 * `<table>.csv.gz`), and the enumeration of a tree of them laid out as
 *   <root>/<gpu>/<family>/<backend>-<version>/<table>.csv[.gz]
 * (e.g. ../shared/validation/ops/h100_sxm/gemm/vllm-0.24.0/gemm_perf.csv.gz).
 *
 * The first line is the header: column names, unique and non-empty. Each
 * later line is a row with exactly as many fields; fields may be quoted
 * ("a,b", "" for a quote). Rows are read one at a time (constant memory
 * beyond the longest line); fields are looked up by column name. Numbers
 * are parsed strictly: the whole field, finite, no empty fields; an integer
 * field must be integral and fit. Every error names file:line:column and
 * the column, and what was expected.
 *
 * Ownership: a calib_optable owns its stream and its current row; the
 * strings it returns live until the next calib_optable_next or close.
 * Failure returns: a negative SIM_E* code with err filled, never a crash
 * on bad input; calib_optable_next returns 1 for a row, 0 at end of file. */
#ifndef CALIB_OPTABLE_H
#define CALIB_OPTABLE_H

#include "sim_err.h"

#include <stddef.h>

typedef struct calib_optable calib_optable;

/* Opens path (gzip detected from its content, so .csv and .csv.gz both
 * work) and reads its header. */
int calib_optable_open(const char *path, calib_optable **out, sim_err *err);
void calib_optable_close(calib_optable *t);

const char *calib_optable_path(const calib_optable *t);
size_t calib_optable_ncols(const calib_optable *t);
const char *calib_optable_colname(const calib_optable *t, size_t i);
/* Index of column name, or -1 when the header has no such column. */
int calib_optable_col(const calib_optable *t, const char *name);
int calib_optable_has(const calib_optable *t, const char *name);

/* Reads the next row: 1 = a row, 0 = end of file, < 0 = error (a row with
 * the wrong number of fields, an unterminated quote, a read error). Blank
 * lines are skipped. */
int calib_optable_next(calib_optable *t, sim_err *err);
/* Line number (1-based) of the current row. */
long calib_optable_line(const calib_optable *t);

/* Field of the current row by index or by column name; NULL when there is
 * no such column (calib_optable_str reports that as an error). */
const char *calib_optable_field(const calib_optable *t, size_t col);
const char *calib_optable_get(const calib_optable *t, const char *name);
int calib_optable_str(const calib_optable *t, const char *name, const char **out, sim_err *err);
/* Strict numbers of the current row's named column. */
int calib_optable_double(const calib_optable *t, const char *name, double *out, sim_err *err);
int calib_optable_long(const calib_optable *t, const char *name, long *out, sim_err *err);

/* One table of a tree. */
typedef struct {
    const char *root;       /* as passed */
    const char *gpu;        /* "h100_sxm" */
    const char *family;     /* "gemm" */
    const char *backend;    /* "vllm" (before the first '-') */
    const char *version;    /* "0.24.0" (after it) */
    const char *table;      /* "gemm_perf" (file name less .csv[.gz]) */
    const char *path;       /* full path of the file */
} calib_optable_entry;

/* Called once per table in sorted order (gpu, family, backend-version,
 * file); a non-zero return stops the walk and is returned by it. */
typedef int (*calib_optable_visit)(const calib_optable_entry *e, void *ctx, sim_err *err);

/* Walks root; gpu non-NULL restricts the walk to that GPU folder (an error
 * when it does not exist). Files not ending in .csv or .csv.gz and
 * backend folders without a '-' are skipped. Returns 0, a negative SIM_E*
 * code on error (root unreadable), or the visitor's non-zero return. *n_tables gets the number
 * of tables visited (may be NULL). */
int calib_optable_walk(const char *root, const char *gpu, calib_optable_visit visit, void *ctx,
                       size_t *n_tables, sim_err *err);

#endif
