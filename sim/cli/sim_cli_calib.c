/* sim_cli_calib — see sim_cli_calib.h. */
#include "sim_cli_calib.h"
#include "sim_cli_ingest.h"

#include "calib_backend.h"
#include "calib_db.h"
#include "calib_run.h"
#include "sim_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char calib_usage[] =
    "usage: servesim calibrate [--grid tiny|quick|full] [--ops LIST] [--kernels LIST]\n"
    "                          [--backend gpu|cpu] [--check] [--max-points N] [--reps N]\n"
    "                          [--warmup N] [--log FILE] [--quiet] --db FILE\n"
    "       servesim calibrate --list-kernels [--backend gpu|cpu] [--ops LIST]\n"
    "       servesim calibrate --print-grid [--grid G] [--ops LIST] [--dtype D] [--peak-of DEVICE]\n"
    "Measures the bundled kernels (and cuBLAS/NCCL references) over a grid of\n"
    "shapes and stores median/p10/p90 latencies in the perf-db FILE (SQLite).\n"
    "Points already in the perf-db are skipped, so an interrupted run resumes.\n"
    "Every kernel is first checked against its CPU reference at every check case\n"
    "(each timed variant and the edges), and every point small enough is checked\n"
    "itself before it is timed; --check runs only the case checks (no --db\n"
    "needed). --backend cpu times the CPU references (tiny grid by default) to\n"
    "exercise the harness without a GPU. --ops takes a\n"
    "comma-separated list of: gemm, grouped_contig, grouped_masked, attn_prefill,\n"
    "attn_decode, lse_merge, softmax, rmsnorm, quant_fp8, quant_mxfp8, copy,\n"
    "allreduce. --kernels takes a comma-separated list of the backend's kernel\n"
    "names: only those (of the selected ops; at least one) are checked and\n"
    "timed, so a kernel that faults or hangs can be kept apart from the rest;\n"
    "--list-kernels prints the backend's kernels, one per line as\n"
    "\"op kernel dtype version bundled|library\".\n"
    "--max-points stops after N new points. --print-grid lists the\n"
    "grid's shapes, one per line with their FLOPs and bytes (in dtype D,\n"
    "default bf16), for tools that time other libraries on the same grid;\n"
    "--peak-of DEVICE (a device name, e.g. \"NVIDIA H200\") adds ideal_s, the\n"
    "time at that GPU's peaks (0 when unknown), for their fraction of peak.\n";

static const char db_usage[] =
    "usage: servesim db list FILE\n"
    "       servesim db show FILE [--op OP] [--gpu ID]\n"
    "       servesim db export FILE OUT.sql\n"
    "       servesim db import FILE IN.sql\n"
    "       servesim db lookup FILE --gpu NAME --op OP --dtype DTYPE [--kernel K] FIELD=VALUE...\n"
    "       servesim db ingest DIR --gpu NAME --db FILE [...]   (see servesim db ingest --help)\n"
    "FILE is a perf-db or, except for import, a .sql dump. list: GPUs and their point counts; show: the points (of one op / GPU);\n"
    "export/import: the text (.sql) form committed to the repository (import\n"
    "merges, keeping rows already present); lookup: the latency the cost model\n"
    "would read (interpolated in log space on the measured grid).\n";

static int calib_parse_i64(const char *s, int64_t *out)
{
    int64_t v;
    if (sim_parse_i64(s, &v) != SIM_PARSE_OK || v < 0) return -1;
    *out = v;
    return 0;
}

/* One line per grid point: "op m=.. n=.. flops=.. bytes=..", and with a
 * device name (--peak-of) the time the point would take at that GPU's
 * peaks (ideal_s, 0 when they are unknown), from which a tool timing a
 * library on the grid fills frac_of_peak as the harness does. The
 * collectives are left out: their grids depend on the GPUs present. */
