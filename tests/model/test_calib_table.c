/* test_calib_table — in-memory perf-db tables: the fitted floor + rate
 * model recovers known coefficients, measured shapes come back exactly,
 * lookups between and beyond grid points stay above the floor and within
 * the residual band of the fitted model, every varying dimension (batch,
 * head_dim for attention) is interpolated, engines' kernels take
 * precedence, invalid medians never price, and the memo answers the same. */
#include "calib_db.h"
#include "calib_table.h"
#include "test_util.h"

#include <unistd.h>

#define SMS 132
#define T0 3e-6
#define RATE 500e12
#define BW 3e12

static int64_t add_gpu(calib_db *db)
{
    calib_gpu_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.name, sizeof id.name, "NVIDIA H100 80GB HBM3");
    snprintf(id.backend, sizeof id.backend, "gpu");
    snprintf(id.cc, sizeof id.cc, "9.0");
    id.sms = SMS;
    int64_t gid = 0;
    sim_err e = {{0}};
    CHECK_MSG(calib_db_gpu_ensure(db, &id, &gid, &e) == 0, "%s", e.msg);
    return gid;
}

static void add_point_dt(calib_db *db, int64_t gid, calib_op op, const char *dtype, const char *kernel,
                         calib_shape sh, double t)
{
    calib_point p;
    memset(&p, 0, sizeof p);
    p.op = op;
    snprintf(p.dtype, sizeof p.dtype, "%s", dtype);
    snprintf(p.kernel, sizeof p.kernel, "%s", kernel);
    p.shape = sh;
    p.reps = 1;
    p.median_s = p.p10_s = p.p90_s = t;
    p.tflops = p.gbps = p.frac_of_peak = p.check_err = NAN;
    snprintf(p.measured_at, sizeof p.measured_at, "2026-12-01T00:00:00Z");
    sim_err e = {{0}};
    CHECK_MSG(calib_db_point_insert(db, gid, &p, &e) == 0, "%s", e.msg);
}

static void add_point(calib_db *db, int64_t gid, calib_op op, const char *kernel, calib_shape sh, double t)
{
    add_point_dt(db, gid, op, "bf16", kernel, sh, t);
}

/* A perf-db dtype name as the work model reads it. */
static calib_dtype P(const char *name) { return calib_dtype_parse(name); }

/* The physical model the fit should recover (η_wave as calib_table.h). */
static double truth(const calib_shape *sh)
{
    double tiles = ceil(sh->m / 128.0) * ceil(sh->n / 128.0);
    double eff = tiles > SMS ? tiles / (ceil(tiles / SMS) * SMS) : 1.0;
    return T0 + calib_op_flops(CALIB_OP_GEMM, sh) / eff / RATE + calib_op_bytes(CALIB_OP_GEMM, P("bf16"), sh) / BW;
}

static calib_shape gemm(int64_t m, int64_t n, int64_t k)
{
    calib_shape s;
    memset(&s, 0, sizeof s);
    s.m = m, s.n = n, s.k = k;
    return s;
}

static const int64_t MS[] = {1, 8, 64, 512, 4096};
static const int64_t NS[] = {1024, 4096};

static calib_db *fresh_db(char *path)
{
    snprintf(path, 64, "/tmp/test_calib_table_XXXXXX");
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    unlink(path);
    calib_db *db = NULL;
    sim_err e = {{0}};
    CHECK_MSG(calib_db_open(path, CALIB_DB_CREATE, &db, &e) == 0, "%s", e.msg);
    return db;
}

