/* calib_dump — the perf-db as a text dump (.sql) and back; see calib_db.h.
 *
 * The dump is plain SQLite SQL that the sqlite3 shell can also load: the
 * schema as CREATE … IF NOT EXISTS, then INSERT OR IGNORE rows. Points name
 * their GPU by identity (a sub-select), never by row id, so a dump merges
 * into any perf-db and an export → import → export round trip is
 * byte-identical. Reals are printed with 17 significant digits (exact).
 * Reading a dump back is calib_dump_read.c's. */
#include "calib_db_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static void calib_put_text(FILE *out, const char *s)
{
    fputc('\'', out);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', out);
        fputc(*s, out);
    }
    fputc('\'', out);
}

static void calib_put_real(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.17g", v);
    else fputs("NULL", out);
}

typedef struct {
    FILE *out;
    calib_db *db;
    sim_err *err;
} calib_dump_ctx;

static int calib_dump_gpu(void *vctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    calib_dump_ctx *x = vctx;
    (void)gpu_id, (void)n_points;
    fputs("INSERT OR IGNORE INTO gpus(" CALIB_GPU_COLS ") VALUES(", x->out);
    calib_put_text(x->out, id->name);
    fprintf(x->out, ", %d, ", id->sms);
    calib_put_text(x->out, id->cc);
    fprintf(x->out, ", %d, %d, ", id->sm_clock_mhz, id->mem_clock_mhz);
    calib_put_text(x->out, id->driver);
    fputs(", ", x->out);
    calib_put_text(x->out, id->cuda);
    fputs(", ", x->out);
    calib_put_text(x->out, id->backend);
    fputs(");\n", x->out);
    return 0;
}

/* Identity sub-select for a gpu row id (exported as text, not as id). */
static int calib_dump_gpu_ref(calib_db *db, int64_t gpu_id, FILE *out, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT " CALIB_GPU_COLS " FROM gpus WHERE id=?", -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "perf-db export: %s", sqlite3_errmsg(db->h));
    sqlite3_bind_int64(st, 1, gpu_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return sim_err_set(err, SIM_EIO, "perf-db export: point refers to missing gpu %lld", (long long)gpu_id);
    }
    static const char *const cols[8] = {"name", "sms", "cc", "sm_clock_mhz", "mem_clock_mhz", "driver", "cuda", "backend"};
    fputs("(SELECT id FROM gpus WHERE ", out);
    for (int i = 0; i < 8; i++) {
        fprintf(out, "%s%s=", i ? " AND " : "", cols[i]);
        if (sqlite3_column_type(st, i) == SQLITE_INTEGER) fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
        else calib_put_text(out, (const char *)sqlite3_column_text(st, i));
    }
    fputc(')', out);
    sqlite3_finalize(st);
    return 0;
}

static int calib_dump_point(void *vctx, int64_t gpu_id, const calib_point *p)
{
    calib_dump_ctx *x = vctx;
    fputs("INSERT OR IGNORE INTO points(gpu_id, " CALIB_POINT_COLS ") VALUES(", x->out);
    int rc = calib_dump_gpu_ref(x->db, gpu_id, x->out, x->err);
    if (rc) return rc;
    fputs(", ", x->out);
    calib_put_text(x->out, calib_op_name(p->op));
    fputs(", ", x->out);
    calib_put_text(x->out, p->dtype);
    fputs(", ", x->out);
    calib_put_text(x->out, p->kernel);
    fprintf(x->out, ", %d", p->kernel_version);
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) fprintf(x->out, ", %lld", (long long)calib_shape_get(&p->shape, f));
    fprintf(x->out, ", %d", p->reps);
    const double reals[7] = {p->median_s, p->p10_s, p->p90_s, p->tflops, p->gbps, p->frac_of_peak, p->check_err};
    for (int i = 0; i < 7; i++) {
        fputs(", ", x->out);
        calib_put_real(x->out, reals[i]);
    }
    fputs(", ", x->out);
    calib_put_text(x->out, p->measured_at);
    fputs(");\n", x->out);
    return 0;
}

int calib_db_export(calib_db *db, FILE *out, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    calib_dump_ctx x = {out, db, err};
    int rc;
    fputs(CALIB_DUMP_HEADER, out);
    fprintf(out, "-- schema_version %d\nBEGIN TRANSACTION;\n", CALIB_SCHEMA_VERSION);
    /* The schema exactly as SQLite stores it, made idempotent. */
    if (sqlite3_prepare_v2(db->h,
                           "SELECT sql FROM sqlite_master WHERE name IN ('meta','gpus','points','points_lookup') "
                           "ORDER BY CASE name WHEN 'meta' THEN 0 WHEN 'gpus' THEN 1 WHEN 'points' THEN 2 ELSE 3 END",
                           -1, &st, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "perf-db export: %s", sqlite3_errmsg(db->h));
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *sql = (const char *)sqlite3_column_text(st, 0);
        if (!sql) continue;
        if (strncmp(sql, "CREATE TABLE ", 13) == 0) fprintf(out, "CREATE TABLE IF NOT EXISTS %s;\n", sql + 13);
        else if (strncmp(sql, "CREATE INDEX ", 13) == 0) fprintf(out, "CREATE INDEX IF NOT EXISTS %s;\n", sql + 13);
    }
    sqlite3_finalize(st);
    fprintf(out, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '%d');\n", CALIB_SCHEMA_VERSION);
    rc = calib_db_gpu_foreach(db, calib_dump_gpu, &x, err);
    if (!rc) rc = calib_db_point_foreach(db, 0, -1, calib_dump_point, &x, err);
    if (rc) return rc;
    fputs("COMMIT;\n", out);
    if (ferror(out)) return sim_err_set(err, SIM_EIO, "perf-db export: write error");
    return 0;
}
