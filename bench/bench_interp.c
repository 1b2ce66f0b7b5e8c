/* bench_interp — how well the perf-db tables reproduce measurements inside
 * their grid: the leave-one-out error of the in-grid interpolation
 * (calib_series_holdout: each measured point predicted from its two
 * measured neighbours along an axis, as a lookup between them answers) per
 * op family, for each perf-db dump given (default: the committed dumps,
 * calib/data/<gpu>-<date>.sql and calib/data/engines/<gpu>.sql.gz), tables
 * built as a deployment of each engine gets them (harness dumps: no
 * engine). Prints
 * per (dump, engine, family) the number of held-out points, the median and
 * the 90th percentile of |predicted / measured − 1|; with --series, also
 * one line per series (op, dtype, points, the RMS relative error of its
 * fitted floor + rate model, which prices shapes outside the grid, and its
 * held-out error). Usage:
 *   bench_interp [--series] [DUMP...] */
#include "calib_db.h"
#include "calib_table.h"

#include <dirent.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FAM_GEMM, FAM_GROUPED, FAM_ATTN, FAM_MLA, FAM_MOE, FAM_GDN, FAM_QUANT, FAM_ELEM, FAM_COMM, FAM_MODULE, FAM_N } family;
static const char *const fam_names[FAM_N] = {"GEMM", "grouped GEMM", "attention", "MLA (kernel, BMM)", "MoE",
                                              "GDN", "quantise", "norm/softmax/copy", "collectives", "modules (MLA, DSA)"};

static family family_of(calib_op op)
{
    switch (op) {
    case CALIB_OP_GEMM: return FAM_GEMM;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: return FAM_GROUPED;
    case CALIB_OP_ATTN_PREFILL:
    case CALIB_OP_ATTN_DECODE:
    case CALIB_OP_LSE_MERGE: return FAM_ATTN;
    case CALIB_OP_MLA_PREFILL:
    case CALIB_OP_MLA_DECODE:
    case CALIB_OP_MLA_BMM_PRE:
    case CALIB_OP_MLA_BMM_POST: return FAM_MLA;
    case CALIB_OP_MOE: return FAM_MOE;
    case CALIB_OP_GDN_PREFILL:
    case CALIB_OP_GDN_DECODE:
    case CALIB_OP_GDN_CONV_PREFILL:
    case CALIB_OP_GDN_CONV_DECODE: return FAM_GDN;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8:
    case CALIB_OP_QUANT_SCALE: return FAM_QUANT;
    case CALIB_OP_ALLREDUCE:
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL: return FAM_COMM;
    case CALIB_OP_MLA_MODULE_PREFILL:
    case CALIB_OP_MLA_MODULE_DECODE:
    case CALIB_OP_DSA_PREFILL:
    case CALIB_OP_DSA_DECODE: return FAM_MODULE;
    default: return FAM_ELEM;
    }
}

typedef struct {
    double *v;
    size_t n, cap;
} vec;

static int vec_push(vec *x, const double *v, size_t n)
{
    if (x->n + n > x->cap) {
        size_t nc = x->cap ? x->cap : 1024;
        while (nc < x->n + n) nc *= 2;
        double *nv = realloc(x->v, nc * sizeof *nv);
        if (!nv) return -1;
        x->v = nv, x->cap = nc;
    }
    memcpy(x->v + x->n, v, n * sizeof *v);
    x->n += n;
    return 0;
}

typedef struct {
    int64_t ids[16];
    int n;
} gpu_list;

static int gpu_cb(void *vctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    gpu_list *g = vctx;
    (void)id;
    if (n_points > 0 && g->n < 16) g->ids[g->n++] = gpu_id;
    return 0;
}

