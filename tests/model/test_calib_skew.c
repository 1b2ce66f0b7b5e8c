/* test_calib_skew — grouped GEMMs calibrated with skewed routing:
 * calib_group_rows' Zipf counts (deterministic, summing to groups·m, the
 * masked counts the contiguous layout's, the hottest expert's share rising
 * with s); the quick and full grids time every grouped point at skew 0 and
 * s = 1 (full also 1.5) in both layouts, tiny one skewed point; the CPU
 * backend times skewed points of both layouts and stores the FLOPs and
 * bytes of the skewed counts; the perf-db tables answer a calibrated skew
 * from its own rows, a skew between two linearly in s, and a perf-db
 * without skewed rows (the committed H200 dump) exactly as at skew 0; the
 * cost model's grouped-GEMM query carries expert_skew and prices from the
 * skewed rows. */
#include "test_util.h"
#include "test_model_util.h"
#include "test_perfdb_util.h"

#include "calib_backend.h"
#include "calib_db.h"
#include "calib_grid.h"
#include "calib_run.h"
#include "calib_table.h"
#include "model_catalog.h"
#include "model_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static calib_shape grouped(int64_t E, int64_t m, int64_t n, int64_t k, int64_t skew)
{
    calib_shape s;
    memset(&s, 0, sizeof s);
    s.groups = E, s.m = m, s.n = n, s.k = k, s.skew_milli = skew;
    return s;
}

static void test_zipf_rows(void)
{
    int64_t off[129], cnt[128], again[129];
    static const int64_t Es[] = {4, 8, 16, 128}, ms[] = {1, 3, 64, 512}, sks[] = {500, 1000, 1500, 4000};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 4; c++) {
                calib_shape s = grouped(Es[a], ms[b], 64, 64, sks[c]);
                int64_t E = s.groups, most = calib_group_rows(CALIB_OP_GROUPED_CONTIG, CALIB_LAYOUT_TIMED, &s, off);
                int64_t cap = calib_group_rows(CALIB_OP_GROUPED_MASKED, CALIB_LAYOUT_TIMED, &s, cnt);
                calib_group_rows(CALIB_OP_GROUPED_CONTIG, CALIB_LAYOUT_TIMED, &s, again);
                CHECK(memcmp(off, again, (size_t)(E + 1) * sizeof *off) == 0); /* no state: the same again */
                CHECK(off[0] == 0 && off[E] == E * s.m && most == cap);
                int64_t touched = 0, hot = -1;
                for (int64_t e = 0; e < E; e++) {
                    CHECK(cnt[e] == off[e + 1] - off[e] && cnt[e] >= 0 && cnt[e] <= cap);
                    touched += cnt[e] > 0;
                    if (cnt[e] == cap && hot < 0) hot = e;
                }
                CHECK(touched == calib_group_touched(&s));
                CHECK(hot == E / 2 || E * s.m < 2 * E); /* rank 0 sits mid-list (ties aside at a row or two) */
                /* The hottest share: E·m/H(E, s) within a row, H the generalised harmonic number. */
                double H = 0;
                for (int64_t r = 1; r <= E; r++) H += pow((double)r, -(double)s.skew_milli / 1000.0);
                CHECK_MSG(fabs((double)cap - (double)(E * s.m) / H) <= 1.0 + 1e-9, "E %lld m %lld s %lld: %lld vs %.2f",
                          (long long)E, (long long)s.m, (long long)s.skew_milli, (long long)cap,
                          (double)(E * s.m) / H);
            }
    /* A steeper skew gives the hot expert more, the balanced routing stays as timed before. */
    calib_shape s1 = grouped(32, 64, 64, 64, 1000), s2 = grouped(32, 64, 64, 64, 1500), s0 = grouped(32, 64, 64, 64, 0);
    int64_t hot1 = calib_group_rows(CALIB_OP_GROUPED_MASKED, 0, &s1, cnt);
    CHECK(calib_group_rows(CALIB_OP_GROUPED_MASKED, 0, &s2, cnt) > hot1);
    CHECK(calib_group_rows(CALIB_OP_GROUPED_MASKED, 0, &s0, cnt) == 64 && cnt[31] == 64);
    CHECK(calib_group_touched(&s0) == 32);
}