static void test_fit_and_lookup(void)
{
    char path[64];
    calib_db *db = fresh_db(path);
    if (!db) return;
    int64_t gid = add_gpu(db);
    /* An exact physical series, plus one shape measured 30 % slow (a
     * kernel-selection hiccup the interpolation must reproduce there). */
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 2; j++)
            for (size_t l = 0; l < 2; l++) {
                calib_shape s = gemm(MS[i], NS[j], NS[l]);
                double t = truth(&s);
                if (MS[i] == 64 && NS[j] == 4096 && NS[l] == 4096) t *= 1.3;
                add_point(db, gid, CALIB_OP_GEMM, "kern_a", s, t);
            }
    sim_err e = {{0}};
    calib_table *t = NULL;
    CHECK_MSG(calib_table_build(db, gid, NULL, NULL, 0, &t, &e) == 0, "%s", e.msg);
    if (!t) goto done;
    CHECK(calib_table_n_series(t) == 1);
    const calib_series *s = calib_table_series(t, CALIB_OP_GEMM, "bf16");
    CHECK(s != NULL);
    CHECK(calib_table_series(t, CALIB_OP_GEMM, "fp8") == NULL);
    CHECK(calib_table_series(t, CALIB_OP_ATTN_DECODE, "bf16") == NULL);
    if (!s) goto done;
    calib_series_info in;
    calib_series_describe(s, NULL, NULL, &in);
    CHECK(in.n_points == 20 && in.n_axes == 3);
    CHECK(strcmp(in.kernels, "kern_a") == 0);
    /* Coefficients with their units come back (the one slow point pulls a
     * little, the relative-error fit keeps it small). */
    CHECK_NEAR(in.t0_s / T0, 1.0, 0.05);
    CHECK_NEAR(in.s_per_flop * RATE, 1.0, 0.15);
    CHECK_NEAR(in.s_per_byte * BW, 1.0, 0.15);
    CHECK(in.floor_s <= in.t0_s && in.floor_s > 0);

    /* Every measured shape returns its median exactly. */
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 2; j++) {
            calib_shape q = gemm(MS[i], NS[j], 1024);
            calib_table_status st;
            CHECK(calib_series_lookup(s, &q, &st) == truth(&q));
            CHECK(st == CALIB_TABLE_MEASURED);
        }
    calib_shape slow = gemm(64, 4096, 4096);
    CHECK(calib_series_lookup(s, &slow, NULL) == truth(&slow) * 1.3);

    /* Between grid points: model × interpolated residual, within the band
     * of the residuals, above the floor; next to the slow point, slow too. */
    double lo_band = INFINITY, hi_band = 0;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 2; j++)
            for (size_t l = 0; l < 2; l++) {
                calib_shape q = gemm(MS[i], NS[j], NS[l]);
                double r = calib_series_lookup(s, &q, NULL) / calib_series_model(s, &q);
                lo_band = fmin(lo_band, r), hi_band = fmax(hi_band, r);
            }
    for (int64_t m = 1; m <= 4096; m = m * 3 + 1)
        for (int64_t n = 1024; n <= 4096; n += 700) {
            calib_shape q = gemm(m, n, 2000);
            calib_table_status st;
            double v = calib_series_lookup(s, &q, &st);
            double mdl = calib_series_model(s, &q);
            CHECK(st == CALIB_TABLE_INTERP || st == CALIB_TABLE_MEASURED);
            CHECK_MSG(v >= in.floor_s, "m=%lld n=%lld: %g below the floor %g", (long long)m, (long long)n, v, in.floor_s);
            CHECK_MSG(v >= mdl * lo_band * (1 - 1e-12) && v <= mdl * hi_band * (1 + 1e-12),
                      "m=%lld n=%lld: %g outside [%g, %g] x model %g", (long long)m, (long long)n, v, lo_band, hi_band,
                      mdl);
        }
    calib_shape near_slow = gemm(80, 4096, 4096), near_fast = gemm(80, 1024, 1024);
    CHECK(calib_series_lookup(s, &near_slow, NULL) > 1.1 * calib_series_model(s, &near_slow));
    CHECK_NEAR(calib_series_lookup(s, &near_fast, NULL) / calib_series_model(s, &near_fast), 1.0, 0.05);

    /* Off the grid: tiny shapes stay on the floor (never the 0.006 µs a
     * pure roofline scaling gives), huge ones follow the fitted model once
     * past a factor 2 of the edge, and the answer is continuous in between. */
    calib_shape tiny = gemm(1, 32, 32), huge = gemm(100000, 4096, 4096), edge = gemm(5000, 4096, 4096);
    calib_table_status st;
    double vt = calib_series_lookup(s, &tiny, &st);
    CHECK(st == CALIB_TABLE_FIT);
    CHECK(vt >= in.floor_s && vt < 2 * T0);
    double vh = calib_series_lookup(s, &huge, &st);
    CHECK(st == CALIB_TABLE_FIT);
    CHECK_NEAR(vh / calib_series_model(s, &huge), 1.0, 1e-12);
    CHECK_NEAR(vh / truth(&huge), 1.0, 0.15);
    double ve = calib_series_lookup(s, &edge, NULL);
    CHECK(ve >= calib_series_model(s, &edge) * lo_band * (1 - 1e-12));
    CHECK(ve <= calib_series_model(s, &edge) * hi_band * (1 + 1e-12));

    /* The memo gives the same answers, and remembers them. */
    calib_memo *memo = NULL;
    CHECK(calib_memo_create(6, &memo, &e) == 0);
    for (int rep = 0; rep < 3; rep++)
        for (int64_t m = 1; m < 200; m += 7) {
            calib_shape q = gemm(m, 3000, 1500);
            calib_table_status s1, s2;
            CHECK(calib_series_lookup_memo(s, &q, memo, &s1) == calib_series_lookup(s, &q, &s2) && s1 == s2);
        }
    uint64_t hits = 0, misses = 0;
    calib_memo_stats(memo, &hits, &misses);
    CHECK(hits > 0 && misses > 0 && hits + misses == 3 * 29);
    calib_memo_free(memo);
    /* A sweep inside one grid cell (m from 65 to 127 between the measured
     * 64 and 128, n and k between grid points too, as decode attention's
     * context moves an iteration at a time) is answered from the kept cell,
     * bit for bit the full lookup's answer; leaving the cell searches again. */
    CHECK(calib_memo_create(10, &memo, &e) == 0);
    for (int64_t m = 65; m < 260; m++) {
        calib_shape q = gemm(m, 3000, 1500);
        calib_table_status s1, s2;
        double a = calib_series_lookup_memo(s, &q, memo, &s1), b = calib_series_lookup(s, &q, &s2);
        CHECK_MSG(a == b && s1 == s2, "m=%lld: memo %.17g vs %.17g", (long long)m, a, b);
    }
    CHECK(calib_memo_bracket_hits(memo) > 100);
    calib_memo_free(memo);
    CHECK(calib_memo_create(2, &memo, &e) < 0);
    CHECK(calib_series_lookup(NULL, &tiny, &st) == 0 && st == CALIB_TABLE_NONE);