static int bench_dump(const char *path, int per_series)
{
    sim_err err = {{0}};
    calib_db *db = NULL;
    if (calib_db_open_any(path, &db, &err) < 0) {
        fprintf(stderr, "bench_interp: %s\n", err.msg);
        return -1;
    }
    gpu_list g = {{0}, 0};
    if (calib_db_gpu_foreach(db, gpu_cb, &g, &err) < 0) {
        fprintf(stderr, "bench_interp: %s\n", err.msg);
        calib_db_close(db);
        return -1;
    }
    const int engines_dump = strstr(path, "engines/") != NULL;
    static const char *const engines[] = {"vllm", "sglang", "trtllm"};
    for (int gi = 0; gi < g.n; gi++)
        for (int e = 0; e < (engines_dump ? 3 : 1); e++) {
            calib_table *t = NULL;
            const char *eng = engines_dump ? engines[e] : NULL;
            if (calib_table_build(db, g.ids[gi], eng, NULL, 0, &t, &err) < 0) {
                fprintf(stderr, "bench_interp: %s\n", err.msg);
                calib_db_close(db);
                return -1;
            }
            vec fam[FAM_N];
            memset(fam, 0, sizeof fam);
            for (int32_t i = 0; i < calib_table_n_series(t); i++) {
                const calib_series *s = calib_table_series_at(t, i);
                calib_op op;
                calib_series_info in;
                const char *dtype = NULL;
                calib_series_describe(s, &op, &dtype, &in);
                /* Only the engine's own rows (the fastest kernel of all
                 * where it has none would be counted again per engine). */
                if (eng && strncmp(in.kernels, eng, strlen(eng))) continue;
                int64_t n = calib_series_holdout(s, NULL, 0);
                if (n <= 0) continue;
                double *v = malloc((size_t)n * sizeof *v);
                if (!v) continue;
                calib_series_holdout(s, v, n);
                if (per_series) {
                    gsl_sort(v, 1, (size_t)n);
                    printf("%-36s %-7s series %-18s %-18s %7lld points  fit rms %6.2f %%  held out %7lld  median "
                           "%5.2f %%  p90 %6.2f %%\n",
                           path, eng ? eng : "-", calib_op_name(op), dtype, (long long)in.n_points, 100 * in.rms_rel,
                           (long long)n, 100 * gsl_stats_median_from_sorted_data(v, 1, (size_t)n),
                           100 * gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.9));
                }
                vec_push(&fam[family_of(op)], v, (size_t)n);
                free(v);
            }
            for (int f = 0; f < FAM_N; f++) {
                if (!fam[f].n) continue;
                gsl_sort(fam[f].v, 1, fam[f].n);
                printf("%-36s %-7s %-19s %7zu held out  median %5.2f %%  p90 %6.2f %%\n", path, eng ? eng : "-",
                       fam_names[f], fam[f].n, 100 * gsl_stats_median_from_sorted_data(fam[f].v, 1, fam[f].n),
                       100 * gsl_stats_quantile_from_sorted_data(fam[f].v, 1, fam[f].n, 0.9));
                free(fam[f].v);
            }
            fflush(stdout);
            calib_table_free(t);
        }
    calib_db_close(db);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The committed dumps under dir matching suffix, sorted. */
static int list_dumps(const char *dir, const char *suffix, char **out, int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        size_t l = strlen(e->d_name), ls = strlen(suffix);
        if (l <= ls || strcmp(e->d_name + l - ls, suffix)) continue;
        size_t len = strlen(dir) + l + 2;
        out[n] = malloc(len);
        if (out[n]) snprintf(out[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, by_name);
    return n;
}

int main(int argc, char **argv)
{
    int rc = 0, per_series = argc > 1 && !strcmp(argv[1], "--series"), first = 1 + per_series;
    if (argc > first) {
        for (int i = first; i < argc; i++) rc |= bench_dump(argv[i], per_series) < 0;
        return rc;
    }
    char *dumps[64];
    int n = list_dumps("calib/data", ".sql", dumps, 32);
    n += list_dumps("calib/data/engines", ".sql.gz", dumps + n, 32);
    if (!n) {
        fprintf(stderr, "bench_interp: no dumps under calib/data (run from the source tree or name them)\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        rc |= bench_dump(dumps[i], per_series) < 0;
        free(dumps[i]);
    }
    return rc;
}
