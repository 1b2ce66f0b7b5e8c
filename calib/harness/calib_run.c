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

typedef struct {
    int32_t dropped, runs;
    uint64_t reasons;      /* union of the dropped samples' reasons */
    int32_t sm_mhz, mem_mhz; /* median clocks of the kept samples (0: unknown) */
    int32_t l2_cold;       /* −1 unknown, else the backend's word for the last sample */
} calib_time_info;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Times one prepared point into p (reps ≥ 1); with `adaptive` the
 * repetitions shrink to fit CALIB_POINT_BUDGET_S. Samples the backend says
 * ran during a slowdown are dropped and retaken (up to 3·reps runs). */
static int calib_time_point(calib_backend *b, int32_t warmup, int32_t reps, int adaptive, calib_point *p,
                            calib_time_info *ti, sim_err *err)
{
    double *t = NULL, dummy = 0;
    int32_t *smc = NULL, *memc = NULL;
    calib_stats s;
    calib_sample smp;
    int rc = 0;
    memset(ti, 0, sizeof *ti);
    ti->l2_cold = -1;
    for (int32_t i = 0; i < warmup && !rc; i++) {
        rc = b->run(b->state, &dummy, err);
        if (adaptive && dummy > CALIB_POINT_BUDGET_S / CALIB_MIN_REPS) break; /* long enough to be warm */
    }
    if (!rc && adaptive && dummy > 0 && dummy * reps > CALIB_POINT_BUDGET_S) {
        int32_t fit = (int32_t)(CALIB_POINT_BUDGET_S / dummy);
        reps = fit > CALIB_MIN_REPS ? fit : CALIB_MIN_REPS < reps ? CALIB_MIN_REPS : reps;
    }
    if (rc) return rc;
    t = malloc((size_t)reps * sizeof *t);
    smc = malloc((size_t)reps * sizeof *smc);
    memc = malloc((size_t)reps * sizeof *memc);
    if (!t || !smc || !memc) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto out;
    }
    int32_t kept = 0, nclk = 0;
    while (kept < reps && ti->runs < 3 * reps && !rc) {
        double x = 0;
        if ((rc = b->run(b->state, &x, err))) break;
        ti->runs++;
        memset(&smp, 0, sizeof smp);
        if (b->sample) b->sample(b->state, &smp);
        if (smp.valid && smp.throttled) {
            ti->dropped++;
            ti->reasons |= smp.reasons;
            continue;
        }
        if (smp.valid) smc[nclk] = smp.sm_mhz, memc[nclk] = smp.mem_mhz, nclk++, ti->l2_cold = smp.l2_cold;
        t[kept++] = x;
    }
    if (rc) goto out;
    int32_t need = reps < CALIB_MIN_REPS ? reps : CALIB_MIN_REPS;
    if (kept < need) {
        rc = sim_err_set(err, SIM_EIO, "the GPU was slowed down (clock-event reasons 0x%llx) in %d of %d samples",
                         (unsigned long long)ti->reasons, (int)ti->dropped, (int)ti->runs);
        goto out;
    }
    if (nclk > 0) {
        qsort(smc, (size_t)nclk, sizeof *smc, cmp_i32);
        qsort(memc, (size_t)nclk, sizeof *memc, cmp_i32);
        ti->sm_mhz = smc[nclk / 2], ti->mem_mhz = memc[nclk / 2];
    }
    if (calib_stats_summarise(t, (size_t)kept, &s) != 0) rc = sim_err_set(err, SIM_EINVAL, "no samples");
    if (!rc) {
        p->reps = kept;
        p->median_s = s.median, p->p10_s = s.p10, p->p90_s = s.p90;
    }
out:
    free(t), free(smc), free(memc);
    return rc;
}

static void calib_fill_rates(calib_backend *b, calib_point *p)
{
    calib_dtype fmt = calib_dtype_parse(p->dtype);
    double fl = calib_op_flops(p->op, &p->shape), by = calib_op_bytes(p->op, fmt, &p->shape);
    double t = p->median_s > 0 ? p->median_s : NAN;
    p->tflops = fl > 0 ? fl / t * 1e-12 : NAN;
    p->gbps = by > 0 ? by / t * 1e-9 : NAN;
    double pf = b->peak_flops ? b->peak_flops(b->state, fmt) : 0.0;
    /* Fraction of the roofline: the time the op would take at peak (compute
     * or bandwidth, whichever binds) over the measured time. */
    double ideal = calib_op_ideal_s(p->op, fmt, &p->shape, pf, b->peak_bw);
    p->frac_of_peak = ideal > 0 ? ideal / t : NAN;
}

