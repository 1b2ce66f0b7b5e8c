/* test_metrics — sim_metrics summaries on hand-made records with known
 * answers, the ITL histogram against a brute-force weighted quantile, and
 * the JSON/table printers (JSON parsed back with jansson). */
#include "sim_metrics.h"
#include "test_util.h"

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

static char *print_json(const sim_summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_summary_print_json(f, s);
    fclose(f);
    return buf;
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
    char *js = print_json(&s);
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

    char *js = print_json(&s);
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
    js = print_json(&s);
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

int main(void)
{
    test_percentiles();
    test_tpot_goodput();
    test_rejects();
    test_itl();
    test_empty();
    test_json_table();
    test_scale();
    return test_finish("test_metrics");
}