done:
    calib_table_free(t);
    calib_db_close(db);
    unlink(path);
}

/* Attention decode over batch, context and head_dim: each is interpolated. */
static void test_attention_dims(void)
{
    char path[64];
    calib_db *db = fresh_db(path);
    if (!db) return;
    int64_t gid = add_gpu(db);
    const int64_t bs[] = {1, 16, 64}, cs[] = {256, 4096}, hd[] = {64, 128};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            for (int l = 0; l < 2; l++) {
                calib_shape s;
                memset(&s, 0, sizeof s);
                s.batch = bs[i], s.ctx = cs[j], s.heads = 32, s.kv_heads = 8, s.head_dim = hd[l];
                double t = 4e-6 + calib_op_bytes(CALIB_OP_ATTN_DECODE, P("bf16"), &s) / 2e12;
                if (hd[l] == 128) t *= 1.2; /* slower kernel variant at 128 */
                add_point(db, gid, CALIB_OP_ATTN_DECODE, "flash", s, t);
            }
    sim_err e = {{0}};
    calib_table *t = NULL;
    CHECK_MSG(calib_table_build(db, gid, NULL, NULL, 0, &t, &e) == 0, "%s", e.msg);
    const calib_series *s = calib_table_series(t, CALIB_OP_ATTN_DECODE, "bf16");
    CHECK(s != NULL);
    if (s) {
        calib_series_info in;
        calib_series_describe(s, NULL, NULL, &in);
        CHECK(in.n_axes == 3); /* batch, ctx, head_dim; heads and kv_heads fixed */
        calib_shape q;
        memset(&q, 0, sizeof q);
        q.batch = 16, q.ctx = 4096, q.heads = 32, q.kv_heads = 8, q.head_dim = 96;
        calib_table_status st;
        double mid = calib_series_lookup(s, &q, &st);
        CHECK(st == CALIB_TABLE_INTERP);
        q.head_dim = 64;
        double a = calib_series_lookup(s, &q, &st);
        CHECK(st == CALIB_TABLE_MEASURED);
        q.head_dim = 128;
        double b = calib_series_lookup(s, &q, NULL);
        CHECK(mid > a && mid < b);
        q.head_dim = 64, q.batch = 8;
        double m8 = calib_series_lookup(s, &q, &st);
        q.batch = 1;
        double m1 = calib_series_lookup(s, &q, NULL);
        q.batch = 16;
        double m16 = calib_series_lookup(s, &q, NULL);
        CHECK(st == CALIB_TABLE_INTERP && m8 > m1 && m8 < m16);
        /* Another head count than measured: the fitted model, above the floor. */
        q.heads = 64;
        double h64 = calib_series_lookup(s, &q, &st);
        CHECK(st == CALIB_TABLE_FIT && h64 >= in.floor_s);
    }
    calib_table_free(t);
    calib_db_close(db);
    unlink(path);
}