/* Every balanced point of the grid has its skewed twins, and nothing else is skewed. */
static void check_grid(calib_grid_kind g, calib_op op, const int64_t *skews, int32_t nsk)
{
    calib_shape *v = NULL;
    int64_t n = 0;
    sim_err e;
    REQUIRE(calib_grid_build(g, op, 0, &v, &n, &e) == 0);
    int64_t balanced = 0;
    for (int64_t i = 0; i < n; i++) {
        int known = 0;
        for (int32_t j = 0; j < nsk; j++) known |= v[i].skew_milli == skews[j];
        CHECK_MSG(known, "%s grid: skew_milli %lld", calib_grid_name(g), (long long)v[i].skew_milli);
        if (v[i].skew_milli) continue;
        balanced++;
        for (int32_t j = 1; j < nsk; j++) {
            calib_shape want = v[i];
            want.skew_milli = skews[j];
            int found = 0;
            for (int64_t q = 0; q < n && !found; q++) found = calib_shape_cmp(&v[q], &want) == 0;
            CHECK_MSG(found, "%s %s grid: m=%lld groups=%lld has no skew %lld twin", calib_grid_name(g),
                      calib_op_name(op), (long long)v[i].m, (long long)v[i].groups, (long long)skews[j]);
        }
    }
    CHECK(n == balanced * nsk && balanced > 0);
    free(v);
}

static void test_grid_has_both_skews(void)
{
    static const int64_t quick[] = {0, 1000}, full[] = {0, 1000, 1500};
    const calib_op ops[2] = {CALIB_OP_GROUPED_CONTIG, CALIB_OP_GROUPED_MASKED};
    for (int i = 0; i < 2; i++) {
        check_grid(CALIB_GRID_QUICK, ops[i], quick, 2);
        check_grid(CALIB_GRID_FULL, ops[i], full, 3);
        /* Tiny stays small: its two balanced points and one skewed. */
        calib_shape *v = NULL;
        int64_t n = 0, skewed = 0;
        sim_err e;
        REQUIRE(calib_grid_build(CALIB_GRID_TINY, ops[i], 0, &v, &n, &e) == 0);
        for (int64_t j = 0; j < n; j++) skewed += v[j].skew_milli == 1000;
        CHECK(n == 3 && skewed == 1);
        free(v);
        /* The check cases cover the skewed variant the grids time. */
        const calib_check_case *c;
        int32_t nc = calib_check_cases(ops[i], &c), has = 0;
        for (int32_t j = 0; j < nc; j++) {
            char var[64];
            calib_variant(ops[i], &c[j].shape, var, sizeof var);
            has |= strcmp(var, "skewed routing") == 0;
        }
        CHECK(has);
    }
}

typedef struct {
    int64_t skewed, checked;
} cpu_ctx;

/* A stored skewed point's TFLOP/s and GB/s are the skewed counts' work
 * over its median: FLOPs 2·n·k per row, bytes the rows in and out and the
 * weights of the experts that got rows. */
static int cpu_point(void *vctx, int64_t gpu_id, const calib_point *p)
{
    cpu_ctx *x = vctx;
    (void)gpu_id;
    if (p->shape.skew_milli == 0) return 0;
    x->skewed++;
    int64_t rows[64];
    REQUIRE_OR(p->shape.groups <= 63, return 1);
    calib_group_rows(p->op, CALIB_LAYOUT_TIMED, &p->shape, rows);
    double r = 0, touched = 0, n = (double)p->shape.n, k = (double)p->shape.k;
    for (int64_t e = 0; e < p->shape.groups; e++) {
        int64_t c = p->op == CALIB_OP_GROUPED_CONTIG ? rows[e + 1] - rows[e] : rows[e];
        r += (double)c, touched += c > 0;
    }
    calib_dtype dt = calib_dtype_parse(p->dtype);
    double eb = calib_dtype_bytes(dt), ab = calib_dtype_act_bytes(dt);
    double flops = 2.0 * r * n * k, bytes = touched * k * n * eb + r * (k + n) * ab;
    CHECK(r == (double)(p->shape.groups * p->shape.m) && touched == (double)calib_group_touched(&p->shape));
    CHECK_NEAR(p->tflops, flops / p->median_s * 1e-12, 1e-9 * p->tflops);
    CHECK_NEAR(p->gbps, bytes / p->median_s * 1e-9, 1e-9 * p->gbps);
    x->checked += isfinite(p->check_err) && p->check_err <= 1.0;
    return 0;
}

