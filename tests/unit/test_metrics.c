/* test_metrics — sim_metrics summaries on hand-made records with known
 * answers, the ITL histogram against a brute-force weighted quantile, the
 * JSON/table printers (JSON parsed back with jansson), and runs past the
 * record caps against the same runs kept whole. */
#include "sim_metrics.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <jansson.h>

#include <stdint.h>
#include <stdlib.h>

#define MS SIM_NS_PER_MS

static sim_req_record rec(uint64_t id, sim_time arrival, double queue_ms, double ttft_ms,
                          int32_t out, double gen_ms)
{
    sim_req_record r = {0};
    r.id = id;
    r.instance = (int32_t)(id % 2);
    r.input_tokens = 100;
    r.output_tokens = out;
    r.arrival = arrival;
    r.first_scheduled = arrival + (sim_time)(queue_ms * MS);
    r.first_token = arrival + (sim_time)(ttft_ms * MS);
    r.finish = r.first_token + (sim_time)(gen_ms * MS);
    return r;
}

/* GSL's definition for sorted data v_i = 1..n: linear interpolation at
 * index (n-1)q, i.e. 1 + (n-1)q. */
static double q_1_to_n(int n, double q)
{
    return 1 + (n - 1) * q;
}

static void test_percentiles(void)
{
    sim_metrics *m = sim_metrics_create(2);
    CHECK(m);
    /* TTFT i ms, queue i/2 ms, E2E = i + 99*2 ms, inserted in a shuffled
     * order so the summary must sort (a copy). */
    for (int k = 0; k < 100; k++) {
        int i = 1 + (k * 37) % 100;
        sim_req_record r = rec((uint64_t)i, (sim_time)i * SIM_NS_PER_S, i / 2.0, i, 100, 99 * 2.0);
        CHECK(sim_metrics_add_request(m, &r) == 0);
    }
    sim_summary s;
    sim_err err = {{0}};
    CHECK(sim_metrics_summarize(m, NULL, 4, &s, &err) == 0);
    CHECK(s.requests_completed == 100);
    CHECK(s.ttft_ms.n == 100);
    CHECK_NEAR(s.ttft_ms.mean, 50.5, 1e-9);
    CHECK_NEAR(s.ttft_ms.p50, q_1_to_n(100, 0.5), 1e-9);
    CHECK_NEAR(s.ttft_ms.p90, q_1_to_n(100, 0.9), 1e-9);
    CHECK_NEAR(s.ttft_ms.p99, q_1_to_n(100, 0.99), 1e-9);
    CHECK_NEAR(s.ttft_ms.p999, q_1_to_n(100, 0.999), 1e-9);
    CHECK_NEAR(s.ttft_ms.p50, 50.5, 1e-9);
    CHECK_NEAR(s.ttft_ms.p99, 99.01, 1e-9);
    CHECK_NEAR(s.queue_ms.p90, q_1_to_n(100, 0.9) / 2, 1e-9);
    CHECK_NEAR(s.e2e_ms.p50, 50.5 + 198, 1e-9);
    CHECK_NEAR(s.tpot_ms.mean, 2.0, 1e-9);
    CHECK_NEAR(s.tpot_ms.p999, 2.0, 1e-9);
    CHECK(s.tpot_ms.n == 100);
    /* Records keep their insertion order. */
    int64_t n = 0;
    const sim_req_record *rs = sim_metrics_requests(m, &n);
    CHECK(n == 100 && rs[0].id == 1 && rs[1].id == 38 && rs[2].id == 75);
    /* Span: first arrival 1 s, last finish 100 s + 100 ms + 198 ms. */
    CHECK_NEAR(s.sim_time_s, 99.298, 1e-9);
    CHECK_NEAR(s.req_per_s, 100 / 99.298, 1e-9);
    CHECK_NEAR(s.input_tokens_per_s, 100 * 100 / 99.298, 1e-6);
    CHECK_NEAR(s.output_tokens_per_s, 100 * 100 / 99.298, 1e-6);
    CHECK_NEAR(s.output_tokens_per_s_per_gpu, 100 * 100 / 99.298 / 4, 1e-6);
    CHECK(s.requests_good == 100); /* no SLO: every request is good */
    CHECK_NEAR(s.goodput_req_per_s, s.req_per_s, 1e-12);
    sim_metrics_destroy(m);
}