static int calib_print_grid(const char *grid, uint32_t ops_mask, const char *dtype, const char *peak_of)
{
    calib_grid_kind g;
    sim_err err = {{0}};
    if (calib_grid_from_name(grid ? grid : "quick", &g, &err)) {
        fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        return 2;
    }
    calib_dtype fmt = calib_dtype_parse(dtype);
    if (fmt != CALIB_DTYPE_BF16 && fmt != CALIB_DTYPE_FP8 && fmt != CALIB_DTYPE_MXFP8 && fmt != CALIB_DTYPE_FP32) {
        fprintf(stderr, "servesim calibrate: --dtype is bf16, fp8, mxfp8 or fp32, not '%s'\n", dtype);
        return 2;
    }
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        calib_shape *sh = NULL;
        int64_t n = 0;
        if ((ops_mask && !(ops_mask & (1u << op))) || (op >= CALIB_OP_ALLREDUCE && op <= CALIB_OP_ALLTOALL)) continue;
        if (calib_grid_build(g, (calib_op)op, 0, &sh, &n, &err)) {
            fprintf(stderr, "servesim calibrate: %s\n", err.msg);
            return 1;
        }
        for (int64_t i = 0; i < n; i++) {
            char buf[256];
            calib_shape_format(&sh[i], buf, sizeof buf);
            printf("%s %s op_flops=%.17g op_bytes=%.17g", calib_op_name((calib_op)op), buf,
                   calib_op_flops((calib_op)op, &sh[i]), calib_op_bytes((calib_op)op, fmt, &sh[i]));
            if (peak_of)
                printf(" ideal_s=%.17g", calib_op_ideal_s((calib_op)op, fmt, &sh[i], calib_peak_flops(peak_of, fmt),
                                                          calib_peak_bw(peak_of)));
            putchar('\n');
        }
        free(sh);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

/* servesim calibrate's flags. */
typedef struct {
    const char *db_path, *backend, *grid, *ops, *log_path, *dtype, *peak_of, *kernels;
    int check_only, quiet, print_grid, list_kernels;
    int64_t max_points, reps, warmup;
} calib_cli_args;

/* Reads the flags into args; returns -1 to go on, else the exit code (0 after
 * --help, 2 on a bad flag). */
static int calibrate_parse(int argc, char **argv, calib_cli_args *args)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(calib_usage, stdout);
            return 0;
        } else if (strcmp(a, "--check") == 0) args->check_only = 1;
        else if (strcmp(a, "--print-grid") == 0) args->print_grid = 1;
        else if (strcmp(a, "--list-kernels") == 0) args->list_kernels = 1;
        else if (v && strcmp(a, "--kernels") == 0) args->kernels = v, i++;
        else if (v && strcmp(a, "--dtype") == 0) args->dtype = v, i++;
        else if (v && strcmp(a, "--peak-of") == 0) args->peak_of = v, i++;
        else if (strcmp(a, "--quiet") == 0) args->quiet = 1;
        else if (v && strcmp(a, "--db") == 0) args->db_path = v, i++;
        else if (v && strcmp(a, "--backend") == 0) args->backend = v, i++;
        else if (v && strcmp(a, "--grid") == 0) args->grid = v, i++;
        else if (v && strcmp(a, "--ops") == 0) args->ops = v, i++;
        else if (v && strcmp(a, "--log") == 0) args->log_path = v, i++;
        else if (v && (strcmp(a, "--max-points") == 0 || strcmp(a, "--reps") == 0 || strcmp(a, "--warmup") == 0)) {
            int64_t x;
            if (calib_parse_i64(v, &x) != 0) {
                fprintf(stderr, "servesim calibrate: %s needs a non-negative integer, not '%s'\n", a, v);
                return 2;
            }
            if (a[2] == 'm') args->max_points = x;
            else if (a[2] == 'r') args->reps = x;
            else args->warmup = x;
            i++;
        } else {
            fprintf(stderr, "servesim calibrate: unknown or incomplete option '%s'\n%s", a, calib_usage);
            return 2;
        }
    }
    return -1;
}

