/* test_calib_check — what the calibration harness checks, on the CPU:
 *   - the check list covers every timed variant: for every grid (tiny,
 *     quick, full) and op, each grid shape's code path (calib_variant:
 *     attention head_dim template × GQA group, with and without a cached
 *     prefix) is among the check cases', and the edges are there (K and N
 *     tails, M = 1, unequal and empty contiguous groups, masked counts below
 *     the cap, decode splits left empty under the CPU's and the GPU's split
 *     rule, −inf LSE partials and an all-−inf row, rows shorter than a warp);
 *   - the comparison: per-element atol + rtol·|ref|, NaN (poison) never
 *     passes, −inf matches −inf, the worst index and value are reported,
 *     canaries catch an overrun, exact byte comparison;
 *   - the CPU backend runs every case of every kernel (all pass, n/a only
 *     where the fp8 GEMM cannot take the shape), and each small grid point
 *     is checked itself (check_err ≤ 1 stored) while a point over the budget
 *     stores check_err NULL;
 *   - samples the backend reports as throttled are dropped and retaken, and
 *     a point that stays throttled fails instead of being stored. */
#include "test_util.h"

#include "calib_backend.h"
#include "calib_check.h"
#include "calib_db.h"
#include "calib_grid.h"
#include "calib_nvml.h"
#include "calib_run.h"
#include "calib_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int case_has_variant(calib_op op, const char *v)
{
    const calib_check_case *c;
    int32_t n = calib_check_cases(op, &c);
    char buf[128];
    for (int32_t i = 0; i < n; i++) {
        calib_variant(op, &c[i].shape, buf, sizeof buf);
        if (strcmp(buf, v) == 0) return 1;
    }
    return 0;
}