static void test_cpu_backend_skewed_point(void)
{
    calib_backend b;
    sim_err e = {""};
    REQUIRE_MSG(calib_backend_cpu_create(&b, &e) == 0, "%s", e.msg);
    /* One skewed point of each layout, prepared, run and checked alone. */
    calib_shape s = grouped(16, 3, 64, 136, 1500); /* cold experts empty */
    const calib_op ops[2] = {CALIB_OP_GROUPED_CONTIG, CALIB_OP_GROUPED_MASKED};
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(b.prepare(b.state, ops[i], 0, &s, CALIB_LAYOUT_TIMED, &e) == 0, "%s", e.msg);
        double t = 0;
        CHECK(b.run(b.state, &t, &e) == 0 && t > 0);
        calib_check_result r;
        CHECK_MSG(b.check(b.state, &r, &e) == 0, "%s", e.msg);
        CHECK_MSG(r.n > 0 && r.worst <= 1.0 && r.n_bad == 0 && r.canary_broken == 0,
                  "%s skewed check: worst %g of %lld elements (%lld bad)", calib_op_name(ops[i]), r.worst,
                  (long long)r.n, (long long)r.n_bad);
        b.release(b.state);
    }
    /* The tiny grid end to end: its skewed points stored with their work. */
    calib_db *db = NULL;
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    calib_run_opts o;
    memset(&o, 0, sizeof o);
    o.grid = CALIB_GRID_TINY;
    o.ops_mask = (1u << CALIB_OP_GROUPED_CONTIG) | (1u << CALIB_OP_GROUPED_MASKED);
    o.reps = 5;
    calib_run_stats st;
    CHECK_MSG(calib_run(&b, db, &o, &st, &e) == 0, "%s", e.msg);
    CHECK(st.failed == 0 && st.checks_failed == 0 && st.measured == 6);
    cpu_ctx x = {0, 0};
    CHECK(calib_db_point_foreach(db, 0, -1, cpu_point, &x, &e) == 0);
    CHECK(x.skewed == 2 && x.checked == 2);
    calib_db_close(db);
    b.destroy(b.state);
}

static void add_row(calib_db *db, int64_t gid, calib_op op, calib_shape s, double t)
{
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = op;
    snprintf(p.dtype, sizeof p.dtype, "bf16"), snprintf(p.kernel, sizeof p.kernel, "test");
    p.shape = s, p.reps = 1, p.median_s = p.p10_s = p.p90_s = t;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    sim_err e = {""};
    CHECK_MSG(calib_db_point_insert(db, gid, &p, &e) == 0, "%s", e.msg);
}

/* A roofline-like latency, so the fitted model has something to fit. */
static double base_s(calib_op op, const calib_shape *s)
{
    return 4e-6 + calib_op_flops(op, s) / 4e14 + calib_op_bytes(op, CALIB_DTYPE_BF16, s) / 2.5e12;
}

static const int64_t GRID_M[] = {1, 4, 16, 64, 256, 1024};

/* Grouped rows of (E, n, k) at skew 0 and, when `skewed`, at 1000 taking
 * twice as long. */
static void add_series(calib_db *db, int64_t gid, calib_op op, int64_t E, int64_t n, int64_t k, int skewed)
{
    for (size_t i = 0; i < sizeof GRID_M / sizeof GRID_M[0]; i++) {
        calib_shape s = grouped(E, GRID_M[i], n, k, 0);
        double t = base_s(op, &s);
        add_row(db, gid, op, s, t);
        s.skew_milli = 1000;
        if (skewed) add_row(db, gid, op, s, 2.0 * t);
    }
}