static void test_tpot_goodput(void)
{
    sim_metrics *m = sim_metrics_create(1);
    /* TPOT = (finish - first_token) / (out - 1). */
    sim_req_record a = rec(1, 0, 1, 100, 5, 40);   /* TPOT 10, TTFT 100 */
    sim_req_record b = rec(2, 0, 1, 300, 11, 200); /* TPOT 20, TTFT 300 */
    sim_req_record c = rec(3, 0, 1, 150, 1, 0);    /* one token: no TPOT */
    sim_req_record d = rec(4, MS, 1, 50, 2, 60);   /* TPOT 60, TTFT 50 */
    a.preemptions = 2;
    d.preemptions = 1;
    CHECK(sim_metrics_add_request(m, &a) == 0);
    CHECK(sim_metrics_add_request(m, &b) == 0);
    CHECK(sim_metrics_add_request(m, &c) == 0);
    CHECK(sim_metrics_add_request(m, &d) == 0);
    double t = 0;
    CHECK(sim_metrics_request_tpot_ms(&a, &t) == 1);
    CHECK_NEAR(t, 10, 1e-12);
    CHECK(sim_metrics_request_tpot_ms(&c, &t) == 0);

    sim_slo_cfg slo = {.ttft_ms = 200, .tpot_ms = 30};
    sim_summary s;
    CHECK(sim_metrics_summarize(m, &slo, 0, &s, NULL) == 0);
    CHECK(s.tpot_ms.n == 3);
    CHECK_NEAR(s.tpot_ms.mean, 30, 1e-9);
    CHECK_NEAR(s.tpot_ms.p50, 20, 1e-9);
    CHECK(s.ttft_ms.n == 4);
    CHECK(s.preemptions == 3);
    /* a: ok; b: TTFT 300 > 200; c: TTFT ok, no TPOT ⇒ good; d: TPOT 60 > 30. */
    CHECK(s.requests_good == 2);
    /* Span: first arrival 0 to the last finish, b's 300 + 200 = 500 ms. */
    CHECK_NEAR(s.sim_time_s, 0.5, 1e-12);
    CHECK_NEAR(s.goodput_req_per_s, 4.0, 1e-9);
    CHECK(s.output_tokens_per_s_per_gpu == 0); /* n_gpus 0: no division */

    slo.ttft_ms = 0; /* TPOT bound only */
    CHECK(sim_metrics_summarize(m, &slo, 1, &s, NULL) == 0);
    CHECK(s.requests_good == 3);
    slo.tpot_ms = 0;
    slo.ttft_ms = 120; /* TTFT bound only */
    CHECK(sim_metrics_summarize(m, &slo, 1, &s, NULL) == 0);
    CHECK(s.requests_good == 2);
    sim_metrics_destroy(m);
}

static void test_rejects(void)
{
    sim_metrics *m = sim_metrics_create(2);
    sim_req_record r = rec(1, 10 * MS, 1, 5, 3, 5);
    r.first_scheduled = r.arrival - 1; /* scheduled before it arrived */
    CHECK(sim_metrics_add_request(m, &r) == SIM_EINVAL);
    r = rec(1, 10 * MS, 1, 5, 0, 5);
    CHECK(sim_metrics_add_request(m, &r) == SIM_EINVAL);
    CHECK(sim_metrics_add_iteration(m, 2, MS, 1) == SIM_EINVAL);
    CHECK(sim_metrics_add_iteration(m, -1, MS, 1) == SIM_EINVAL);
    CHECK(sim_metrics_add_iteration(m, 0, -1, 1) == SIM_EINVAL);
    CHECK(sim_metrics_add_iteration(m, 0, MS, -1) == SIM_EINVAL);
    sim_sample smp = {.instance = 5};
    CHECK(sim_metrics_add_sample(m, &smp) == SIM_EINVAL);
    int64_t n = -1;
    sim_metrics_requests(m, &n);
    CHECK(n == 0);
    sim_metrics_destroy(m);
}

/* Deterministic generator for the ITL data. */
static uint64_t lcg(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 33;
}

static int cmp_time(const void *a, const void *b)
{
    sim_time x = *(const sim_time *)a, y = *(const sim_time *)b;
    return (x > y) - (x < y);
}

