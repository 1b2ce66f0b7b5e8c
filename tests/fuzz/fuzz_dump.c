/* fuzz_dump — libFuzzer target for the .sql perf-db dump reader
 * (calib_db_import_text). The bytes are imported into a fresh in-memory
 * perf-db. A refused dump must say why and leave no row behind; an accepted
 * one must hold only rows calib_point_check accepts, and its export must
 * import again into another perf-db and export to the same text (so what
 * the reader accepts is exactly what the writer can write). */
#include "calib_db.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fuzz_count_point(void *ctx, int64_t gpu_id, const calib_point *p)
{
    char why[256];
    (void)gpu_id;
    if (calib_point_check(p, why, sizeof why) != 0) abort(); /* a bad row got in */
    (*(int64_t *)ctx)++;
    return 0;
}

static int fuzz_count_gpu(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n)
{
    (void)gpu_id, (void)id, (void)n;
    (*(int64_t *)ctx)++;
    return 0;
}

static char *fuzz_export(calib_db *db, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    sim_err err;
    if (!f) abort();
    if (calib_db_export(db, f, &err) != 0) abort();
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    calib_db *db = NULL, *db2 = NULL;
    sim_err err;
    if (calib_db_open(":memory:", CALIB_DB_CREATE, &db, &err) != 0) abort();
    int64_t rows = -1, points = 0, gpus = 0;
    err.msg[0] = '\0';
    int rc = calib_db_import_text(db, (const char *)data, size, "fuzz.sql", &rows, &err);
    if (calib_db_point_foreach(db, 0, -1, fuzz_count_point, &points, &err) != 0) abort();
    if (calib_db_gpu_foreach(db, fuzz_count_gpu, &gpus, &err) != 0) abort();
    if (rc != 0) {
        if (rc != SIM_EINVAL || err.msg[0] == '\0') abort(); /* refused: bad input, with a message */
        if (points != 0 || gpus != 0) abort();               /* and nothing half-imported */
    } else {
        if (rows != points + gpus) abort();
        size_t n1 = 0, n2 = 0;
        char *t1 = fuzz_export(db, &n1);
        if (calib_db_open(":memory:", CALIB_DB_CREATE, &db2, &err) != 0) abort();
        int64_t rows2 = -1;
        if (calib_db_import_text(db2, t1, n1, "export.sql", &rows2, &err) != 0) abort();
        if (rows2 != rows) abort();
        char *t2 = fuzz_export(db2, &n2);
        if (n1 != n2 || memcmp(t1, t2, n1) != 0) abort();
        free(t1);
        free(t2);
        calib_db_close(db2);
    }
    calib_db_close(db);
    return 0;
}