/* The run's options from the flags; -1 to go on, else the exit code. */
static int calibrate_options(const calib_cli_args *a, calib_run_opts *o)
{
    sim_err err = {{0}};
    if (strcmp(a->backend, "gpu") != 0 && strcmp(a->backend, "cpu") != 0) {
        fprintf(stderr, "servesim calibrate: --backend is gpu or cpu, not '%s'\n", a->backend);
        return 2;
    }
    if (!a->db_path && !a->check_only && !a->list_kernels) {
        fprintf(stderr, "servesim calibrate: --db FILE is required (or --check alone)\n%s", calib_usage);
        return 2;
    }
    memset(o, 0, sizeof *o);
    if (calib_grid_from_name(a->grid ? a->grid : strcmp(a->backend, "cpu") == 0 ? "tiny" : "quick", &o->grid, &err) ||
        (a->ops && calib_ops_parse(a->ops, &o->ops_mask, &err))) {
        fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        return 2;
    }
    o->check_only = a->check_only, o->max_points = a->max_points, o->reps = (int32_t)a->reps;
    o->kernels = a->kernels;
    o->warmup = (int32_t)a->warmup;
    o->progress = !a->quiet && isatty(STDERR_FILENO);
    return -1;
}

/* The run's one-line summary. */
static void calibrate_summary(const calib_backend *b, const calib_run_opts *o, const calib_run_stats *st)
{
    printf("calibrate (%s backend, %s grid): checks %lld passed, %lld failed, %lld not checked",
           b->name, calib_grid_name(o->grid), (long long)st->checks_passed, (long long)st->checks_failed,
           (long long)st->checks_skipped);
    if (!o->check_only)
        printf("; points %lld planned, %lld measured (%lld of them checked themselves), %lld already present, %lld failed%s",
               (long long)st->planned, (long long)st->measured, (long long)st->points_checked, (long long)st->skipped,
               (long long)st->failed, st->stopped ? " (stopped at --max-points; rerun to resume)" : "");
    if (st->samples_dropped) printf("; %lld throttled samples dropped and retaken", (long long)st->samples_dropped);
    printf("\n");
}

int sim_cli_calibrate(int argc, char **argv)
{
    calib_cli_args args = {NULL, "gpu", NULL, NULL, NULL, "bf16", NULL, NULL, 0, 0, 0, 0, 0, 0, 0};
    int code = calibrate_parse(argc, argv, &args);
    if (code >= 0) return code;
    calib_backend b;
    calib_db *db = NULL;
    FILE *logf = NULL;
    sim_err err = {{0}};
    int have_backend = 0;
    code = 1;
    if (args.print_grid) {
        uint32_t mask = 0;
        if (args.ops && calib_ops_parse(args.ops, &mask, &err)) {
            fprintf(stderr, "servesim calibrate: %s\n", err.msg);
            return 2;
        }
        return calib_print_grid(args.grid, mask, args.dtype, args.peak_of);
    }
    calib_run_opts o;
    int rc = calibrate_options(&args, &o);
    if (rc >= 0) return rc;
    rc = strcmp(args.backend, "cpu") == 0 ? calib_backend_cpu_create(&b, &err) : calib_backend_gpu_create(&b, &err);
    if (rc) {
        fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        return 1;
    }
    have_backend = 1;
    if (args.list_kernels) {
        code = calib_run_list_kernels(&b, o.ops_mask, stdout, &err) ? 1 : 0;
        if (code) fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        goto fail;
    }
    if (args.log_path && !(logf = fopen(args.log_path, "w"))) {
        fprintf(stderr, "servesim calibrate: cannot write %s\n", args.log_path);
        goto fail;
    }
    o.log = logf ? logf : (args.quiet ? NULL : stdout);
    if (args.db_path && !args.check_only && (rc = calib_db_open(args.db_path, CALIB_DB_CREATE, &db, &err))) {
        fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        code = rc == SIM_ENOMEM ? 1 : 2; /* a bad --db path or file is bad input */
        goto fail;
    }
    calib_run_stats st;
    rc = calib_run(&b, db, &o, &st, &err);
    if (rc) {
        fprintf(stderr, "servesim calibrate: %s\n", err.msg);
        goto fail;
    }
    calibrate_summary(&b, &o, &st);
    code = st.checks_failed || st.failed ? 1 : 0;
fail:
    if (logf) fclose(logf);
    calib_db_close(db);
    if (have_backend) b.destroy(b.state);
    return code;
}