static void test_itl(void)
{
    enum { N_IT = 3000 };
    sim_metrics *m = sim_metrics_create(3);
    sim_time *tok = malloc(sizeof *tok * N_IT * 8);
    size_t nt = 0;
    double sum = 0;
    uint64_t st = 12345;
    for (int i = 0; i < N_IT; i++) {
        /* 50 µs .. ~400 ms, log-uniform-ish; weights 0..7. */
        sim_time dur = 50000 + (sim_time)(lcg(&st) % 1000) * (sim_time)(lcg(&st) % 400000);
        int32_t w = (int32_t)(lcg(&st) % 8);
        CHECK(sim_metrics_add_iteration(m, i % 3, dur, w) == 0);
        for (int k = 0; k < w; k++)
            tok[nt++] = dur;
        sum += (double)dur * w;
    }
    qsort(tok, nt, sizeof *tok, cmp_time);
    sim_summary s;
    CHECK(sim_metrics_summarize(m, NULL, 1, &s, NULL) == 0);
    CHECK(s.itl_ms.n == (int64_t)nt);
    CHECK_NEAR(s.itl_ms.mean, sum / (double)nt / 1e6, 1e-9);
    static const double qs[] = {0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        /* Exact inverse CDF: the value of rank ceil(q·n). */
        size_t rank = (size_t)ceil(qs[i] * (double)nt);
        if (rank < 1) rank = 1;
        double exact = (double)tok[rank - 1] / 1e6, got = -1;
        CHECK(sim_metrics_itl_quantile_ms(m, qs[i], &got) == 0);
        CHECK_MSG(fabs(got - exact) <= 1e-3 * exact, "q=%g got %.9g exact %.9g", qs[i], got, exact);
    }
    CHECK_NEAR(s.itl_ms.p99, (double)tok[(size_t)ceil(0.99 * (double)nt) - 1] / 1e6,
               1e-3 * s.itl_ms.p99);
    CHECK_NEAR(s.itl_ms.p999, (double)tok[(size_t)ceil(0.999 * (double)nt) - 1] / 1e6,
               1e-3 * s.itl_ms.p999);
    /* The extremes are exact (clamped to the observed min/max). */
    double v = 0;
    sim_metrics_itl_quantile_ms(m, 0, &v);
    CHECK_NEAR(v, (double)tok[0] / 1e6, 1e-12);
    sim_metrics_itl_quantile_ms(m, 1, &v);
    CHECK_NEAR(v, (double)tok[nt - 1] / 1e6, 1e-12);
    CHECK(sim_metrics_itl_quantile_ms(m, 1.5, &v) == SIM_EINVAL);
    free(tok);
    sim_metrics_destroy(m);

    /* Weighting matters: one slow iteration with 1 token vs 9 fast tokens. */
    m = sim_metrics_create(1);
    sim_metrics_add_iteration(m, 0, 100 * MS, 1);
    sim_metrics_add_iteration(m, 0, 10 * MS, 9);
    sim_metrics_add_iteration(m, 0, 500 * MS, 0); /* no decode: ignored */
    sim_metrics_add_iteration(m, 0, 200, 2);      /* below 1 µs: underflow bin */
    CHECK(sim_metrics_summarize(m, NULL, 1, &s, NULL) == 0);
    CHECK(s.itl_ms.n == 12);
    CHECK_NEAR(s.itl_ms.mean, (100.0 + 90 + 0.0004) / 12, 1e-9);
    /* Sorted tokens: ranks 1-2 are 200 ns, 3-11 are 10 ms, 12 is 100 ms. */
    CHECK_NEAR(s.itl_ms.p50, 10, 1e-2);  /* rank 6 */
    CHECK_NEAR(s.itl_ms.p90, 10, 1e-2);  /* rank ceil(10.8) = 11 */
    CHECK_NEAR(s.itl_ms.p99, 100, 1e-1); /* rank 12 */
    sim_metrics_itl_quantile_ms(m, 0.1, &v);
    CHECK(v >= 0.0002 && v <= 0.001); /* rank 2: the 200 ns iterations, within 1 µs */
    sim_metrics_destroy(m);
}

