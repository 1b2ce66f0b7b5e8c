/* calib_default — where a GPU's calibration data is found when nobody names
 * a perf-db, and opening either form of one. Measured GPUs ship as text
 * dumps under calib/data/ (or $SERVESIM_CALIB_DATA) named <gpu>-<date>.sql
 * after the catalogue GPU; the newest name wins so a re-calibration
 * supersedes the old dump without deleting it. `servesim run`, `predict` and
 * `fidelity` all pick their data here, so one GPU gets the same numbers
 * from each. */
#include "calib_db.h"

#include <dirent.h>
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

int calib_db_open_any(const char *path, calib_db **out, sim_err *err)
{
    size_t n = strlen(path);
    int dump = n > 4 && strcmp(path + n - 4, ".sql") == 0;
    *out = NULL;
    int rc = calib_db_open(dump ? ":memory:" : path, dump ? CALIB_DB_CREATE : CALIB_DB_READONLY, out, err);
    if (rc == 0 && dump) {
        int64_t rows = 0;
        if ((rc = calib_db_import(*out, path, &rows, err))) {
            calib_db_close(*out);
            *out = NULL;
        }
    }
    return rc;
}