static int db_list_gpu(void *ctx, int64_t gpu_id, const calib_gpu_id *id, int64_t n_points)
{
    (void)ctx;
    printf("%3lld  %-32s %4d SMs  cc %-4s  %5d/%5d MHz  driver %-8s cuda %-6s %-4s %8lld points\n", (long long)gpu_id,
           id->name, id->sms, id->cc, id->sm_clock_mhz, id->mem_clock_mhz, id->driver, id->cuda, id->backend,
           (long long)n_points);
    return 0;
}

static int db_show_point(void *ctx, int64_t gpu_id, const calib_point *p)
{
    char shape[160];
    int *header = ctx;
    if (!*header) {
        printf("%-4s %-15s %-6s %-28s %-40s %12s %12s %12s %9s %9s %6s\n", "gpu", "op", "dtype", "kernel", "shape",
               "median_s", "p10_s", "p90_s", "TFLOP/s", "GB/s", "peak");
        *header = 1;
    }
    calib_shape_format(&p->shape, shape, sizeof shape);
    printf("%-4lld %-15s %-6s %-28s %-40s %12.5g %12.5g %12.5g %9.3g %9.3g ", (long long)gpu_id, calib_op_name(p->op),
           p->dtype, p->kernel, shape, p->median_s, p->p10_s, p->p90_s, p->tflops, p->gbps);
    if (isfinite(p->frac_of_peak)) printf("%5.1f%%\n", 100.0 * p->frac_of_peak);
    else printf("%6s\n", "-");
    return 0;
}

static int db_lookup_cmd(calib_db *db, int argc, char **argv, sim_err *err)
{
    const char *gpu = NULL, *op = NULL, *dtype = NULL, *kernel = NULL;
    calib_shape s;
    memset(&s, 0, sizeof s);
    for (int i = 3; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--gpu") == 0) gpu = v, i++;
        else if (v && strcmp(argv[i], "--op") == 0) op = v, i++;
        else if (v && strcmp(argv[i], "--dtype") == 0) dtype = v, i++;
        else if (v && strcmp(argv[i], "--kernel") == 0) kernel = v, i++;
        else {
            const char *eq = strchr(argv[i], '=');
            int32_t f = -1;
            int64_t x;
            for (int32_t j = 0; eq && j < CALIB_SHAPE_FIELDS; j++)
                if ((size_t)(eq - argv[i]) == strlen(calib_shape_field_name(j)) &&
                    strncmp(argv[i], calib_shape_field_name(j), (size_t)(eq - argv[i])) == 0)
                    f = j;
            if (f < 0 || calib_parse_i64(eq + 1, &x) != 0)
                return sim_err_set(err, SIM_EINVAL, "lookup: '%s' is not FIELD=VALUE (fields m n k batch ctx heads "
                                   "kv_heads head_dim groups bytes ranks skew_milli)", argv[i]);
            calib_shape_set(&s, f, x);
        }
    }
    if (!gpu || !op || !dtype) return sim_err_set(err, SIM_EINVAL, "lookup needs --gpu, --op and --dtype");
    int opi = calib_op_from_name(op);
    if (opi < 0) return sim_err_set(err, SIM_EINVAL, "unknown op '%s'", op);
    int64_t gid;
    calib_lookup_result r;
    int rc = calib_db_gpu_find(db, gpu, NULL, &gid, err);
    if (!rc) rc = calib_db_lookup(db, gid, (calib_op)opi, dtype, kernel, &s, &r, err);
    if (rc) return rc;
    static const char *const names[] = {"exact", "interpolated", "nearest", "outside the grid", "no data"};
    char near[160];
    calib_shape_format(&r.nearest, near, sizeof near);
    printf("%s: latency %.6g s (nearest point %s, efficiency %.3g)\n", names[r.status], r.latency_s, near, r.efficiency);
    return 0;
}

