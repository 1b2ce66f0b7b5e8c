/* calib_db — schema, identities, point writes and walks; see calib_db.h.
 * Lookups live in calib_lookup.c, the text dump in calib_dump.c. */
#include "calib_db_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char calib_schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS gpus(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sms INTEGER NOT NULL,"
    " cc TEXT NOT NULL, sm_clock_mhz INTEGER NOT NULL, mem_clock_mhz INTEGER NOT NULL, driver TEXT NOT NULL,"
    " cuda TEXT NOT NULL, backend TEXT NOT NULL,"
    " UNIQUE(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend));\n"
    "CREATE TABLE IF NOT EXISTS points(id INTEGER PRIMARY KEY, gpu_id INTEGER NOT NULL REFERENCES gpus(id),"
    " op TEXT NOT NULL, dtype TEXT NOT NULL, kernel TEXT NOT NULL, kernel_version INTEGER NOT NULL,"
    " m INTEGER NOT NULL DEFAULT 0, n INTEGER NOT NULL DEFAULT 0, k INTEGER NOT NULL DEFAULT 0,"
    " batch INTEGER NOT NULL DEFAULT 0, ctx INTEGER NOT NULL DEFAULT 0, heads INTEGER NOT NULL DEFAULT 0,"
    " kv_heads INTEGER NOT NULL DEFAULT 0, head_dim INTEGER NOT NULL DEFAULT 0, groups INTEGER NOT NULL DEFAULT 0,"
    " bytes INTEGER NOT NULL DEFAULT 0, ranks INTEGER NOT NULL DEFAULT 0,"
    " skew_milli INTEGER NOT NULL DEFAULT 0, reps INTEGER NOT NULL,"
    " median_s REAL NOT NULL, p10_s REAL NOT NULL, p90_s REAL NOT NULL, tflops REAL, gbps REAL,"
    " frac_of_peak REAL, check_err REAL, measured_at TEXT NOT NULL,"
    " UNIQUE(gpu_id, op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, kv_heads, head_dim,"
    " groups, bytes, ranks, skew_milli));\n"
    "CREATE INDEX IF NOT EXISTS points_lookup ON points(gpu_id, op, dtype);\n";

static int calib_db_sqlerr(calib_db *db, int code, const char *what, sim_err *err)
{
    return sim_err_set(err, code, "perf-db: %s: %s", what, db && db->h ? sqlite3_errmsg(db->h) : "no handle");
}

/* What the file holds, from its tables: a perf-db of this schema version
 * (its rows checked), of version 1 (migrated, calib_db_migrate.c), nothing
 * yet (created when asked), or something else (a results DB, another
 * SQLite file), refused. */
static int calib_db_schema(calib_db *db, const char *path, int create, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, s, has_meta = 0, has_gpus = 0, has_points = 0, has_runs = 0, n_tables = 0, old_version = 0;
    char others[256] = "";
    size_t off = 0;
    if (sqlite3_prepare_v2(db->h, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1, &st, NULL) !=
        SQLITE_OK)
        return sim_err_set(err, SIM_EINVAL, "not an SQLite database (%s)", sqlite3_errmsg(db->h));
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (!t || strncmp(t, "sqlite_", 7) == 0) continue;
        n_tables++;
        if (strcmp(t, "meta") == 0) has_meta = 1;
        else if (strcmp(t, "gpus") == 0) has_gpus = 1;
        else if (strcmp(t, "points") == 0) has_points = 1;
        else {
            if (strcmp(t, "runs") == 0) has_runs = 1;
            if (off < sizeof others)
                off += (size_t)snprintf(others + off, sizeof others - off, "%s%s", off ? ", " : "", t);
        }
    }
    if (s != SQLITE_DONE) rc = sim_err_set(err, SIM_EINVAL, "not an SQLite database (%s)", sqlite3_errmsg(db->h));
    sqlite3_finalize(st);
    st = NULL;
    if (rc) return rc;
    if (n_tables == 0 && !create) return sim_err_set(err, SIM_EINVAL, "an empty SQLite database, not a servesim perf-db");
    if (has_runs && !has_points)
        return sim_err_set(err, SIM_EINVAL, "a servesim results DB (tables %s), not a perf-db (perf-dbs come from "
                           "`servesim calibrate` or `servesim db import`)", others);
    if (n_tables > 0 && !(has_meta && has_gpus && has_points))
        return sim_err_set(err, SIM_EINVAL, "not a servesim perf-db (it has tables %s; a perf-db has meta, gpus and points)",
                           off ? others : "meta/gpus/points only in part");
    if (n_tables > 0) {
        if (sqlite3_prepare_v2(db->h, "SELECT value FROM meta WHERE key='schema_version'", -1, &st, NULL) != SQLITE_OK)
            return sim_err_set(err, SIM_EINVAL, "not a servesim perf-db (meta: %s)", sqlite3_errmsg(db->h));
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(st, 0);
            char want[16];
            snprintf(want, sizeof want, "%d", CALIB_SCHEMA_VERSION);
            if (v && strcmp(v, "1") == 0) old_version = 1; /* migrated below */
            else if (!v || strcmp(v, want) != 0)
                rc = sim_err_set(err, SIM_EINVAL, "perf-db schema version %.32s; this servesim reads versions 1 to %d",
                                 v ? v : "NULL", CALIB_SCHEMA_VERSION);
        } else {
            rc = sim_err_set(err, SIM_EINVAL, "perf-db has no schema_version in meta: not a servesim perf-db");
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc) return rc;
        if (old_version && (rc = calib_db_migrate(db, path, old_version, create, err))) return rc;
    }
    if (create) {
        char *msg = NULL;
        char ver[160];
        snprintf(ver, sizeof ver, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '%d');",
                 CALIB_SCHEMA_VERSION);
        if (sqlite3_exec(db->h, "BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db->h, calib_schema_sql, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db->h, ver, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db->h, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            rc = sim_err_set(err, SIM_EIO, "perf-db: creating the schema: %s", msg ? msg : "?");
            sqlite3_free(msg);
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
    }
    /* The columns (the walk names them all) and every row's values. */
    return n_tables > 0 ? calib_db_check_rows(db, err) : 0;
}