/* Engine rows first, else the fastest kernel of all; the dtype filter. */
static void test_engine_precedence(void)
{
    char path[64];
    calib_db *db = fresh_db(path);
    if (!db) return;
    int64_t gid = add_gpu(db);
    for (size_t i = 0; i < 5; i++) {
        calib_shape s = gemm(MS[i], 4096, 4096);
        add_point(db, gid, CALIB_OP_GEMM, "vllm-0.24.0:torch.nn.functional.linear", s, 3 * truth(&s));
        add_point(db, gid, CALIB_OP_GEMM, "sglang-0.5.14:sgl_kernel", s, 2 * truth(&s));
        add_point(db, gid, CALIB_OP_GEMM, "kern_gemm", s, truth(&s));
    }
    calib_shape q = gemm(64, 4096, 4096);
    const char *engines[] = {"vllm", "sglang", "trtllm", NULL};
    const double factor[] = {3, 2, 1, 1};
    const char *names[] = {"vllm-0.24.0", "sglang-0.5.14", "all", "all"};
    for (int i = 0; i < 4; i++) {
        sim_err e = {{0}};
        calib_table *t = NULL;
        CHECK_MSG(calib_table_build(db, gid, engines[i], NULL, 0, &t, &e) == 0, "%s", e.msg);
        const calib_series *s = calib_table_series(t, CALIB_OP_GEMM, "bf16");
        CHECK(s != NULL);
        if (s) {
            CHECK(calib_series_lookup(s, &q, NULL) == factor[i] * truth(&q));
            calib_series_info in;
            calib_series_describe(s, NULL, NULL, &in);
            CHECK_MSG(strcmp(in.kernels, names[i]) == 0, "%s: kernels %s", engines[i] ? engines[i] : "none", in.kernels);
        }
        calib_table_free(t);
    }
    const char *only_fp8[] = {"fp8", NULL};
    calib_table *t = NULL;
    sim_err e = {{0}};
    CHECK(calib_table_build(db, gid, NULL, only_fp8, 0, &t, &e) == 0);
    CHECK(calib_table_n_series(t) == 0);
    calib_table_free(t);
    calib_db_close(db);
    unlink(path);
}

/* 4-bit formats count half a byte per value plus their block scales (nvfp4
 * an E4M3 per 16, mxfp4 an E8M0 per 32, int4 an fp16 per group of 128), and
 * the activations of weight-only formats stay bf16; a series measured at
 * a known bandwidth gets that bandwidth back from the fit (counting 2 bytes
 * per value, as before, the fitted rate came out 3.6× too high). */
