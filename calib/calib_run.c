/* calib_run — see calib_run.h. */
#include "calib_run.h"

#include "calib_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int calib_ops_parse(const char *list, uint32_t *mask, sim_err *err)
{
    char buf[512];
    *mask = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok += strspn(tok, " ");
        if (strcmp(tok, "all") == 0) {
            *mask = 0;
            return 0;
        }
        int op = calib_op_from_name(tok);
        if (op < 0 || op >= CALIB_OP_HARNESS_COUNT) {
            char names[256] = "";
            for (int i = 0; i < CALIB_OP_HARNESS_COUNT; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", calib_op_name((calib_op)i));
            return sim_err_set(err, SIM_EINVAL, "unknown op '%s' (ops: %s)", tok, names);
        }
        *mask |= 1u << op;
    }
    return 0;
}

static void calib_progress(const calib_run_opts *o, int64_t done, int64_t total, const char *what)
{
    if (!o->progress || total <= 0) return;
    int w = 30, fill = (int)(done * w / total);
    fprintf(stderr, "\r[");
    for (int i = 0; i < w; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %lld/%lld %-48.48s", (long long)done, (long long)total, what);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

static void calib_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Seconds one point may take with the default repetition count: slow
 * points (a SIMT attention over a 64k-token context runs for seconds) keep
 * at least CALIB_MIN_REPS samples instead of the full count. */
#define CALIB_POINT_BUDGET_S 1.0
#define CALIB_MIN_REPS 5

/* Times one prepared point into p (reps ≥ 1); with `adaptive` the
 * repetitions shrink to fit CALIB_POINT_BUDGET_S. */
static int calib_time_point(calib_backend *b, int32_t warmup, int32_t reps, int adaptive, calib_point *p,
                            sim_err *err)
{
    double *t = malloc((size_t)reps * sizeof *t), dummy = 0;
    calib_stats s;
    int rc = 0;
    if (!t) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int32_t i = 0; i < warmup && !rc; i++) {
        rc = b->run(b->state, &dummy, err);
        if (adaptive && dummy > CALIB_POINT_BUDGET_S / CALIB_MIN_REPS) break; /* long enough to be warm */
    }
    if (!rc && adaptive && dummy > 0 && dummy * reps > CALIB_POINT_BUDGET_S) {
        int32_t fit = (int32_t)(CALIB_POINT_BUDGET_S / dummy);
        reps = fit > CALIB_MIN_REPS ? fit : CALIB_MIN_REPS < reps ? CALIB_MIN_REPS : reps;
    }
    for (int32_t i = 0; i < reps && !rc; i++) rc = b->run(b->state, &t[i], err);
    if (!rc && calib_stats_summarise(t, (size_t)reps, &s) != 0) rc = sim_err_set(err, SIM_EINVAL, "no samples");
    if (!rc) {
        p->reps = reps;
        p->median_s = s.median, p->p10_s = s.p10, p->p90_s = s.p90;
    }
    free(t);
    return rc;
}

static void calib_fill_rates(calib_backend *b, calib_point *p)
{
    double fl = calib_op_flops(p->op, &p->shape), by = calib_op_bytes(p->op, p->dtype, &p->shape);
    double t = p->median_s > 0 ? p->median_s : NAN;
    p->tflops = fl > 0 ? fl / t * 1e-12 : NAN;
    p->gbps = by > 0 ? by / t * 1e-9 : NAN;
    double pf = b->peak_flops ? b->peak_flops(b->state, p->dtype) : 0.0;
    /* Fraction of the roofline: the time the op would take at peak (compute
     * or bandwidth, whichever binds) over the measured time. */
    double ideal = fmax(pf > 0 && fl > 0 ? fl / pf : 0.0, b->peak_bw > 0 && by > 0 ? by / b->peak_bw : 0.0);
    p->frac_of_peak = ideal > 0 && (pf > 0 || fl == 0) ? ideal / t : NAN;
}

int calib_run(calib_backend *b, calib_db *db, const calib_run_opts *o, calib_run_stats *st, sim_err *err)
{
    calib_gpu_id id;
    int64_t gpu_id = 0;
    int rc;
    calib_shape *grid[CALIB_OP_COUNT] = {0};
    int64_t ngrid[CALIB_OP_COUNT] = {0};
    int32_t warmup = o->warmup > 0 ? o->warmup : b->default_warmup, reps = o->reps > 0 ? o->reps : b->default_reps;
    memset(st, 0, sizeof *st);
    if ((rc = b->identity(b->state, &id, err))) return rc;
    if (!o->check_only) {
        if (!db) return sim_err_set(err, SIM_EINVAL, "calibration needs a perf-db");
        if ((rc = calib_db_gpu_ensure(db, &id, &gpu_id, err))) return rc;
    }
    /* Plan: grid sizes × kernels, for the progress bar. */
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        if (o->ops_mask && !(o->ops_mask & (1u << op))) continue;
        b->kernels(b->state, (calib_op)op, &ks, &nk, &why);
        if (nk == 0 || o->check_only) continue;
        if ((rc = calib_grid_build(o->grid, (calib_op)op, b->local_ranks, &grid[op], &ngrid[op], err))) goto fail;
        st->planned += ngrid[op] * nk;
    }
    int64_t done = 0;
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        if (o->ops_mask && !(o->ops_mask & (1u << op))) continue;
        b->kernels(b->state, (calib_op)op, &ks, &nk, &why);
        if (nk == 0 && o->log) fprintf(o->log, "skip  %-15s %s\n", calib_op_name((calib_op)op), why ? why : "");
        for (int32_t ki = 0; ki < nk; ki++) {
            /* Check first: a wrong kernel's timings must not count. */
            calib_shape cs;
            double e = NAN, tol = NAN;
            calib_grid_check_shape((calib_op)op, &cs);
            if (op == CALIB_OP_ALLREDUCE) cs.ranks = b->local_ranks;
            sim_err cerr;
            int crc = b->prepare(b->state, (calib_op)op, ki, &cs, &cerr);
            if (!crc) crc = b->check(b->state, &e, &tol, &cerr);
            b->release(b->state);
            /* A library reference without a check (NCCL) is still timed. */
            int pass = (!crc && e <= tol) || (crc == SIM_ENOTSUP && ks[ki].is_library);
            if (crc == SIM_ENOTSUP) st->checks_skipped++;
            else if (pass) st->checks_passed++;
            else st->checks_failed++;
            if (o->log) {
                if (crc) fprintf(o->log, "check %-15s %-28s %s: %s\n", calib_op_name((calib_op)op), ks[ki].kernel,
                                 crc == SIM_ENOTSUP ? "SKIP" : "FAIL", cerr.msg);
                else fprintf(o->log, "check %-15s %-28s %s error %.3g (tolerance %.3g)\n", calib_op_name((calib_op)op),
                             ks[ki].kernel, pass ? "PASS" : "FAIL", e, tol);
            }
            if (o->check_only) continue;
            if (!pass) {
                done += ngrid[op];
                continue;
            }
            for (int64_t gi = 0; gi < ngrid[op]; gi++) {
                calib_point p;
                char shape_txt[160], what[200];
                int exists = 0;
                memset(&p, 0, sizeof p);
                p.op = (calib_op)op;
                snprintf(p.dtype, sizeof p.dtype, "%s", ks[ki].dtype);
                snprintf(p.kernel, sizeof p.kernel, "%s", ks[ki].kernel);
                p.kernel_version = ks[ki].version;
                p.shape = grid[op][gi];
                p.check_err = e;
                calib_shape_format(&p.shape, shape_txt, sizeof shape_txt);
                snprintf(what, sizeof what, "%s %s %s", calib_op_name(p.op), p.dtype, shape_txt);
                calib_progress(o, done, st->planned, what);
                done++;
                if ((rc = calib_db_point_exists(db, gpu_id, &p, &exists, err))) goto fail;
                if (exists) {
                    st->skipped++;
                    continue;
                }
                if (o->max_points > 0 && st->measured >= o->max_points) {
                    st->stopped = 1;
                    goto out;
                }
                sim_err perr;
                int prc = b->prepare(b->state, p.op, ki, &p.shape, &perr);
                if (!prc) prc = calib_time_point(b, warmup, reps, o->reps <= 0, &p, &perr);
                b->release(b->state);
                if (prc) { /* e.g. out of device memory at one shape: log, go on */
                    st->failed++;
                    if (o->log) fprintf(o->log, "fail  %s %s: %s\n", what, p.kernel, perr.msg);
                    continue;
                }
                calib_fill_rates(b, &p);
                calib_utc_now(p.measured_at, sizeof p.measured_at);
                if ((rc = calib_db_point_insert(db, gpu_id, &p, err))) goto fail;
                st->measured++;
                if (o->log)
                    fprintf(o->log, "point %s %s: median %.4g s p10 %.4g p90 %.4g  %.3g TFLOP/s %.3g GB/s\n", what, p.kernel,
                            p.median_s, p.p10_s, p.p90_s, p.tflops, p.gbps);
            }
        }
    }
out:
    calib_progress(o, st->planned, st->planned, st->stopped ? "stopped (max points)" : "done");
    rc = 0;
fail:
    for (int op = 0; op < CALIB_OP_COUNT; op++) free(grid[op]);
    return rc;
}