int calib_db_open(const char *path, int flags, calib_db **out, sim_err *err)
{
    int rc;
    struct stat sb;
    *out = NULL;
    if (strcmp(path, ":memory:") != 0) {
        if (stat(path, &sb) != 0) {
            if (errno != ENOENT || !(flags & CALIB_DB_CREATE))
                return sim_err_set(err, errno == ENOENT || errno == EACCES || errno == ENOTDIR ? SIM_EINVAL : SIM_EIO,
                                   "perf-db %s: %s", path, strerror(errno));
        } else if (!S_ISREG(sb.st_mode)) {
            return sim_err_set(err, SIM_EINVAL, "perf-db %s: %s, not a perf-db file", path,
                               S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
        }
    }
    calib_db *db = calloc(1, sizeof *db);
    if (!db) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int oflags = flags & CALIB_DB_CREATE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int orc = sqlite3_open_v2(path, &db->h, oflags, NULL);
    if (orc != SQLITE_OK) {
        /* CANTOPEN is the path's fault (no such folder, not writable): bad input. */
        rc = sim_err_set(err, (orc & 0xff) == SQLITE_CANTOPEN ? SIM_EINVAL : SIM_EIO, "perf-db %s: %s%s", path,
                         db->h ? sqlite3_errmsg(db->h) : "cannot open",
                         (orc & 0xff) == SQLITE_CANTOPEN ? " (does its folder exist, and may it be written?)" : "");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, 5000);
    rc = calib_db_schema(db, path, flags & CALIB_DB_CREATE, err);
    if (rc) {
        sim_err_wrap(err, rc, "perf-db %s", path);
        goto fail;
    }
    *out = db;
    return 0;
fail:
    sqlite3_close(db->h);
    free(db);
    return rc;
}

void calib_db_close(calib_db *db)
{
    if (!db) return;
    calib_db_cache_clear(db);
    sqlite3_close(db->h);
    free(db);
}

void calib_db_bind_gpu(sqlite3_stmt *st, const calib_gpu_id *id)
{
    sqlite3_bind_text(st, 1, id->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, id->sms);
    sqlite3_bind_text(st, 3, id->cc, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, id->sm_clock_mhz);
    sqlite3_bind_int(st, 5, id->mem_clock_mhz);
    sqlite3_bind_text(st, 6, id->driver, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 7, id->cuda, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 8, id->backend, -1, SQLITE_TRANSIENT);
}

int calib_db_gpu_ensure(calib_db *db, const calib_gpu_id *id, int64_t *gpu_id, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db->h, "INSERT OR IGNORE INTO gpus(" CALIB_GPU_COLS ") VALUES(?,?,?,?,?,?,?,?)", -1, &st,
                           NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "insert gpu", err);
    calib_db_bind_gpu(st, id);
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = calib_db_sqlerr(db, SIM_EIO, "insert gpu", err);
        goto fail;
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db->h,
                           "SELECT id FROM gpus WHERE name=? AND sms=? AND cc=? AND sm_clock_mhz=? AND "
                           "mem_clock_mhz=? AND driver=? AND cuda=? AND backend=?",
                           -1, &st, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "find gpu", err);
    calib_db_bind_gpu(st, id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = calib_db_sqlerr(db, SIM_EIO, "find gpu", err);
        goto fail;
    }
    *gpu_id = sqlite3_column_int64(st, 0);