static void test_empty(void)
{
    sim_metrics *m = sim_metrics_create(0);
    sim_summary s;
    memset(&s, 0xff, sizeof s);
    CHECK(sim_metrics_summarize(m, NULL, 8, &s, NULL) == 0);
    CHECK(s.requests_completed == 0 && s.ttft_ms.n == 0 && s.itl_ms.n == 0 && s.tpot_ms.n == 0);
    CHECK(s.ttft_ms.mean == 0 && s.ttft_ms.p99 == 0 && s.e2e_ms.p999 == 0);
    CHECK(s.sim_time_s == 0 && s.req_per_s == 0 && s.goodput_req_per_s == 0);
    CHECK(s.mean_utilization == 0 && s.n_gpus == 8 && s.overloaded == 0);
    char *js = test_summary_json(&s);
    json_error_t jerr;
    json_t *j = json_loads(js, 0, &jerr);
    CHECK_MSG(j != NULL, "%s", jerr.text);
    CHECK(json_integer_value(json_object_get(json_object_get(j, "ttft_ms"), "n")) == 0);
    json_decref(j);
    free(js);
    sim_metrics_destroy(m);
}

typedef struct {
    json_t *root;
    int n;
} walk_ctx;

/* Every flattened metric is in the JSON under the same (dotted) path with
 * the same value. */
static int check_metric(const char *name, double value, void *ctx)
{
    walk_ctx *w = ctx;
    char key[64];
    snprintf(key, sizeof key, "%s", name);
    json_t *v = w->root;
    char *dot = strchr(key, '.');
    if (dot) {
        *dot = 0;
        v = json_object_get(v, key);
        v = json_object_get(v, dot + 1);
    } else {
        v = json_object_get(v, key);
    }
    w->n++;
    if (json_is_boolean(v))
        CHECK_MSG(json_is_true(v) == (value != 0), "%s", name);
    else if (json_is_null(v))
        CHECK_MSG(!isfinite(value), "%s", name);
    else
        CHECK_MSG(v && fabs(json_number_value(v) - value) <= 1e-8 * fabs(value), "%s", name);
    return 0;
}

