/* sim_cli_ingest — `servesim db ingest DIR --gpu NAME --db FILE`: a
 * serving engine's measured per-op tables (calib_ingest.h) into a perf-db.
 * NAME is resolved by the GPU catalogue (its name or an alias: h100_sxm,
 * h100-sxm, hgx-h100; an unknown name is refused with the catalogue's
 * suggestions, exit 2), which gives the SM count; the tables' folder is
 * NAME, the catalogue name or an alias with '-' as '_'. A perf-db the
 * command created is removed again when it fails, so no half-written file
 * stays. */
#include "sim_cli_ingest.h"

#include "calib_ingest.h"
#include "model_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char ingest_usage[] =
    "usage: servesim db ingest DIR --gpu NAME --db FILE [--ops LIST] [--dtypes LIST] [--fastest] [--quiet]\n"
    "Reads DIR/<gpu>/<family>/<backend>-<version>/*.csv[.gz] (the layout of\n"
    "../shared/validation/ops) for GPU NAME (a catalogue name or alias: h100-sxm,\n"
    "h100_sxm, hgx-h100) into the perf-db FILE (created if missing),\n"
    "one point per row, its kernel named <backend>-<version>:<kernel_source>.\n"
    "--ops / --dtypes keep only those servesim ops (gemm,attn_prefill,...) and\n"
    "dtypes (bf16,fp8,...); --fastest keeps per engine version and shape only\n"
    "the fastest kernel (what the cost model reads: a compact dump).\n";

/* name with '-' as '_' into out; 1 when DIR/out is a folder. */
static int folder_try(const char *dir, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s", name);
    for (char *p = out; *p; p++)
        if (*p == '-') *p = '_';
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, out);
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The tables' folder of GPU g under dir: the name given, the catalogue
 * name or one of its aliases; 0 when none is a folder. */
static int ingest_folder(const char *dir, const char *given, const model_gpu *g, char *out, size_t len)
{
    if (folder_try(dir, given, out, len) || folder_try(dir, g->name, out, len)) return 1;
    char list[sizeof g->aliases];
    snprintf(list, sizeof list, "%s", g->aliases);
    for (char *save = NULL, *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
        if (folder_try(dir, tok, out, len)) return 1;
    return 0;
}

/* Splits a comma list into a NULL-terminated array (in buf). */
static const char **split_list(char *buf, const char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < max - 1; tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    out[n] = NULL;
    return out;
}

int sim_cli_ingest(int argc, char **argv)
{
    const char *dir = NULL, *gpu = NULL, *dbp = NULL;
    char ops_buf[512] = "", dt_buf[512] = "";
    const char *ops[64], *dts[64];
    int fastest = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(ingest_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--gpu") && i + 1 < argc) gpu = argv[++i];
        else if (!strcmp(a, "--db") && i + 1 < argc) dbp = argv[++i];
        else if (!strcmp(a, "--ops") && i + 1 < argc) snprintf(ops_buf, sizeof ops_buf, "%s", argv[++i]);
        else if (!strcmp(a, "--dtypes") && i + 1 < argc) snprintf(dt_buf, sizeof dt_buf, "%s", argv[++i]);
        else if (!strcmp(a, "--fastest")) fastest = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] != '-' && !dir) dir = a;
        else {
            fprintf(stderr, "servesim db ingest: unknown or incomplete option '%s'\n%s", a, ingest_usage);
            return 2;
        }
    }
    if (!dir || !gpu || !dbp) {
        fprintf(stderr, "servesim db ingest: needs DIR, --gpu NAME and --db FILE\n%s", ingest_usage);
        return 2;
    }
    if (ops_buf[0]) {
        char check[512];
        snprintf(check, sizeof check, "%s", ops_buf);
        for (char *save = NULL, *tok = strtok_r(check, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if (calib_op_from_name(tok) < 0) {
                fprintf(stderr, "servesim db ingest: --ops: unknown op '%s'\n", tok);
                return 2;
            }
    }
    /* The catalogue GPU (its name or any alias, '_' and '-' alike; an
     * unknown name gets the catalogue's error with suggestions), then the
     * tables' folder: NAME itself, else the catalogue name or an alias
     * spelt with '_' (h100-sxm → h100_sxm) that is a folder under DIR. */
    sim_err err = {{0}};
    model_gpu g;
    if (model_catalog_gpu(gpu, &g, &err) < 0) {
        fprintf(stderr, "servesim db ingest: --gpu: %s\n", err.msg);
        return 2;
    }
    char folder[300];
    if (!ingest_folder(dir, gpu, &g, folder, sizeof folder)) {
        fprintf(stderr, "servesim db ingest: %s: no folder for GPU %s (tried %s and its aliases %s, '-' as '_')\n",
                dir, gpu, g.name, g.aliases[0] ? g.aliases : "(none)");
        return 2;
    }
    const int32_t sms = g.sms;

    int fresh = access(dbp, F_OK) != 0;
    calib_db *db = NULL;
    int rc = calib_db_open(dbp, CALIB_DB_CREATE, &db, &err);
    calib_ingest_stats st;
    if (rc == 0) {
        calib_ingest_opts o = {ops_buf[0] ? split_list(ops_buf, ops, 64) : NULL,
                               dt_buf[0] ? split_list(dt_buf, dts, 64) : NULL,
                               fastest, sms, NULL, quiet ? NULL : stderr};
        rc = calib_ingest(db, dir, folder, &o, &st, &err);
    }
    calib_db_close(db);
    if (rc < 0) {
        if (fresh) unlink(dbp);
        fprintf(stderr, "servesim db ingest: %s\n", err.msg);
        return rc == SIM_EINVAL ? 2 : 1;
    }
    printf("ingested %lld tables of %s (%lld rows, %lld skipped): %lld points, %lld new in %s\n",
           (long long)st.tables, folder, (long long)st.rows, (long long)st.rows_skipped, (long long)st.points,
           (long long)st.added, dbp);
    return 0;
}
