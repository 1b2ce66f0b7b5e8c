/* calib_ingest_cli — `servesim db ingest DIR --gpu NAME --db FILE`: a
 * serving engine's measured per-op tables (calib_ingest.h) into a perf-db.
 * The GPU's SM count comes from the catalogue (NAME as the folder,
 * h100_sxm, or the catalogue name, h100-sxm). A perf-db the command
 * created is removed again when it fails, so no half-written file stays. */
#include "calib_cli.h"

#include "calib_ingest.h"
#include "../models/model_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char ingest_usage[] =
    "usage: servesim db ingest DIR --gpu NAME --db FILE [--ops LIST] [--dtypes LIST] [--fastest] [--quiet]\n"
    "Reads DIR/<gpu>/<family>/<backend>-<version>/*.csv[.gz] (the layout of\n"
    "../shared/validation/ops) for GPU NAME (the folder name, e.g. h100_sxm, or\n"
    "the catalogue name h100-sxm) into the perf-db FILE (created if missing),\n"
    "one point per row, its kernel named <backend>-<version>:<kernel_source>.\n"
    "--ops / --dtypes keep only those servesim ops (gemm,attn_prefill,...) and\n"
    "dtypes (bf16,fp8,...); --fastest keeps per engine version and shape only\n"
    "the fastest kernel (what the cost model reads: a compact dump).\n";

/* Splits a comma list into a NULL-terminated array (in buf). */
static const char **split_list(char *buf, const char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < max - 1; tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    out[n] = NULL;
    return out;
}

int calib_ingest_cli(int argc, char **argv)
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
    /* Folder and catalogue spellings of the GPU. */
    char folder[128], cat[128];
    snprintf(folder, sizeof folder, "%s", gpu);
    snprintf(cat, sizeof cat, "%s", gpu);
    for (char *p = folder; *p; p++)
        if (*p == '-') *p = '_';
    for (char *p = cat; *p; p++)
        if (*p == '_') *p = '-';
    sim_err err = {{0}};
    model_gpu g;
    int32_t sms = 0;
    /* The catalogue GPU: the name itself, else the one catalogue name that
     * starts with its first part (b200_sxm → b200, a100_sxm → a100-sxm-80g). */
    const char *names[128];
    int nn = model_catalog_gpu_names(names, 128);
    const char *match = NULL;
    size_t first = strcspn(cat, "-");
    int hits = 0;
    for (int i = 0; i < nn; i++) {
        if (strcmp(names[i], cat) == 0) {
            match = names[i], hits = 1;
            break;
        }
        if (strncmp(names[i], cat, first) == 0 && (names[i][first] == '\0' || names[i][first] == '-'))
            match = names[i], hits++;
    }
    if (hits == 1 && model_catalog_gpu(match, &g, &err) == 0) sms = g.sms;
    else
        fprintf(stderr, "servesim db ingest: note: %s names %s catalogue GPU; its SM count is left unknown\n", cat,
                hits ? "more than one" : "no");

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