static void test_json_table(void)
{
    sim_metrics *m = sim_metrics_create(2);
    for (int i = 1; i <= 10; i++) {
        sim_req_record r = rec((uint64_t)i, (sim_time)i * 100 * MS, i, 10 * i, 1 + i, 5.0 * i);
        sim_metrics_add_request(m, &r);
    }
    sim_metrics_add_iteration(m, 1, 20 * MS, 4);
    sim_sample a = {
        .instance = 0, .t = MS, .utilization = 0.5, .batch_size = 3, .kv_occupancy = 0.2};
    sim_sample b = {
        .instance = 1, .t = MS, .utilization = 1.0, .batch_size = 3, .kv_occupancy = 0.4};
    sim_metrics_add_sample(m, &a);
    sim_metrics_add_sample(m, &b);
    sim_slo_cfg slo = {.ttft_ms = 55, .tpot_ms = 0};
    sim_summary s;
    CHECK(sim_metrics_summarize(m, &slo, 16, &s, NULL) == 0);
    CHECK_NEAR(s.mean_utilization, 0.75, 1e-12);
    CHECK_NEAR(s.mean_kv_occupancy, 0.3, 1e-12);
    CHECK(s.requests_good == 5);
    s.wall_time_s = 0.25;
    s.events = 123456789012ULL;
    s.requests_rejected = 3;
    s.overloaded = 1;
    snprintf(s.overload_reason, sizeof s.overload_reason, "queue \"delay\" > 30 s\n\x01\xff");
    s.tpot_ms.p999 = NAN; /* must come out as null, never nan */
    s.mean_kv_occupancy = INFINITY;

    char *js = test_summary_json(&s);
    CHECK(strstr(js, "nan") == NULL && strstr(js, "inf") == NULL);
    json_error_t jerr;
    json_t *j = json_loads(js, 0, &jerr);
    CHECK_MSG(j != NULL, "%s: %s", jerr.text, js);
    static const char *const keys[] = {"requests_completed",
                                       "requests_good",
                                       "requests_rejected",
                                       "preemptions",
                                       "ttft_ms",
                                       "tpot_ms",
                                       "itl_ms",
                                       "e2e_ms",
                                       "queue_ms",
                                       "throughput",
                                       "goodput_req_per_s",
                                       "sim_time_s",
                                       "wall_time_s",
                                       "events",
                                       "n_gpus",
                                       "overloaded",
                                       "overload_reason",
                                       "mean_utilization",
                                       "mean_kv_occupancy",
                                       "cache_hit_rate",
                                       "load_cv",
                                       "pools"};
    const char *prev = js;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\n  \"%s\":", keys[i]);
        const char *at = strstr(js, quoted);
        CHECK_MSG(at && at > prev - 1, "key %s missing or out of order", keys[i]);
        if (at) prev = at;
        CHECK_MSG(json_object_get(j, keys[i]) != NULL, "key %s", keys[i]);
    }
    CHECK(json_object_size(j) == sizeof keys / sizeof keys[0]);
    CHECK(json_integer_value(json_object_get(j, "requests_completed")) == 10);
    CHECK(json_integer_value(json_object_get(j, "requests_good")) == 5);
    CHECK(json_integer_value(json_object_get(j, "requests_rejected")) == 3);
    CHECK(json_integer_value(json_object_get(j, "events")) == 123456789012LL);
    CHECK(json_integer_value(json_object_get(j, "n_gpus")) == 16);
    CHECK(json_is_true(json_object_get(j, "overloaded")));
    CHECK(strcmp(json_string_value(json_object_get(j, "overload_reason")),
                 "queue \"delay\" > 30 s\n\x01\xef\xbf\xbd") == 0);
    json_t *tt = json_object_get(j, "ttft_ms");
    CHECK_NEAR(json_number_value(json_object_get(tt, "mean")), 55, 1e-9);
    CHECK(json_integer_value(json_object_get(tt, "n")) == 10);
    CHECK(json_is_null(json_object_get(json_object_get(j, "tpot_ms"), "p999")));
    CHECK(json_is_null(json_object_get(j, "mean_kv_occupancy")));
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(j, "itl_ms"), "p50")), 20, 0.02);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(j, "throughput"),
                                                 "output_tokens_per_s_per_gpu")),
               s.output_tokens_per_s_per_gpu, 1e-6);
    walk_ctx w = {j, 0};
    CHECK(sim_summary_each_metric(&s, check_metric, &w) == 0);
    CHECK(w.n == 4 + 5 * 6 + 4 + 8 + 2);

    /* Dropping the wall_time_s line leaves valid JSON. */
    char *line = strstr(js, "  \"wall_time_s\"");
    char *end = line ? strchr(line, '\n') : NULL;
    CHECK(line && end);
    if (line && end) memmove(line, end + 1, strlen(end + 1) + 1);
    json_t *j2 = json_loads(js, 0, &jerr);
    CHECK_MSG(j2 && !json_object_get(j2, "wall_time_s"), "%s", jerr.text);
    json_decref(j2);
    json_decref(j);
    free(js);

    /* Not overloaded: reason is null even if the buffer has text. */
    s.overloaded = 0;
    js = test_summary_json(&s);
    j = json_loads(js, 0, &jerr);
    CHECK(j && json_is_null(json_object_get(j, "overload_reason")) &&
          json_is_false(json_object_get(j, "overloaded")));
    json_decref(j);
    free(js);

    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.name, sizeof sc.name, "tbl-test");
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "h100");
    sc.slo = slo;
    s.overloaded = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_summary_print_table(f, &s, &sc);
    sim_summary_print_table(f, &s, NULL);
    fclose(f);
    CHECK_CONTAINS(buf, "tbl-test");
    CHECK_CONTAINS(buf, "llama-3.1-8b");
    CHECK_CONTAINS(buf, "h100");
    CHECK_CONTAINS(buf, "TTFT            55.00");
    CHECK_CONTAINS(buf, "TTFT <= 55 ms");
    CHECK_CONTAINS(buf, "WARNING: overloaded");
    CHECK_CONTAINS(buf, "3 rejected");
    CHECK_CONTAINS(buf, "p99.9");
    CHECK(strstr(buf, "nan") == NULL);
    free(buf);
    sim_metrics_destroy(m);
}

/* A million requests: storage grows cheaply and the summary stays fast. */
static void test_scale(void)
{
    enum { N = 1000000 };
    sim_metrics *m = sim_metrics_create(1);
    for (int i = 0; i < N; i++) {
        sim_req_record r = rec((uint64_t)i, (sim_time)i * MS, 0, 1 + i % 1000, 10, 90);
        if (sim_metrics_add_request(m, &r)) {
            CHECK(0);
            break;
        }
    }
    sim_summary s;
    CHECK(sim_metrics_summarize(m, NULL, 1, &s, NULL) == 0);
    CHECK(s.requests_completed == N);
    CHECK_NEAR(s.ttft_ms.mean, 500.5, 1e-6);
    CHECK_NEAR(s.tpot_ms.p50, 10, 1e-9);
    sim_metrics_destroy(m);
}