static void test_coverage(void)
{
    sim_err err;
    for (int g = CALIB_GRID_TINY; g <= CALIB_GRID_FULL; g++)
        for (int op = 0; op < CALIB_OP_HARNESS_COUNT; op++) { /* the ops the harness times */
            if (op >= CALIB_OP_ALLREDUCE && op <= CALIB_OP_ALLTOALL) { /* NCCL: nothing of ours to check */
                /* Timed whenever the host has 2 GPUs or more: a grid over
                 * bytes at the local rank count, none without ranks. */
                calib_shape *sh = NULL;
                int64_t n = 0;
                CHECK(calib_grid_build((calib_grid_kind)g, (calib_op)op, 2, &sh, &n, &err) == 0);
                CHECK_MSG(n >= 3, "%s: %lld grid points at 2 ranks", calib_op_name((calib_op)op), (long long)n);
                for (int64_t i = 0; i < n; i++) CHECK(sh[i].ranks == 2 && sh[i].bytes >= 1024);
                free(sh);
                sh = NULL;
                CHECK(calib_grid_build((calib_grid_kind)g, (calib_op)op, 0, &sh, &n, &err) == 0 && n == 0);
                free(sh);
                continue;
            }
            const calib_check_case *c;
            CHECK_MSG(calib_check_cases((calib_op)op, &c) >= 1, "%s has no check case", calib_op_name((calib_op)op));
            calib_shape *sh = NULL;
            int64_t n = 0;
            CHECK(calib_grid_build((calib_grid_kind)g, (calib_op)op, 2, &sh, &n, &err) == 0);
            for (int64_t i = 0; i < n; i++) {
                char v[128], txt[160];
                calib_variant((calib_op)op, &sh[i], v, sizeof v);
                calib_shape_format(&sh[i], txt, sizeof txt);
                CHECK_MSG(case_has_variant((calib_op)op, v), "%s grid point %s (variant '%s') has no check case",
                          calib_op_name((calib_op)op), txt, v);
                if (op == CALIB_OP_GEMM) /* every GEMM point is one the fp8 kernel takes, so it is checked too */
                    CHECK(sh[i].k % 128 == 0 && sh[i].n % 8 == 0);
            }
            free(sh);
        }
    /* The variant names the code path. */
    calib_shape s = {.heads = 32, .kv_heads = 8, .head_dim = 128, .ctx = 4096};
    char v[64];
    calib_variant(CALIB_OP_ATTN_PREFILL, &s, v, sizeof v);
    CHECK(strcmp(v, "d=128 group=4 cached") == 0);
    calib_variant(CALIB_OP_GEMM, &s, v, sizeof v);
    CHECK(strcmp(v, "") == 0);

    const calib_check_case *c;
    int32_t n;
    int ktail = 0, ntail = 0, m1 = 0, mpast = 0;
    n = calib_check_cases(CALIB_OP_GEMM, &c);
    for (int32_t i = 0; i < n; i++) {
        ktail |= c[i].shape.k % 32 != 0, ntail |= c[i].shape.n % 128 != 0, m1 |= c[i].shape.m == 1;
        mpast |= c[i].shape.m > 128 && c[i].shape.m % 128 != 0;
    }
    CHECK(ktail && ntail && m1 && mpast);

    /* Work items (128-row tiles × 256-column N tiles, the Hopper rung's)
     * past an H100/H200's 132 SMs: its persistent CTAs take several, of
     * different experts. */
    int many_c = 0, many_m = 0;
    int unequal = 0, empty = 0, skew_c = 0;
    n = calib_check_cases(CALIB_OP_GROUPED_CONTIG, &c);
    for (int32_t i = 0; i < n; i++) {
        int64_t off[64], tiles = 0;
        CHECK(c[i].shape.groups < 64);
        calib_group_rows(CALIB_OP_GROUPED_CONTIG, c[i].layout, &c[i].shape, off);
        for (int64_t e = 0; e < c[i].shape.groups; e++) tiles += (off[e + 1] - off[e] + 127) / 128;
        many_c |= tiles * ((c[i].shape.n + 255) / 256) > 132;
        CHECK(off[0] == 0 && off[c[i].shape.groups] == c[i].shape.groups * c[i].shape.m);
        for (int64_t e = 0; e < c[i].shape.groups; e++) {
            CHECK(off[e + 1] >= off[e]);
            unequal |= c[i].layout == CALIB_LAYOUT_TIMED && !c[i].shape.skew_milli &&
                       off[e + 1] - off[e] != c[i].shape.m;
            empty |= off[e + 1] == off[e];
            /* Skewed: a hot expert past two 128-row tiles, starting off the tile grid. */
            skew_c |= c[i].shape.skew_milli > 0 && off[e + 1] - off[e] > 256 && off[e] % 128 != 0;
        }
    }
    CHECK(unequal && empty && skew_c && many_c);

    int below = 0, zero = 0, skew_m = 0;
    n = calib_check_cases(CALIB_OP_GROUPED_MASKED, &c);
    for (int32_t i = 0; i < n; i++) {
        int64_t cnt[64], tiles = 0;
        CHECK(c[i].shape.groups <= 64);
        int64_t most = calib_group_rows(CALIB_OP_GROUPED_MASKED, c[i].layout, &c[i].shape, cnt);
        /* The slot (the largest count) is the cap m but for a skewed routing. */
        CHECK(c[i].shape.skew_milli > 0 || most <= c[i].shape.m);
        const int64_t cap = c[i].shape.skew_milli > 0 ? most : c[i].shape.m;
        for (int64_t e = 0; e < c[i].shape.groups; e++) tiles += (cnt[e] + 127) / 128;
        many_m |= tiles * ((c[i].shape.n + 255) / 256) > 132;
        for (int64_t e = 0; e < c[i].shape.groups; e++) {
            CHECK(cnt[e] <= cap);
            below |= cnt[e] > 0 && cnt[e] < cap;
            zero |= cnt[e] == 0;
            /* Skewed: the hot expert's slot full past two tiles, its neighbour's at most half. */
            skew_m |= c[i].shape.skew_milli > 0 && cnt[e] == cap && cap > 256 &&
                      cnt[(e + 1) % c[i].shape.groups] <= cap / 2;
        }
    }
    CHECK(below && zero && skew_m && many_m);

    /* Prefill cases on both tensor-core rungs' tile grids (64 and 128 query
     * rows and keys), per head_dim: a query tile past the first after a
     * cached prefix off the key grid (the diagonal crosses two KV tiles)
     * with GQA, and a partial last query tile. */
    n = calib_check_cases(CALIB_OP_ATTN_PREFILL, &c);
    for (int32_t tile = 64; tile <= 128; tile *= 2)
        for (int32_t d = 64; d <= 128; d *= 2) {
            int off_grid = 0, partial = 0;
            for (int32_t i = 0; i < n; i++) {
                const calib_shape *p = &c[i].shape;
                if (p->head_dim != d) continue;
                off_grid |= p->m > tile && p->ctx % tile != 0 && p->heads > p->kv_heads;
                partial |= p->m > tile && p->m % tile != 0;
            }
            CHECK_MSG(off_grid && partial, "prefill d=%d: no case %s on the %d-row tile grid", (int)d,
                      off_grid ? "with a partial last query tile" : "past the first query tile behind an off-grid prefix",
                      (int)tile);
        }

    /* Empty decode splits under the CPU backend's 4 splits and the GPU's
     * rule on any GPU from 20 to 200 SMs. */
    n = calib_check_cases(CALIB_OP_ATTN_DECODE, &c);
    int cpu_empty = 0;
    for (int32_t i = 0; i < n; i++) cpu_empty |= calib_decode_has_empty_split(&c[i].shape, 16, 4);
    CHECK(cpu_empty);
    for (int32_t sms = 20; sms <= 200; sms++) {
        int gpu_empty = 0;
        for (int32_t i = 0; i < n; i++)
            gpu_empty |= calib_decode_has_empty_split(&c[i].shape, 16, calib_decode_splits(sms, &c[i].shape, 16));
        CHECK_MSG(gpu_empty, "no decode case leaves a split empty on a %d-SM GPU", (int)sms);
    }

    int neg = 0, all_row = 0, some_row = 0;
    n = calib_check_cases(CALIB_OP_LSE_MERGE, &c);
    for (int32_t i = 0; i < n; i++) {
        if (!(c[i].layout & CALIB_LAYOUT_NEG_INF_LSE)) continue;
        neg = 1;
        for (int64_t r = 0; r < c[i].shape.m; r++) {
            int64_t k = 0;
            for (int64_t p = 0; p < c[i].shape.ranks; p++) k += calib_lse_neg_inf(p, r, c[i].shape.ranks);
            all_row |= k == c[i].shape.ranks, some_row |= k > 0 && k < c[i].shape.ranks;
        }
    }
    CHECK(neg && all_row && some_row);

    int short_row = 0;
    n = calib_check_cases(CALIB_OP_SOFTMAX, &c);
    for (int32_t i = 0; i < n; i++) short_row |= c[i].shape.n < 32;
    CHECK(short_row);
    CHECK(calib_check_cases(CALIB_OP_ALLREDUCE, &c) == 0);
}

