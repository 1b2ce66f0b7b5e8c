/* calib_db_migrate — a perf-db file of an older schema version brought to
 * CALIB_SCHEMA_VERSION when it is opened; see calib_db_impl.h.
 *
 * Version 1 → 2: points gain skew_milli (the grouped GEMMs' routing skew,
 * calib_op.h), 0 in every existing row, and the UNIQUE key holds it. SQLite
 * cannot change a table's UNIQUE constraint, so points is rebuilt: the
 * version-1 rows are copied, row ids kept, into a table of the new schema.
 * A file opened for writing is rebuilt in place in one transaction (all or
 * nothing; the schema version in meta moves to 2 with it). A file opened
 * read-only is left untouched: its tables are copied into an in-memory
 * database of the new schema, which replaces the handle (the caller's
 * reads then see the migrated rows; nothing is written back). Failure
 * returns: SIM_EIO with SQLite's message, SIM_EINVAL for a version this
 * module does not know. */
#include "calib_db_impl.h"

#include <stdio.h>

static int calib_mig_err(sqlite3 *h, const char *what, char *msg, sim_err *err)
{
    int rc = sim_err_set(err, SIM_EIO, "perf-db migration from schema version 1: %s: %s", what,
                         msg ? msg : sqlite3_errmsg(h));
    sqlite3_free(msg);
    return rc;
}

/* The version-1 rows of schema `from` ("main" or an attached name) into
 * main's new points table (already created), ids kept. */
static int calib_mig_copy_points(sqlite3 *h, const char *from, sim_err *err)
{
    char sql[768];
    char *msg = NULL;
    snprintf(sql, sizeof sql,
             "INSERT INTO main.points(id, gpu_id, " CALIB_POINT_COLS_V1 ") SELECT id, gpu_id, " CALIB_POINT_COLS_V1
             " FROM %s;",
             from);
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) return calib_mig_err(h, "copying the points", msg, err);
    return 0;
}

/* In place: points renamed aside, the new one created and filled, the old
 * one dropped, the version set; one transaction. */
static int calib_mig_in_place(calib_db *db, sim_err *err)
{
    sqlite3 *h = db->h;
    char *msg = NULL;
    char ver[96];
    int rc;
    snprintf(ver, sizeof ver, "UPDATE meta SET value = '%d' WHERE key = 'schema_version';", CALIB_SCHEMA_VERSION);
    if (sqlite3_exec(h, "BEGIN IMMEDIATE; DROP INDEX IF EXISTS points_lookup; ALTER TABLE points RENAME TO points_v1;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "setting the old points aside", msg, err);
        goto fail;
    }
    if (sqlite3_exec(h, calib_schema_sql, NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "creating the new points", msg, err);
        goto fail;
    }
    if ((rc = calib_mig_copy_points(h, "main.points_v1", err))) goto fail;
    if (sqlite3_exec(h, "DROP TABLE points_v1;", NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(h, ver, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(h, "COMMIT;", NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "finishing", msg, err);
        goto fail;
    }
    return 0;
fail:
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Read-only: a new in-memory perf-db filled from the file, attached. */
static int calib_mig_in_memory(calib_db *db, const char *path, sim_err *err)
{
    sqlite3 *mem = NULL, *h = NULL;
    sqlite3_stmt *st = NULL;
    char *msg = NULL;
    char ver[128];
    int rc;
    if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = calib_mig_err(mem, "opening the in-memory copy", NULL, err);
        sqlite3_close(mem);
        return rc;
    }
    h = mem;
    snprintf(ver, sizeof ver, "INSERT INTO meta(key, value) VALUES('schema_version', '%d');", CALIB_SCHEMA_VERSION);
    if (sqlite3_exec(h, calib_schema_sql, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(h, ver, NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "creating the in-memory copy", msg, err);
        goto fail;
    }
    if (sqlite3_prepare_v2(h, "ATTACH DATABASE ?1 AS v1", -1, &st, NULL) != SQLITE_OK) {
        rc = calib_mig_err(h, "attaching the file", NULL, err);
        goto fail;
    }
    sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) {
        rc = calib_mig_err(h, "attaching the file", NULL, err);
        goto fail;
    }
    if (sqlite3_exec(h,
                     "BEGIN; INSERT INTO main.gpus(id, " CALIB_GPU_COLS ") SELECT id, " CALIB_GPU_COLS
                     " FROM v1.gpus;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "copying the GPUs", msg, err);
        goto fail;
    }
    if ((rc = calib_mig_copy_points(h, "v1.points", err))) goto fail;
    if (sqlite3_exec(h, "COMMIT; DETACH DATABASE v1;", NULL, NULL, &msg) != SQLITE_OK) {
        rc = calib_mig_err(h, "finishing", msg, err);
        goto fail;
    }
    sqlite3_close(db->h);
    db->h = mem;
    return 0;
fail:
    sqlite3_close(mem);
    return rc;
}

int calib_db_migrate(calib_db *db, const char *path, int version, int writable, sim_err *err)
{
    if (version != 1)
        return sim_err_set(err, SIM_EINVAL, "perf-db schema version %d: this servesim migrates only version 1",
                           version);
    return writable ? calib_mig_in_place(db, err) : calib_mig_in_memory(db, path, err);
}