static int rel_close(double got, double exact, double rel)
{
    return fabs(got - exact) <= rel * fabs(exact) * (1 + 1e-12) + 1e-15;
}

/* The same 20,000 requests (pd ones among them) and 300 samples kept whole
 * and past caps of 1,000 / 0 records and 100 samples: everything but the
 * percentiles is identical, percentiles within the sketch's bound, and the
 * kept records are the first ones. */
static void test_capped(void)
{
    enum { N = 20000, NS = 300 };
    static const int64_t caps[] = {1000, 0};
    sim_slo_cfg slo = {.ttft_ms = 400, .tpot_ms = 25};
    sim_metrics *whole = sim_metrics_create(4);
    sim_metrics *capped[2] = {sim_metrics_create(4), sim_metrics_create(4)};
    REQUIRE_OR(whole && capped[0] && capped[1], goto out);
    for (int c = 0; c < 2; c++) CHECK(sim_metrics_set_limits(capped[c], caps[c], 100, &slo) == 0);
    int32_t groups[4] = {0, 0, 1, 1};
    CHECK(sim_metrics_set_groups(whole, 2, groups) == 0);
    CHECK(sim_metrics_set_groups(capped[0], 2, groups) == 0);
    uint64_t st = 99;
    for (int i = 0; i < N; i++) {
        double queue = (double)(lcg(&st) % 5000) / 100.0 * (i % 7 == 0 ? 0 : 1); /* some exact zeros */
        double ttft = queue + 5 + (double)(lcg(&st) % 100000) / 100.0;
        int32_t out = 1 + (int32_t)(lcg(&st) % 300);
        sim_req_record r = rec((uint64_t)i, (sim_time)i * 3 * MS, queue, ttft, out, out * (5 + (double)(lcg(&st) % 3000) / 100.0));
        r.instance = (int32_t)(lcg(&st) % 4);
        r.prefill_instance = i % 3 == 0 ? (r.instance + 1) % 4 : -1;
        r.preemptions = (int32_t)(lcg(&st) % 3 == 0);
        r.cached_tokens = (int32_t)(lcg(&st) % 50);
        r.kv_reserved = r.kv_arrived = r.decode_first = -1;
        if (r.prefill_instance >= 0) {
            r.kv_bytes = 1e6 * (1 + i % 10);
            r.kv_reserved = r.first_token + (sim_time)(lcg(&st) % 20) * MS;
            r.kv_arrived = r.kv_reserved + (sim_time)(1 + lcg(&st) % 5000) * 1000;
            r.decode_first = r.kv_arrived + 2 * MS;
        }
        CHECK(sim_metrics_add_request(whole, &r) == 0);
        for (int c = 0; c < 2; c++) CHECK(sim_metrics_add_request(capped[c], &r) == 0);
    }
    for (int i = 0; i < NS; i++) {
        sim_sample smp = {.instance = i % 4, .t = (sim_time)(i / 4 + 1) * SIM_NS_PER_S,
                          .utilization = (double)(lcg(&st) % 1000) / 1000, .kv_occupancy = (double)(i % 17) / 17,
                          .waiting = (int32_t)(lcg(&st) % 9)};
        CHECK(sim_metrics_add_sample(whole, &smp) == 0);
        for (int c = 0; c < 2; c++) CHECK(sim_metrics_add_sample(capped[c], &smp) == 0);
    }
    sim_summary a, b;
    CHECK(sim_metrics_summarize(whole, &slo, 4, &a, NULL) == 0);
    CHECK(a.records.capped == 0 && a.records.requests_kept == N && a.records.sketch_rel_error == 0);
    const double eps = SIM_METRICS_SKETCH_REL_ERROR;
    for (int c = 0; c < 2; c++) {
        sim_err err = {{0}};
        CHECK_MSG(sim_metrics_summarize(capped[c], &slo, 4, &b, &err) == 0, "%s", err.msg);
        CHECK(b.records.capped == 1 && b.records.requests_kept == caps[c]);
        CHECK(b.records.samples_kept == 100 && b.records.samples == NS);
        CHECK_NEAR(b.records.sketch_rel_error, sqrt(1.001) - 1, 1e-12);
        CHECK(sim_metrics_requests_seen(capped[c]) == N && sim_metrics_samples_seen(capped[c]) == NS);
        int64_t kept = -1, ks = -1;
        const sim_req_record *kr = sim_metrics_requests(capped[c], &kept);
        sim_metrics_samples(capped[c], &ks);
        CHECK(kept == caps[c] && ks == 100);
        CHECK(kept == 0 || (kr[0].id == 0 && kr[kept - 1].id == (uint64_t)(kept - 1)));
        /* Exact in both modes. */
        CHECK(b.requests_completed == a.requests_completed && b.requests_good == a.requests_good);
        CHECK(b.requests_good > N / 10 && b.requests_good < N); /* the SLO bites */
        CHECK(b.preemptions == a.preemptions);
        CHECK(b.sim_time_s == a.sim_time_s && b.req_per_s == a.req_per_s && b.goodput_req_per_s == a.goodput_req_per_s);
        CHECK(b.input_tokens_per_s == a.input_tokens_per_s && b.output_tokens_per_s == a.output_tokens_per_s);
        CHECK(b.cache_hit_rate == a.cache_hit_rate && b.load_cv == a.load_cv && a.load_cv > 0);
        CHECK(b.mean_utilization == a.mean_utilization && b.mean_kv_occupancy == a.mean_kv_occupancy);
        CHECK(b.itl_ms.n == a.itl_ms.n);
        const sim_stat *sa[] = {&a.ttft_ms, &a.tpot_ms, &a.e2e_ms, &a.queue_ms, &a.pd.transfer_ms, &a.pd.backpressure_ms};
        const sim_stat *sb[] = {&b.ttft_ms, &b.tpot_ms, &b.e2e_ms, &b.queue_ms, &b.pd.transfer_ms, &b.pd.backpressure_ms};
        for (int k = 0; k < 6; k++) {
            CHECK(sb[k]->n == sa[k]->n && sa[k]->n > 0);
            /* The streamed mean is GSL's recurrence over the same values. */
            CHECK_MSG(sb[k]->mean == sa[k]->mean, "stat %d mean %.17g vs %.17g", k, sb[k]->mean, sa[k]->mean);
            CHECK_MSG(rel_close(sb[k]->p50, sa[k]->p50, eps), "stat %d p50 %.9g vs %.9g", k, sb[k]->p50, sa[k]->p50);
            CHECK_MSG(rel_close(sb[k]->p90, sa[k]->p90, eps), "stat %d p90 %.9g vs %.9g", k, sb[k]->p90, sa[k]->p90);
            CHECK_MSG(rel_close(sb[k]->p99, sa[k]->p99, eps), "stat %d p99 %.9g vs %.9g", k, sb[k]->p99, sa[k]->p99);
            CHECK_MSG(rel_close(sb[k]->p999, sa[k]->p999, eps), "stat %d p999 %.9g vs %.9g", k, sb[k]->p999,
                      sa[k]->p999);
        }
        CHECK(b.pd.enabled && b.pd.moved == a.pd.moved && b.pd.kv_bytes_moved == a.pd.kv_bytes_moved);
        CHECK(b.pd.ttft_queue_ms == a.pd.ttft_queue_ms && b.pd.ttft_prefill_ms == a.pd.ttft_prefill_ms);
        CHECK(b.pd.first_decode_ms == a.pd.first_decode_ms);
        /* Routed load: the same per instance, kept or streamed. */
        double la[4], lb[4];
        CHECK(sim_metrics_routed_load(whole, la) == 0 && sim_metrics_routed_load(capped[c], lb) == 0);
        CHECK(memcmp(la, lb, sizeof la) == 0 && la[0] > 0);
        /* Goodput was counted under the SLO of set_limits: another cannot be applied. */
        sim_slo_cfg other = {.ttft_ms = 100};
        CHECK(sim_metrics_summarize(capped[c], &other, 4, &b, &err) == SIM_EINVAL);
        CHECK_CONTAINS(err.msg, "cannot be recounted");
    }
    /* Per-group (pool) sample means: every sample, in arrival order. */
    double u0, k0, w0, b0, u1, k1, w1, b1;
    CHECK(sim_metrics_group_means(whole, 0, &u0, &k0, &w0, &b0) == 1);
    CHECK(sim_metrics_group_means(capped[0], 0, &u1, &k1, &w1, &b1) == 1);
    CHECK(u0 == u1 && k0 == k1 && w0 == w1 && b0 == b1 && u0 > 0);
    CHECK(sim_metrics_group_means(capped[1], 0, &u1, &k1, &w1, &b1) == SIM_EINVAL); /* no groups */
    CHECK(sim_metrics_group_means(whole, 2, &u1, &k1, &w1, &b1) == SIM_EINVAL);
    /* The output says what was kept. */
    sim_metrics_summarize(capped[0], &slo, 4, &b, NULL);
    char *js = test_summary_json(&b);
    CHECK_CONTAINS(js, "\"records\": {\"requests_kept\": 1000, \"samples_kept\": 100, \"samples\": 300, "
                       "\"percentiles\": \"sketch\"");
    json_error_t jerr;
    json_t *j = json_loads(js, 0, &jerr);
    CHECK_MSG(j != NULL, "%s", jerr.text);
    json_decref(j);
    free(js);
    js = test_summary_json(&a);
    CHECK(strstr(js, "records") == NULL); /* nothing capped: the output is as it always was */
    free(js);
    /* Limits only before the first record or sample. */
    CHECK(sim_metrics_set_limits(whole, 10, 10, NULL) == SIM_EINVAL);
    CHECK(sim_metrics_set_groups(whole, 2, groups) == SIM_EINVAL);
    sim_metrics *fresh = sim_metrics_create(4);
    CHECK(sim_metrics_set_limits(fresh, -1, 10, NULL) == SIM_EINVAL);
    int32_t bad_groups[4] = {0, 1, 2, 5};
    CHECK(sim_metrics_set_groups(fresh, 3, bad_groups) == SIM_EINVAL);
    sim_metrics_destroy(fresh);
out:
    sim_metrics_destroy(whole);
    sim_metrics_destroy(capped[0]);
    sim_metrics_destroy(capped[1]);
}