static void test_lookup_picks_skewed_rows(void)
{
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &db, &e) == 0);
    int64_t gid = test_perfdb_h100(db);
    add_series(db, gid, CALIB_OP_GROUPED_MASKED, 8, 4096, 7168, 1);
    calib_table *t = NULL;
    REQUIRE_MSG(calib_table_build(db, gid, NULL, NULL, 132, &t, &e) == 0, "%s", e.msg);
    const calib_series *s0 = calib_table_series(t, CALIB_OP_GROUPED_MASKED, "bf16");
    REQUIRE(s0 != NULL);
    const calib_series *s1 = calib_series_skew_next(s0);
    CHECK(calib_series_skew_milli(s0) == 0 && s1 && calib_series_skew_milli(s1) == 1000);
    CHECK(calib_series_skew_next(s1) == NULL && calib_series_skew_first(s1) == s0);
    calib_memo *memo = NULL;
    REQUIRE(calib_memo_create(10, &memo, &e) == 0);
    calib_shape q = grouped(8, 64, 4096, 7168, 0);
    const double t0 = base_s(CALIB_OP_GROUPED_MASKED, &q);
    calib_table_status st;
    /* Measured skews: each its own row, from either end of the chain, memo or not. */
    CHECK(calib_series_lookup(s0, &q, &st) == t0 && st == CALIB_TABLE_MEASURED);
    q.skew_milli = 1000;
    CHECK(calib_series_lookup(s0, &q, &st) == 2.0 * t0 && st == CALIB_TABLE_MEASURED);
    CHECK(calib_series_lookup_memo(s1, &q, memo, &st) == 2.0 * t0 && st == CALIB_TABLE_MEASURED);
    /* Between: linear in s; beyond the highest: the highest (no extrapolation). */
    q.skew_milli = 250;
    CHECK_NEAR(calib_series_lookup(s0, &q, &st), 1.25 * t0, 1e-12 * t0);
    CHECK(st == CALIB_TABLE_INTERP);
    CHECK(calib_series_lookup_memo(s0, &q, memo, NULL) == calib_series_lookup(s0, &q, NULL));
    q.skew_milli = 2500;
    CHECK(calib_series_lookup(s0, &q, &st) == 2.0 * t0 && st == CALIB_TABLE_MEASURED);
    /* Off the m grid: the blend of each skew's own answer there. */
    calib_shape off = grouped(8, 100, 4096, 7168, 600), a = off, b = off;
    a.skew_milli = 0, b.skew_milli = 1000;
    double ta = calib_series_lookup(s0, &a, NULL), tb = calib_series_lookup(s1, &b, NULL);
    CHECK(tb > ta);
    CHECK_NEAR(calib_series_lookup(s1, &off, NULL), ta + 0.6 * (tb - ta), 1e-12 * tb);
    calib_memo_free(memo);
    calib_table_free(t);
    calib_db_close(db);
}

/* The committed H200 dump has no skewed rows: any skew a query carries
 * answers exactly (bit for bit, status too) what skew 0 answers. */
static void test_no_skewed_rows_unchanged(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/calib/data/h200-sxm-2026-11-29.sql", test_src_dir());
    calib_db *db = NULL;
    sim_err e = {""};
    REQUIRE_MSG(calib_db_open_any(path, &db, &e) == 0, "%s", e.msg);
    int64_t gid = 0;
    REQUIRE(calib_db_gpu_find(db, "H200", "gpu", &gid, &e) == 0);
    calib_table *t = NULL;
    REQUIRE_MSG(calib_table_build(db, gid, NULL, NULL, 0, &t, &e) == 0, "%s", e.msg);
    calib_memo *memo = NULL;
    REQUIRE(calib_memo_create(10, &memo, &e) == 0);
    const calib_op ops[2] = {CALIB_OP_GROUPED_CONTIG, CALIB_OP_GROUPED_MASKED};
    static const int64_t Es[] = {8, 20, 32, 256}, ms[] = {1, 7, 64, 300, 512, 20000};
    static const int64_t nk[][2] = {{4096, 7168}, {7168, 2048}, {3000, 5000}};
    static const int64_t sks[] = {1, 500, 1000, 1200, 1500, 4000};
    int64_t compared = 0;
    for (int i = 0; i < 2; i++) {
        const calib_series *s = calib_table_series(t, ops[i], "bf16");
        REQUIRE(s != NULL);
        CHECK(calib_series_skew_next(s) == NULL && calib_series_skew_milli(s) == 0);
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 6; b++)
                for (size_t c = 0; c < 3; c++) {
                    calib_shape q = grouped(Es[a], ms[b], nk[c][0], nk[c][1], 0);
                    calib_table_status st0, st;
                    double t0 = calib_series_lookup(s, &q, &st0);
                    for (size_t k = 0; k < 6; k++) {
                        q.skew_milli = sks[k];
                        double t1 = calib_series_lookup(s, &q, &st), t2 = calib_series_lookup_memo(s, &q, memo, NULL);
                        CHECK(memcmp(&t0, &t1, sizeof t0) == 0 && memcmp(&t0, &t2, sizeof t0) == 0 && st == st0);
                        compared++;
                    }
                }
    }
    CHECK(compared == 2 * 4 * 6 * 3 * 6);
    calib_memo_free(memo);
    calib_table_free(t);
    calib_db_close(db);
}