static void test_compare(void)
{
    calib_check_result r;
    float got[4] = {1.0f, 2.01f, -INFINITY, 4.0f}, ref[4] = {1.0f, 2.0f, -INFINITY, 4.0f};
    calib_check_init(&r, 0.0, 1e-2);
    calib_check_compare(&r, got, ref, 4, 100, "o");
    CHECK(calib_check_passed(&r));
    CHECK(r.worst_index == 101 && r.n == 4 && r.n_bad == 0);
    CHECK_NEAR(r.worst, 0.01 / 0.02, 1e-5);
    got[3] = 4.1f;
    calib_check_compare(&r, got, ref, 4, 0, "lse");
    CHECK(!calib_check_passed(&r));
    CHECK(r.worst_index == 3 && strcmp(r.what, "lse") == 0 && r.n_bad == 1);
    char buf[300];
    const char *b = buf;
    calib_check_format(&r, buf, sizeof buf);
    CHECK_CONTAINS(b, "at lse[3]: 4.1 vs 4");
    CHECK_CONTAINS(b, "1 of 8 over");

    /* An output poisoned and never written fails everywhere. */
    float poisoned[8];
    memset(poisoned, CALIB_POISON_BYTE, sizeof poisoned);
    float zeros[8] = {0};
    calib_check_init(&r, 1.0, 1.0);
    calib_check_compare(&r, poisoned, zeros, 8, 0, "o");
    CHECK(isnan(poisoned[0]) && r.n_bad == 8 && isinf(r.worst) && !calib_check_passed(&r));
    uint16_t bf = 0;
    memset(&bf, CALIB_POISON_BYTE, sizeof bf);
    CHECK((bf & 0x7f80) == 0x7f80 && (bf & 0x7f)); /* a bf16 NaN too */
    /* −inf where the reference is finite fails; nothing compared fails. */
    float a = -INFINITY, z = 0.0f;
    calib_check_init(&r, 1.0, 1.0);
    calib_check_compare(&r, &a, &z, 1, 0, "lse");
    CHECK(!calib_check_passed(&r));
    calib_check_init(&r, 1.0, 1.0);
    CHECK(!calib_check_passed(&r));

    unsigned char mem[64 + CALIB_CANARY_BYTES];
    calib_canary_fill(mem + 64, CALIB_CANARY_BYTES);
    CHECK(calib_canary_intact(mem + 64, CALIB_CANARY_BYTES));
    mem[64 + 17] ^= 1;
    CHECK(!calib_canary_intact(mem + 64, CALIB_CANARY_BYTES));
    calib_check_init(&r, 0, 0);
    calib_check_ratio(&r, 0.5, 0, 1, 1, "x");
    r.canary_broken = 1;
    CHECK(!calib_check_passed(&r));
    calib_check_format(&r, buf, sizeof buf);
    CHECK_CONTAINS(b, "guard canary overwritten");

    unsigned char x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 2, 3, 9, 5};
    calib_check_init(&r, 0, 0);
    calib_check_bytes(&r, x, x, 5, "dst");
    CHECK(calib_check_passed(&r) && r.n == 5);
    calib_check_bytes(&r, y, x, 5, "dst");
    CHECK(!calib_check_passed(&r) && r.worst_index == 3);
}