static void test_four_bit_bytes(void)
{
    CHECK(calib_dtype_bytes(P("nvfp4")) == 0.5 + 1.0 / 16 && calib_dtype_act_bytes(P("nvfp4")) == 0.5 + 1.0 / 16);
    CHECK(calib_dtype_bytes(P("mxfp4")) == 0.5 + 1.0 / 32 && calib_dtype_act_bytes(P("mxfp4")) == 2);
    CHECK(calib_dtype_bytes(P("w4a16_mxfp4")) == 0.5 + 1.0 / 32 && calib_dtype_act_bytes(P("w4a16_mxfp4")) == 2);
    CHECK(calib_dtype_bytes(P("w4a8_mxfp4_mxfp8")) == 0.5 + 1.0 / 32 &&
          calib_dtype_act_bytes(P("w4a8_mxfp4_mxfp8")) == 1 + 1.0 / 32);
    CHECK(calib_dtype_bytes(P("int4_wo")) == 0.5 + 2.0 / 128 && calib_dtype_act_bytes(P("int4_wo")) == 2);
    CHECK(calib_dtype_bytes(P("w4afp8")) == 0.5 + 2.0 / 128 && calib_dtype_act_bytes(P("w4afp8")) == 1);
    /* The other formats keep their sizes, activations and weights alike. */
    CHECK(calib_dtype_bytes(P("bf16")) == 2 && calib_dtype_act_bytes(P("bf16")) == 2);
    CHECK(calib_dtype_bytes(P("fp8_block")) == 1 && calib_dtype_act_bytes(P("fp8")) == 1);
    CHECK(calib_dtype_bytes(P("int8")) == 1 && calib_dtype_bytes(P("fp32")) == 4);
    CHECK(calib_dtype_bytes(P("bf16/fp8")) == 2);
    calib_shape g = gemm(4, 4096, 8192);
    CHECK_NEAR(calib_op_bytes(CALIB_OP_GEMM, P("nvfp4"), &g),
               4.0 * 8192 * 0.5625 + 8192.0 * 4096 * 0.5625 + 4.0 * 4096 * 2,
               1e-6);
    CHECK_NEAR(calib_op_bytes(CALIB_OP_GEMM, P("w4a16_mxfp4"), &g),
               4.0 * 8192 * 2 + 8192.0 * 4096 * 0.53125 + 4.0 * 4096 * 2, 1e-6);
    CHECK(calib_op_bytes(CALIB_OP_GEMM, P("bf16"), &g) == (4.0 * 8192 + 8192.0 * 4096) * 2 + 4.0 * 4096 * 2);
    /* Fused MoE: 16 tokens × top-4 of 64 experts on one rank touch all 64
     * experts' gate, up and down weights, plus the bf16 activations. */
    calib_shape moe;
    memset(&moe, 0, sizeof moe);
    moe.m = 16, moe.k = 2880, moe.n = 2880, moe.batch = 4, moe.groups = 64;
    CHECK_NEAR(calib_op_bytes(CALIB_OP_MOE, P("int4_wo"), &moe),
               64.0 * 3 * 2880 * 2880 * 0.515625 + 4.0 * 16 * 2880 * 2, 1e-3);
    /* Peaks: nvfp4 the FP4 one (Blackwell only), weight-only formats bf16,
     * W4A8 fp8. */
    CHECK(calib_peak_flops("NVIDIA B200", P("nvfp4")) == 9000e12);
    CHECK(calib_peak_flops("NVIDIA H100 80GB HBM3", P("nvfp4")) == 0);
    CHECK(calib_peak_flops("NVIDIA H100 80GB HBM3", P("int4_wo")) == 989.4e12);
    CHECK(calib_peak_flops("NVIDIA B200", P("w4a8_mxfp4_mxfp8")) == 4500e12);

    char path[64];
    calib_db *db = fresh_db(path);
    if (!db) return;
    int64_t gid = add_gpu(db);
    /* Decode-sized nvfp4 GEMMs streaming their weights at BW, the bytes
     * written out here (not through calib_op_bytes). */
    static const int64_t ms[] = {1, 2, 4, 8, 16}, ns[] = {2048, 4096, 8192};
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t l = 0; l < 3; l++) {
                double m = (double)ms[i], n = (double)ns[j], k = (double)ns[l];
                double bytes = (m * k + k * n) * (0.5 + 1.0 / 16) + m * n * 2;
                add_point_dt(db, gid, CALIB_OP_GEMM, "nvfp4", "kern_fp4", gemm(ms[i], ns[j], ns[l]), T0 + bytes / BW);
            }
    sim_err e = {{0}};
    calib_table *t = NULL;
    CHECK_MSG(calib_table_build(db, gid, NULL, NULL, 0, &t, &e) == 0, "%s", e.msg);
    const calib_series *s = t ? calib_table_series(t, CALIB_OP_GEMM, "nvfp4") : NULL;
    CHECK(s != NULL);
    if (s) {
        calib_series_info in;
        calib_series_describe(s, NULL, NULL, &in);
        CHECK_NEAR(in.s_per_byte * BW, 1.0, 0.05);
        CHECK_NEAR(in.t0_s / T0, 1.0, 0.05);
        CHECK(in.rms_rel < 0.01);
    }
    calib_table_free(t);
    calib_db_close(db);
    unlink(path);
}