/* Checks every case of (op, kernel); returns 1 when the kernel may be
 * timed (no case failed, at least one passed — or a library reference
 * without a check). */
static int calib_check_kernel(calib_backend *b, const calib_run_opts *o, calib_op op, int32_t ki,
                              const calib_kernel_desc *kd, calib_run_stats *st)
{
    const calib_check_case *cases;
    int32_t nc = calib_check_cases(op, &cases);
    int passed = 0, failed = 0, unchecked = 0;
    for (int32_t ci = 0; ci < nc; ci++) {
        calib_shape cs = cases[ci].shape;
        calib_check_result r;
        char shape_txt[160], detail[400];
        sim_err cerr = {{0}};
        calib_check_init(&r, 0, 0);
        calib_shape_format(&cs, shape_txt, sizeof shape_txt);
        int crc = b->prepare(b->state, op, ki, &cs, cases[ci].layout, &cerr);
        int na = crc == SIM_EINVAL; /* the kernel does not take this shape */
        if (!crc) crc = b->check(b->state, &r, &cerr);
        b->release(b->state);
        const char *verdict;
        if (na) verdict = "n/a", snprintf(detail, sizeof detail, "%.399s", cerr.msg);
        else if (crc == SIM_ENOTSUP) verdict = "SKIP", st->checks_skipped++, unchecked++, snprintf(detail, sizeof detail, "%.399s", cerr.msg);
        else if (crc) verdict = "FAIL", st->checks_failed++, failed++, snprintf(detail, sizeof detail, "%.399s", cerr.msg);
        else {
            int ok = calib_check_passed(&r);
            verdict = ok ? "PASS" : "FAIL";
            if (ok) st->checks_passed++, passed++;
            else st->checks_failed++, failed++;
            calib_check_format(&r, detail, sizeof detail);
        }
        if (o->log)
            fprintf(o->log, "check %-15s %-28s %s [%s; %s] %s\n", calib_op_name(op), kd->kernel, verdict, cases[ci].what,
                    shape_txt, detail);
    }
    if (nc == 0) { /* no cases (all-reduce): a library reference is timed unchecked */
        st->checks_skipped++;
        if (o->log) fprintf(o->log, "check %-15s %-28s SKIP [no check cases for this op]\n", calib_op_name(op), kd->kernel);
        return kd->is_library;
    }
    if (failed) return 0;
    if (passed) return 1;
    return unchecked && kd->is_library; /* a library reference without a check (NCCL) is still timed */
}

/* Op op's kernels on this backend (and why there are none); 0 when
 * ops_mask leaves the op out. */
static int op_kernels(calib_backend *b, const calib_run_opts *o, int op, const calib_kernel_desc **ks, int32_t *nk,
                      const char **why)
{
    if (o->ops_mask && !(o->ops_mask & (1u << op))) return 0;
    b->kernels(b->state, (calib_op)op, ks, nk, why);
    return 1;
}

/* The next name of a comma-separated list at *p (its length in *len),
 * *p moved past it; NULL at the end. */
static const char *list_next(const char **p, size_t *len)
{
    const char *name = *p;
    if (!name || !*name) return NULL;
    const char *e = strchr(name, ',');
    *len = e ? (size_t)(e - name) : strlen(name);
    *p = e ? e + 1 : NULL;
    return name;
}

/* 1 when the name of length len is kernel. */
static int name_is(const char *name, size_t len, const char *kernel)
{
    return strlen(kernel) == len && strncmp(name, kernel, len) == 0;
}

/* 1 when the comma-separated list names kernel (NULL list: every kernel). */
static int kernel_listed(const char *list, const char *kernel)
{
    size_t len;
    for (const char *p = list, *name; (name = list_next(&p, &len));)
        if (name_is(name, len, kernel)) return 1;
    return list == NULL;
}

/* Every name in o->kernels must be a kernel of this backend (a mistyped
 * name would otherwise check and time nothing and pass), and the list must
 * select at least one kernel of the selected ops. */
static int kernels_validate(calib_backend *b, const calib_run_opts *o, sim_err *err)
{
    calib_run_opts all = *o;
    all.ops_mask = 0;
    int selected = 0;
    size_t len;
    for (const char *p = o->kernels, *name; (name = list_next(&p, &len));) {
        int found = 0;
        for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
            const calib_kernel_desc *ks;
            int32_t nk;
            const char *why;
            op_kernels(b, &all, op, &ks, &nk, &why);
            for (int32_t ki = 0; ki < nk; ki++)
                if (name_is(name, len, ks[ki].kernel)) {
                    found = 1;
                    selected |= !o->ops_mask || (o->ops_mask & (1u << op));
                }
        }
        if (!found)
            return sim_err_set(err, SIM_EINVAL, "--kernels: the %s backend has no kernel named '%.*s' (servesim "
                               "calibrate --list-kernels lists them)", b->name, (int)(len > 200 ? 200 : len), name);
    }
    if (o->kernels && !selected)
        return sim_err_set(err, SIM_EINVAL, "--kernels names no kernel of the ops --ops selects");
    return 0;
}