/* The CPU backend with a sample() that reports every `period`-th sample
 * throttled (period 1: all). */
typedef struct {
    int64_t calls, period;
} throttle_ctx;
static throttle_ctx g_throttle;

static void fake_sample(void *st, calib_sample *out)
{
    (void)st;
    memset(out, 0, sizeof *out);
    out->valid = 1, out->sm_mhz = 1980, out->mem_mhz = 3201, out->l2_cold = 1;
    g_throttle.calls++;
    if (g_throttle.period > 0 && g_throttle.calls % g_throttle.period == 0) out->throttled = 1, out->reasons = 0x20;
}

static int check_err_cb(void *ctx, int64_t gpu_id, const calib_point *p)
{
    int64_t *seen = ctx;
    (void)gpu_id;
    if (isnan(p->check_err)) seen[1]++;
    else if (p->check_err >= 0 && p->check_err <= 1.0) seen[0]++;
    return 0;
}

static void test_cpu_run(void)
{
    sim_err err = {{0}};
    calib_backend b;
    CHECK(calib_backend_cpu_create(&b, &err) == 0);
    char logp[] = "/tmp/servesim_check_log_XXXXXX";
    int fd = mkstemp(logp);
    CHECK(fd >= 0);
    FILE *log = fd >= 0 ? fdopen(fd, "w+") : NULL;
    calib_run_opts o;
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY, o.check_only = 1, o.log = log;
    calib_run_stats st;
    CHECK_MSG(calib_run(&b, NULL, &o, &st, &err) == 0, "%s", err.msg);
    int64_t want = 0;
    for (int op = 0; op < CALIB_OP_COUNT; op++) {
        const calib_kernel_desc *ks;
        const calib_check_case *c;
        int32_t nk;
        const char *why;
        b.kernels(b.state, (calib_op)op, &ks, &nk, &why);
        want += (int64_t)nk * calib_check_cases((calib_op)op, &c);
    }
    CHECK_MSG(st.checks_failed == 0, "%lld check cases failed", (long long)st.checks_failed);
    /* The fp8 block GEMM cannot take K = 200 or K = 64, the MXFP8 one K = 200. */
    CHECK(st.checks_passed == want - 3);
    if (log) {
        char line[1024];
        int64_t lines = 0, na = 0;
        rewind(log);
        while (fgets(line, sizeof line, log))
            if (strncmp(line, "check ", 6) == 0) {
                lines++;
                if (strstr(line, " n/a ")) {
                    na++;
                    CHECK((strstr(line, "kern_gemm_fp8_block_ref") && (strstr(line, "K tail") || strstr(line, "persistent"))) ||
                          (strstr(line, "kern_gemm_mxfp8_ref") && strstr(line, "K tail")));
                } else {
                    CHECK_MSG(strstr(line, " PASS [") != NULL, "%s", line);
                    CHECK(strstr(line, "of tolerance at ") != NULL);
                }
            }
        CHECK(lines == want && na == 3);
        fclose(log);
    }
    unlink(logp);

    /* Per-point checks: every tiny point is checked itself; with a budget
     * below every point's cost none is, and check_err stays NULL. */
    calib_db *db = NULL;
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &err) == 0);
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY, o.ops_mask = (1u << CALIB_OP_GEMM) | (1u << CALIB_OP_SOFTMAX), o.reps = 2;
    CHECK(calib_run(&b, db, &o, &st, &err) == 0);
    CHECK(st.measured > 0 && st.points_checked == st.measured && st.failed == 0);
    int64_t seen[2] = {0, 0}; /* checked (finite, ≤ 1), unchecked (NULL) */
    CHECK(calib_db_point_foreach(db, 0, -1, check_err_cb, seen, &err) == 0);
    CHECK(seen[0] == st.measured && seen[1] == 0);
    calib_db_close(db);
    db = NULL;
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &err) == 0);
    o.check_budget = 1.0; /* one operation: no point is that small */
    CHECK(calib_run(&b, db, &o, &st, &err) == 0);
    CHECK(st.measured > 0 && st.points_checked == 0);
    seen[0] = seen[1] = 0;
    CHECK(calib_db_point_foreach(db, 0, -1, check_err_cb, seen, &err) == 0);
    CHECK(seen[0] == 0 && seen[1] == st.measured);
    calib_db_close(db);

    /* Throttled samples: every third dropped and retaken; all throttled
     * fails the points. */
    b.sample = fake_sample;
    g_throttle.calls = 0, g_throttle.period = 3;
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &err) == 0);
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY, o.ops_mask = 1u << CALIB_OP_SOFTMAX, o.reps = 6;
    CHECK(calib_run(&b, db, &o, &st, &err) == 0);
    CHECK(st.measured > 0 && st.failed == 0);
    CHECK(st.samples_dropped >= 2 * st.measured); /* 6 kept of 9 runs per point */
    calib_db_close(db);
    g_throttle.period = 1;
    CHECK(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &err) == 0);
    CHECK(calib_run(&b, db, &o, &st, &err) == 0);
    CHECK(st.measured == 0 && st.failed == st.planned && st.planned > 0);
    calib_db_close(db);
    b.destroy(b.state);
}