fail:
    sqlite3_finalize(st);
    return rc;
}

int calib_db_gpu_find(calib_db *db, const char *name, const char *backend, int64_t *gpu_id, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT id FROM gpus WHERE instr(lower(name), lower(?1)) > 0 AND (?2 IS NULL OR "
                           "backend = ?2) ORDER BY id LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "find gpu", err);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (backend) sqlite3_bind_text(st, 2, backend, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, 2);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) *gpu_id = sqlite3_column_int64(st, 0);
    else if (s == SQLITE_DONE) rc = sim_err_set(err, SIM_EINVAL, "perf-db has no GPU matching '%s'", name);
    else rc = calib_db_sqlerr(db, SIM_EIO, "find gpu", err);
    sqlite3_finalize(st);
    return rc;
}

static const char calib_key_where[] =
    "gpu_id=? AND op=? AND dtype=? AND kernel=? AND kernel_version=? AND m=? AND n=? AND k=? AND batch=? AND "
    "ctx=? AND heads=? AND kv_heads=? AND head_dim=? AND groups=? AND bytes=? AND ranks=? AND skew_milli=?";

static void calib_bind_key(sqlite3_stmt *st, int64_t gpu_id, const calib_point *p)
{
    sqlite3_bind_int64(st, 1, gpu_id);
    sqlite3_bind_text(st, 2, calib_op_name(p->op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, p->dtype, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, p->kernel, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, p->kernel_version);
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) sqlite3_bind_int64(st, 6 + f, calib_shape_get(&p->shape, f));
}

int calib_db_point_exists(calib_db *db, int64_t gpu_id, const calib_point *p, int *exists, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT 1 FROM points WHERE %s", calib_key_where);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "point lookup", err);
    calib_bind_key(st, gpu_id, p);
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    if (s != SQLITE_ROW && s != SQLITE_DONE) return calib_db_sqlerr(db, SIM_EIO, "point lookup", err);
    *exists = s == SQLITE_ROW;
    return 0;
}

static void calib_bind_real_or_null(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v)) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

void calib_db_bind_point(sqlite3_stmt *st, int64_t gpu_id, const calib_point *p)
{
    const int r = 6 + CALIB_SHAPE_FIELDS; /* reps: after the key */
    calib_bind_key(st, gpu_id, p);
    sqlite3_bind_int(st, r, p->reps);
    sqlite3_bind_double(st, r + 1, p->median_s);
    sqlite3_bind_double(st, r + 2, p->p10_s);
    sqlite3_bind_double(st, r + 3, p->p90_s);
    calib_bind_real_or_null(st, r + 4, p->tflops);
    calib_bind_real_or_null(st, r + 5, p->gbps);
    calib_bind_real_or_null(st, r + 6, p->frac_of_peak);
    calib_bind_real_or_null(st, r + 7, p->check_err);
    sqlite3_bind_text(st, r + 8, p->measured_at, -1, SQLITE_TRANSIENT);
}

int calib_db_point_insert(calib_db *db, int64_t gpu_id, const calib_point *p, sim_err *err)
{
    return calib_db_points_insert(db, gpu_id, p, 1, NULL, err);
}

int calib_db_points_insert(calib_db *db, int64_t gpu_id, const calib_point *pts, size_t n, int64_t *added,
                           sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    int64_t changes = 0;
    char why[256];
    for (size_t i = 0; i < n; i++)
        if (calib_point_check(&pts[i], why, sizeof why) != 0) {
            char shape[160];
            calib_shape_format(&pts[i].shape, shape, sizeof shape);
            return sim_err_set(err, SIM_EINVAL, "perf-db: point %s %s %s %s not stored: %s", calib_op_name(pts[i].op),
                               pts[i].dtype, pts[i].kernel, shape, why);
        }
    if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "begin", err);
    if (sqlite3_prepare_v2(db->h,
                           "INSERT OR IGNORE INTO points(gpu_id, " CALIB_POINT_COLS
                           ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = calib_db_sqlerr(db, SIM_EIO, "insert point", err);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        calib_db_bind_point(st, gpu_id, &pts[i]);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = calib_db_sqlerr(db, SIM_EIO, "insert point", err);
            goto fail;
        }
        changes += sqlite3_changes(db->h);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = calib_db_sqlerr(db, SIM_EIO, "commit", err);
        goto fail;
    }
    calib_db_cache_clear(db);
    if (added) *added = changes;
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static void calib_copy_text(char *dst, size_t len, const unsigned char *src)
{
    snprintf(dst, len, "%s", src ? (const char *)src : "");
}

