/* calib_default — where a GPU's calibration data is found when nobody names
 * a perf-db, and opening either form of one. Measured GPUs ship as text
 * dumps under calib/data/ (or $SERVESIM_CALIB_DATA) named <gpu>-<date>.sql
 * after the catalogue GPU; the newest name wins so a re-calibration
 * supersedes the old dump without deleting it. `servesim run`, `predict` and
 * `fidelity` all pick their data here, so one GPU gets the same numbers
 * from each. Dumps may be gzip-compressed (.sql.gz). */
#include "calib_db.h"

#include <dirent.h>
#include <zlib.h>
#include <stdlib.h>
#include <string.h>

int calib_db_default_path(const char *gpu, char *out, size_t len)
{
    const char *dir = getenv("SERVESIM_CALIB_DATA");
#ifdef SERVESIM_CALIB_DATA_DIR
    if (!dir) dir = SERVESIM_CALIB_DATA_DIR;
#endif
    if (!dir || !gpu || !*gpu) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    char best[256] = "";
    size_t gl = strlen(gpu);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > gl + 4 && n < sizeof best && strncmp(e->d_name, gpu, gl) == 0 && e->d_name[gl] == '-' &&
            strcmp(e->d_name + n - 4, ".sql") == 0 && strcmp(e->d_name, best) > 0)
            memcpy(best, e->d_name, n + 1);
    }
    closedir(d);
    if (!best[0]) return 0;
    int w = snprintf(out, len, "%s/%s", dir, best);
    return w > 0 && (size_t)w < len;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

int calib_db_import_any(calib_db *db, const char *path, int64_t *rows, sim_err *err)
{
    if (!ends_with(path, ".gz")) return calib_db_import(db, path, rows, err);
    gzFile g = gzopen(path, "rb");
    if (!g) return sim_err_set(err, SIM_EIO, "%s: cannot open", path);
    size_t len = 0, cap = 1 << 20;
    char *text = malloc(cap);
    int rc = text ? SIM_OK : sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    while (rc == SIM_OK) {
        if (cap - len < (1 << 16)) {
            if (cap >= (size_t)CALIB_DUMP_MAX_BYTES) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: dump larger than %lld bytes uncompressed", path,
                                 (long long)CALIB_DUMP_MAX_BYTES);
                break;
            }
            char *p = realloc(text, cap * 2);
            if (!p) {
                rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
                break;
            }
            text = p, cap *= 2;
        }
        int got = gzread(g, text + len, (unsigned)(cap - len));
        if (got < 0) {
            int zerr = 0;
            rc = sim_err_set(err, SIM_EIO, "%s: %s", path, gzerror(g, &zerr));
        } else if (got == 0) {
            int zerr = 0;
            const char *msg = gzerror(g, &zerr);
            if (zerr != Z_OK) rc = sim_err_set(err, SIM_EIO, "%s: %s", path, msg); /* truncated stream */
            break;
        }
        len += (size_t)(got > 0 ? got : 0);
    }
    gzclose(g);
    if (rc == SIM_OK) rc = calib_db_import_text(db, text, len, path, rows, err);
    free(text);
    return rc;
}

int calib_db_open_any(const char *path, calib_db **out, sim_err *err)
{
    int dump = ends_with(path, ".sql") || ends_with(path, ".sql.gz");
    *out = NULL;
    int rc = calib_db_open(dump ? ":memory:" : path, dump ? CALIB_DB_CREATE : CALIB_DB_READONLY, out, err);
    if (rc == 0 && dump) {
        int64_t rows = 0;
        if ((rc = calib_db_import_any(*out, path, &rows, err))) {
            calib_db_close(*out);
            *out = NULL;
        }
    }
    return rc;
}