/* NVML: the slowdown classification and names; opening it where there is
 * no driver fails cleanly (where there is one, the driver string is read). */
static void test_nvml(void)
{
    CHECK(!calib_nvml_slowdown(0x0) && !calib_nvml_slowdown(0x1) && !calib_nvml_slowdown(0x2 | 0x10 | 0x100));
    CHECK(calib_nvml_slowdown(0x4) && calib_nvml_slowdown(0x8) && calib_nvml_slowdown(0x20) && calib_nvml_slowdown(0x40) &&
          calib_nvml_slowdown(0x80));
    char buf[128];
    const char *b = buf;
    calib_nvml_reason_names(0x4 | 0x40, buf, sizeof buf);
    CHECK(strcmp(b, "sw_power_cap,hw_thermal") == 0);
    calib_nvml_reason_names(0, buf, sizeof buf);
    CHECK(strcmp(b, "none") == 0);
    calib_nvml *n = NULL;
    sim_err err = {{0}};
    int rc = calib_nvml_open(NULL, &n, &err);
    if (rc == 0) {
        calib_nvml_driver(n, buf, sizeof buf);
        printf("test_calib_check: NVML present, driver '%s'\n", buf);
        calib_nvml_close(n);
    } else {
        CHECK(rc == SIM_ENOTSUP && n == NULL);
        CHECK_CONTAINS(err.msg, "NVML");
    }
}

/* p10 ≤ median ≤ p90 whatever the rounding of the interpolations (two or
 * three nearly equal samples, as a short --reps run gives). */
static void test_stats_order(void)
{
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        double x = 1e-6 * (1.0 + i * 1.37e-4), y[3] = {x, nextafter(x, 1.0), nextafter(nextafter(x, 1.0), 1.0)};
        calib_stats st;
        for (size_t n = 2; n <= 3; n++) {
            double v[3] = {y[0], y[1], y[2]};
            if (calib_stats_summarise(v, n, &st) != 0 || !(st.p10 <= st.median && st.median <= st.p90)) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d summaries out of order", bad);
}

static const test_case cases[] = {
    {"stats_order", test_stats_order},
    {"nvml", test_nvml},
    {"coverage", test_coverage},
    {"compare", test_compare},
    {"cpu_run", test_cpu_run},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_calib_check", cases);
}