/* Past the cap the records do not grow: a million requests into a cap of
 * 10 keep 10, and the PD timestamps are checked like the others. */
static void test_capped_bounded(void)
{
    sim_metrics *m = sim_metrics_create(1);
    REQUIRE_OR(m != NULL, return);
    CHECK(sim_metrics_set_limits(m, 10, 10, NULL) == 0);
    for (int i = 0; i < 1000000; i++) {
        sim_req_record r = rec((uint64_t)i, (sim_time)i * MS, 1, 2 + i % 1000, 10, 90);
        if (sim_metrics_add_request(m, &r)) {
            CHECK(0);
            break;
        }
    }
    int64_t n = -1;
    sim_metrics_requests(m, &n);
    CHECK(n == 10 && sim_metrics_requests_seen(m) == 1000000);
    sim_summary s;
    CHECK(sim_metrics_summarize(m, NULL, 1, &s, NULL) == 0);
    CHECK(s.requests_completed == 1000000);
    CHECK_NEAR(s.ttft_ms.mean, 501.5, 1e-6);
    CHECK(rel_close(s.ttft_ms.p50, 501.5, SIM_METRICS_SKETCH_REL_ERROR));
    sim_req_record bad = rec(1, 0, 1, 10, 5, 10);
    bad.kv_bytes = 100;
    bad.kv_reserved = bad.first_token - 1; /* granted before the prefill finished */
    bad.kv_arrived = bad.first_token;
    CHECK(sim_metrics_add_request(m, &bad) == SIM_EINVAL);
    bad.kv_reserved = bad.first_token;
    bad.kv_arrived = bad.kv_reserved - 1; /* arrived before it was sent */
    CHECK(sim_metrics_add_request(m, &bad) == SIM_EINVAL);
    sim_metrics_destroy(m);
}

static const test_case cases[] = {
    {"percentiles", test_percentiles},
    {"tpot_goodput", test_tpot_goodput},
    {"rejects", test_rejects},
    {"itl", test_itl},
    {"empty", test_empty},
    {"json_table", test_json_table},
    {"scale", test_scale},
    {"capped", test_capped},
    {"capped_bounded", test_capped_bounded},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_metrics", cases);
}