int calib_run_list_kernels(calib_backend *b, uint32_t ops_mask, FILE *out, sim_err *err)
{
    calib_run_opts o;
    memset(&o, 0, sizeof o);
    o.ops_mask = ops_mask;
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        if (!op_kernels(b, &o, op, &ks, &nk, &why)) continue;
        for (int32_t ki = 0; ki < nk; ki++)
            if (fprintf(out, "%s %s %s %d %s\n", calib_op_name((calib_op)op), ks[ki].kernel, ks[ki].dtype,
                        (int)ks[ki].version, ks[ki].is_library ? "library" : "bundled") < 0)
                return sim_err_set(err, SIM_EIO, "cannot write the kernel list");
    }
    return fflush(out) == 0 ? 0 : sim_err_set(err, SIM_EIO, "cannot write the kernel list");
}

/* What one run carries from point to point. */
typedef struct {
    calib_backend *b;
    calib_db *db;
    const calib_run_opts *o;
    calib_run_stats *st;
    int64_t gpu_id;
    int32_t warmup, reps;
    double budget;
    int64_t done; /* points through the progress bar */
} calib_run_ctx;

/* Plan: each op's grid, and grid sizes × kernels for the progress bar. */
static int calib_run_plan(calib_run_ctx *c, calib_shape **grid, int64_t *ngrid, sim_err *err)
{
    int rc;
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        if (!op_kernels(c->b, c->o, op, &ks, &nk, &why)) continue;
        if (nk == 0 || c->o->check_only) continue;
        int32_t chosen = 0;
        for (int32_t ki = 0; ki < nk; ki++) chosen += kernel_listed(c->o->kernels, ks[ki].kernel);
        if (chosen == 0) continue;
        if ((rc = calib_grid_build(c->o->grid, (calib_op)op, c->b->local_ranks, &grid[op], &ngrid[op], err))) return rc;
        c->st->planned += ngrid[op] * chosen;
    }
    return 0;
}

/* Prepares point p on kernel ki, checks it on its own data when the
 * reference fits the budget (*checked then 1), times it and releases it;
 * returns the point's failure, written to perr. */
static int calib_point_measure(calib_run_ctx *c, calib_point *p, int32_t ki, calib_time_info *ti, int *checked,
                               sim_err *perr)
{
    calib_backend *b = c->b;
    int prc = b->prepare(b->state, p->op, ki, &p->shape, CALIB_LAYOUT_TIMED, perr);
    if (!prc && c->budget > 0 && calib_op_check_cost(p->op, &p->shape) <= c->budget) {
        /* The point itself, on its own data, before its timings count. */
        calib_check_result r;
        calib_check_init(&r, 0, 0);
        int crc = b->check(b->state, &r, perr);
        if (!crc && !calib_check_passed(&r)) {
            char detail[400];
            calib_check_format(&r, detail, sizeof detail);
            prc = sim_err_set(perr, SIM_EINVAL, "failed its own check: %s", detail);
        } else if (!crc) {
            p->check_err = r.worst, *checked = 1;
        } else if (crc != SIM_ENOTSUP) {
            prc = crc;
        }
    }
    memset(ti, 0, sizeof *ti);
    ti->l2_cold = -1;
    if (!prc) prc = calib_time_point(b, c->warmup, c->reps, c->o->reps <= 0, p, ti, perr);
    b->release(b->state);
    return prc;
}

/* The log line of a measured point. */
static void calib_point_log(FILE *log, const char *what, const calib_point *p, int checked, const calib_time_info *ti)
{
    fprintf(log, "point %s %s: median %.4g s p10 %.4g p90 %.4g  %.3g TFLOP/s %.3g GB/s", what, p->kernel, p->median_s,
            p->p10_s, p->p90_s, p->tflops, p->gbps);
    if (checked) fprintf(log, "  checked %.3g of tolerance", p->check_err);
    else fprintf(log, "  unchecked (reference over budget)");
    if (ti->sm_mhz > 0) fprintf(log, "  sm %d MHz mem %d MHz", (int)ti->sm_mhz, (int)ti->mem_mhz);
    if (ti->dropped)
        fprintf(log, "  %d throttled samples dropped (reasons 0x%llx)", (int)ti->dropped, (unsigned long long)ti->reasons);
    if (ti->l2_cold >= 0) fprintf(log, "  %s", ti->l2_cold ? "cold L2" : "warm L2");
    fputc('\n', log);
}