/* experts_gate_up's time for a decode of 64 requests under Qwen3-235B
 * (bf16, TP8 × EP8, contiguous grouped GEMMs) at expert_skew, priced from
 * db; 0 when it is not priced from the perf-db. */
static double experts_time(calib_db *db, double expert_skew)
{
    model_spec m;
    model_gpu g;
    model_cost *c = NULL;
    sim_err e = {""};
    REQUIRE_OR(model_catalog_model("qwen3-235b-a22b", &m, &e) == 0 && model_catalog_gpu("h100-sxm", &g, &e) == 0,
               return 0);
    model_layout l = {.tp = 8, .pp = 1, .dp = 1, .ep = 8, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8, .moe_gemm = MODEL_MOE_GEMM_CONTIGUOUS, .expert_skew = expert_skew};
    REQUIRE_MSG_OR(model_cost_create(&m, &g, &l, &c, &e) == 0, return 0, "%s", e.msg);
    double t = 0;
    if (model_cost_set_db(c, db, NULL, &e) == 0) {
        model_op ops[256];
        int32_t n = 0;
        model_batch dec = {0, NULL, 64, 64 * 1000, 0};
        model_cost_breakdown(c, &dec, ops, 256, &n, NULL);
        const model_op *op = test_find_op(ops, n < 256 ? n : 256, "experts_gate_up");
        if (op && op->source == MODEL_SRC_DB) t = op->time_s;
    } else {
        CHECK_MSG(0, "%s", e.msg);
    }
    model_cost_destroy(c);
    return t;
}

static void test_cost_model_expert_skew(void)
{
    calib_db *plain = NULL, *skewed = NULL;
    sim_err e = {""};
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &plain, &e) == 0);
    REQUIRE(calib_db_open(":memory:", CALIB_DB_CREATE, &skewed, &e) == 0);
    /* Qwen3-235B on 8 ranks: 16 local experts, gate_up n 3072 k 4096, down n 4096 k 1536. */
    calib_db *dbs[2] = {plain, skewed};
    for (int i = 0; i < 2; i++) {
        int64_t gid = test_perfdb_h100(dbs[i]);
        add_series(dbs[i], gid, CALIB_OP_GROUPED_CONTIG, 16, 3072, 4096, i);
        add_series(dbs[i], gid, CALIB_OP_GROUPED_CONTIG, 16, 4096, 1536, i);
    }
    /* The same routing (expert_skew, so the same rows), two perf-dbs: the
     * skewed rows take twice as long, and the query lands on them (off
     * the m grid, within the 0.1 % the skewed series' own fit leaves: its
     * bytes count only the experts that got rows). */
    const double at[3] = {1.0, 0.5, 2.0}, ratio[3] = {2.0, 1.5, 2.0};
    for (int i = 0; i < 3; i++) {
        double tp = experts_time(plain, at[i]), ts = experts_time(skewed, at[i]);
        CHECK_MSG(tp > 0 && ts > 0, "experts_gate_up not priced from the perf-db (%g, %g)", tp, ts);
        CHECK_MSG(fabs(ts / tp / ratio[i] - 1.0) < 1e-3, "expert_skew %g: %.9g / %.9g = %.9g, expected %g", at[i],
                  ts, tp, ts / tp, ratio[i]);
    }
    /* Balanced routing reads the skew-0 rows whatever else the perf-db holds. */
    CHECK(experts_time(plain, 0.0) == experts_time(skewed, 0.0));
    calib_db_close(plain);
    calib_db_close(skewed);
}

static const test_case cases[] = {
    {"zipf_rows", test_zipf_rows},
    {"grid_has_both_skews", test_grid_has_both_skews},
    {"cpu_backend_skewed_point", test_cpu_backend_skewed_point},
    {"lookup_picks_skewed_rows", test_lookup_picks_skewed_rows},
    {"no_skewed_rows_unchanged", test_no_skewed_rows_unchanged},
    {"cost_model_expert_skew", test_cost_model_expert_skew},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_calib_skew", cases);
}