int calib_db_gpu_foreach(calib_db *db, calib_db_gpu_cb cb, void *ctx, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, s;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT g.id, g.name, g.sms, g.cc, g.sm_clock_mhz, g.mem_clock_mhz, g.driver, g.cuda, "
                           "g.backend, (SELECT count(*) FROM points p WHERE p.gpu_id = g.id) FROM gpus g ORDER BY g.id",
                           -1, &st, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "list gpus", err);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        calib_gpu_id id;
        memset(&id, 0, sizeof id);
        calib_copy_text(id.name, sizeof id.name, sqlite3_column_text(st, 1));
        id.sms = sqlite3_column_int(st, 2);
        calib_copy_text(id.cc, sizeof id.cc, sqlite3_column_text(st, 3));
        id.sm_clock_mhz = sqlite3_column_int(st, 4);
        id.mem_clock_mhz = sqlite3_column_int(st, 5);
        calib_copy_text(id.driver, sizeof id.driver, sqlite3_column_text(st, 6));
        calib_copy_text(id.cuda, sizeof id.cuda, sqlite3_column_text(st, 7));
        calib_copy_text(id.backend, sizeof id.backend, sqlite3_column_text(st, 8));
        rc = cb(ctx, sqlite3_column_int64(st, 0), &id, sqlite3_column_int64(st, 9));
        if (rc) goto fail;
    }
    if (s != SQLITE_DONE) rc = calib_db_sqlerr(db, SIM_EIO, "list gpus", err);
fail:
    sqlite3_finalize(st);
    return rc;
}

static double calib_col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

void calib_db_row_to_point(sqlite3_stmt *st, calib_point *p)
{
    memset(p, 0, sizeof *p);
    int op = calib_op_from_name((const char *)sqlite3_column_text(st, 1));
    p->op = op < 0 ? CALIB_OP_COUNT : (calib_op)op;
    calib_copy_text(p->dtype, sizeof p->dtype, sqlite3_column_text(st, 2));
    calib_copy_text(p->kernel, sizeof p->kernel, sqlite3_column_text(st, 3));
    p->kernel_version = sqlite3_column_int(st, 4);
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) calib_shape_set(&p->shape, f, sqlite3_column_int64(st, 5 + f));
    const int r = 5 + CALIB_SHAPE_FIELDS; /* reps: after the shape */
    p->reps = sqlite3_column_int(st, r);
    p->median_s = sqlite3_column_double(st, r + 1);
    p->p10_s = sqlite3_column_double(st, r + 2);
    p->p90_s = sqlite3_column_double(st, r + 3);
    p->tflops = calib_col_real(st, r + 4);
    p->gbps = calib_col_real(st, r + 5);
    p->frac_of_peak = calib_col_real(st, r + 6);
    p->check_err = calib_col_real(st, r + 7);
    calib_copy_text(p->measured_at, sizeof p->measured_at, sqlite3_column_text(st, r + 8));
}

int calib_db_point_foreach(calib_db *db, int64_t gpu_id, int op, calib_db_point_cb cb, void *ctx, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, s;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT gpu_id, " CALIB_POINT_COLS " FROM points WHERE (?1 = 0 OR gpu_id = ?1) AND "
                           "(?2 IS NULL OR op = ?2) ORDER BY gpu_id, op, dtype, kernel, kernel_version, "
                           CALIB_SHAPE_COLS,
                           -1, &st, NULL) != SQLITE_OK)
        return calib_db_sqlerr(db, SIM_EIO, "list points", err);
    sqlite3_bind_int64(st, 1, gpu_id);
    if (op >= 0) sqlite3_bind_text(st, 2, calib_op_name((calib_op)op), -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, 2);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        calib_point p;
        calib_db_row_to_point(st, &p);
        rc = cb(ctx, sqlite3_column_int64(st, 0), &p);
        if (rc) goto fail;
    }
    if (s != SQLITE_DONE) rc = calib_db_sqlerr(db, SIM_EIO, "list points", err);
fail:
    sqlite3_finalize(st);
    return rc;
}