/* The one parser of perf-db dtype names: exact names, then the int4* and
 * fp8* prefixes; a KV pair is a name of its own (its first part only when
 * that is a prefix family); anything else, and NULL, is OTHER. */
static void test_dtype_parse(void)
{
    static const struct {
        const char *name;
        calib_dtype want;
    } cases[] = {
        {"bf16", CALIB_DTYPE_BF16},           {"fp32", CALIB_DTYPE_FP32},
        {"fp8", CALIB_DTYPE_FP8},             {"fp8_block", CALIB_DTYPE_FP8_OTHER},
        {"fp8_block/bf16", CALIB_DTYPE_FP8_OTHER}, {"mxfp8", CALIB_DTYPE_MXFP8},
        {"int8", CALIB_DTYPE_INT8},           {"nvfp4", CALIB_DTYPE_NVFP4},
        {"nvfp4/fp8", CALIB_DTYPE_OTHER},     {"mxfp4", CALIB_DTYPE_MXFP4},
        {"w4a16_mxfp4", CALIB_DTYPE_W4A16_MXFP4}, {"w4a8_mxfp4_mxfp8", CALIB_DTYPE_W4A8_MXFP4_MXFP8},
        {"int4_wo", CALIB_DTYPE_INT4},        {"int4_awq", CALIB_DTYPE_INT4},
        {"w4afp8", CALIB_DTYPE_W4AFP8},       {"fp16", CALIB_DTYPE_OTHER},
        {"u8", CALIB_DTYPE_OTHER},            {"bf16/fp8", CALIB_DTYPE_OTHER},
        {"BF16", CALIB_DTYPE_OTHER},          {"", CALIB_DTYPE_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        calib_dtype got = calib_dtype_parse(cases[i].name);
        if (got != cases[i].want) fprintf(stderr, "  %s: %d, want %d\n", cases[i].name, (int)got, (int)cases[i].want);
        CHECK(got == cases[i].want);
    }
    CHECK(calib_dtype_parse(NULL) == CALIB_DTYPE_OTHER);
    /* Out-of-range values read as OTHER, not past the tables. */
    CHECK(calib_dtype_bytes((calib_dtype)CALIB_DTYPE_COUNT) == 2 &&
          calib_dtype_peak((calib_dtype)-1) == CALIB_PEAK_NONE);
    CHECK(calib_dtype_peak(CALIB_DTYPE_FP8_OTHER) == CALIB_PEAK_NONE);
    CHECK(calib_dtype_peak(CALIB_DTYPE_W4AFP8) == CALIB_PEAK_FP8);
}

static const test_case cases[] = {
    {"dtype_parse", test_dtype_parse},
    {"fit_and_lookup", test_fit_and_lookup},
    {"attention_dims", test_attention_dims},
    {"engine_precedence", test_engine_precedence},
    {"four_bit_bytes", test_four_bit_bytes},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_calib_table", cases);
}