int sim_cli_db(int argc, char **argv)
{
    sim_err err = {{0}};
    calib_db *db = NULL;
    int rc = 0, fresh_made = 0;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(db_usage, stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "ingest") == 0) return sim_cli_ingest(argc - 1, argv + 1);
    if (argc < 3) {
        fputs(db_usage, stderr);
        return 2;
    }
    const char *cmd = argv[1], *path = argv[2];
    int create = strcmp(cmd, "import") == 0;
    if (strcmp(cmd, "list") && strcmp(cmd, "show") && strcmp(cmd, "export") && strcmp(cmd, "import") && strcmp(cmd, "lookup")) {
        fprintf(stderr, "servesim db: unknown command '%s'\n%s", cmd, db_usage);
        return 2;
    }
    if ((strcmp(cmd, "export") == 0 || create) && argc != 4) {
        fprintf(stderr, "servesim db %s: needs FILE and a .sql path\n", cmd);
        return 2;
    }
    /* Reading verbs also take a committed .sql dump (imported into memory).
     * An import that creates its perf-db and then fails removes it again. */
    int fresh = create && access(path, F_OK) != 0;
    if ((rc = create ? calib_db_open(path, CALIB_DB_CREATE, &db, &err) : calib_db_open_any(path, &db, &err))) goto fail;
    fresh_made = fresh;
    if (strcmp(cmd, "list") == 0) {
        rc = calib_db_gpu_foreach(db, db_list_gpu, NULL, &err);
    } else if (strcmp(cmd, "show") == 0) {
        int op = -1, header = 0;
        int64_t gid = 0;
        for (int i = 3; i < argc; i++) {
            if (i + 1 < argc && strcmp(argv[i], "--op") == 0) {
                if ((op = calib_op_from_name(argv[++i])) < 0) {
                    rc = sim_err_set(&err, SIM_EINVAL, "unknown op '%s'", argv[i]);
                    goto fail;
                }
            } else if (i + 1 < argc && strcmp(argv[i], "--gpu") == 0 && calib_parse_i64(argv[i + 1], &gid) == 0) {
                i++;
            } else {
                rc = sim_err_set(&err, SIM_EINVAL, "show: unknown option '%s'", argv[i]);
                goto fail;
            }
        }
        rc = calib_db_point_foreach(db, gid, op, db_show_point, &header, &err);
    } else if (strcmp(cmd, "export") == 0) {
        FILE *out = strcmp(argv[3], "-") == 0 ? stdout : fopen(argv[3], "w");
        if (!out) {
            rc = sim_err_set(&err, SIM_EIO, "cannot write %s", argv[3]);
            goto fail;
        }
        rc = calib_db_export(db, out, &err);
        if (out != stdout && fclose(out) != 0 && !rc) rc = sim_err_set(&err, SIM_EIO, "write error on %s", argv[3]);
    } else if (create) {
        int64_t rows = 0;
        rc = calib_db_import_any(db, argv[3], &rows, &err);
        if (!rc) printf("imported %lld new rows into %s\n", (long long)rows, path);
    } else {
        rc = db_lookup_cmd(db, argc, argv, &err);
    }
fail:
    calib_db_close(db);
    if (rc && fresh_made) unlink(path);
    if (rc) {
        fprintf(stderr, "servesim db %s: %s\n", cmd, err.msg);
        return rc == SIM_EINVAL ? 2 : 1;
    }
    return 0;
}