/* One grid point of kernel ki: skipped when stored, else measured and
 * stored (a point that fails is logged and passed over). Returns 1 when the
 * run stops at max_points, a negative code on a perf-db error, else 0. */
static int calib_run_point(calib_run_ctx *c, calib_op op, int32_t ki, const calib_kernel_desc *kd,
                           const calib_shape *shape, sim_err *err)
{
    const calib_run_opts *o = c->o;
    calib_run_stats *st = c->st;
    calib_point p;
    char shape_txt[160], what[200];
    int exists = 0, rc;
    memset(&p, 0, sizeof p);
    p.op = op;
    snprintf(p.dtype, sizeof p.dtype, "%s", kd->dtype);
    snprintf(p.kernel, sizeof p.kernel, "%s", kd->kernel);
    p.kernel_version = kd->version;
    p.shape = *shape;
    p.check_err = NAN;
    calib_shape_format(&p.shape, shape_txt, sizeof shape_txt);
    snprintf(what, sizeof what, "%s %s %s", calib_op_name(p.op), p.dtype, shape_txt);
    calib_progress(o, c->done, st->planned, what);
    c->done++;
    if ((rc = calib_db_point_exists(c->db, c->gpu_id, &p, &exists, err))) return rc;
    if (exists) {
        st->skipped++;
        return 0;
    }
    if (o->max_points > 0 && st->measured >= o->max_points) {
        st->stopped = 1;
        return 1;
    }
    sim_err perr = {{0}};
    calib_time_info ti;
    int checked = 0;
    int prc = calib_point_measure(c, &p, ki, &ti, &checked, &perr);
    st->samples_dropped += ti.dropped;
    if (prc) { /* e.g. out of device memory at one shape: log, go on */
        st->failed++;
        if (o->log) fprintf(o->log, "fail  %s %s: %s\n", what, p.kernel, perr.msg);
        return 0;
    }
    calib_fill_rates(c->b, &p);
    calib_utc_now(p.measured_at, sizeof p.measured_at);
    if ((rc = calib_db_point_insert(c->db, c->gpu_id, &p, err))) return rc;
    st->measured++;
    st->points_checked += checked;
    if (o->log) calib_point_log(o->log, what, &p, checked, &ti);
    return 0;
}

int calib_run(calib_backend *b, calib_db *db, const calib_run_opts *o, calib_run_stats *st, sim_err *err)
{
    calib_gpu_id id;
    int rc;
    calib_shape *grid[CALIB_OP_COUNT] = {0};
    int64_t ngrid[CALIB_OP_COUNT] = {0};
    calib_run_ctx c = {b, db, o, st, 0, o->warmup > 0 ? o->warmup : b->default_warmup,
                       o->reps > 0 ? o->reps : b->default_reps,
                       o->check_budget == 0 ? CALIB_CHECK_BUDGET : o->check_budget, 0};
    memset(st, 0, sizeof *st);
    if ((rc = kernels_validate(b, o, err))) return rc;
    if ((rc = b->identity(b->state, &id, err))) return rc;
    if (!o->check_only) {
        if (!db) return sim_err_set(err, SIM_EINVAL, "calibration needs a perf-db");
        if ((rc = calib_db_gpu_ensure(db, &id, &c.gpu_id, err))) return rc;
    }
    if ((rc = calib_run_plan(&c, grid, ngrid, err))) goto fail;
    for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) {
        const calib_kernel_desc *ks;
        int32_t nk;
        const char *why;
        if (!op_kernels(b, o, op, &ks, &nk, &why)) continue;
        if (nk == 0 && o->log) fprintf(o->log, "skip  %-15s %s\n", calib_op_name((calib_op)op), why ? why : "");
        for (int32_t ki = 0; ki < nk; ki++) {
            if (!kernel_listed(o->kernels, ks[ki].kernel)) continue;
            /* Check first: a wrong kernel's timings must not count. */
            int pass = calib_check_kernel(b, o, (calib_op)op, ki, &ks[ki], st);
            if (o->check_only) continue;
            if (!pass) {
                c.done += ngrid[op];
                continue;
            }
            for (int64_t gi = 0; gi < ngrid[op]; gi++) {
                if ((rc = calib_run_point(&c, (calib_op)op, ki, &ks[ki], &grid[op][gi], err)) < 0) goto fail;
                if (rc) goto out;
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
