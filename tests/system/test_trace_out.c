/* test_trace_out — the Chrome/Perfetto trace of a run: valid JSON with a
 * named track per instance, one complete event per iteration in the window
 * (args: prefill tokens, sequences, batch), queue and KV counters, and every
 * prefill->decode KV transfer as a begin/end pair joined by a flow; the
 * event cap truncates and says so, still valid JSON; the CLI refuses a
 * trace with a sweep. */
#include "test_util.h"

#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_trace_out.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *yaml =
    "name: t-trace\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
    "workload:\n  requests: 120\n  arrival: {process: poisson, rate: 20}\n"
    "  input_tokens: {dist: uniform, min: 256, max: 1024}\n  output_tokens: {dist: uniform, min: 16, max: 64}\n"
    "deployment:\n  mode: pd\n  pools:\n    - {role: prefill, instances: 1}\n    - {role: decode, instances: 2}\n";

typedef struct {
    int64_t x, c, b, e, s, f, names, batch_ok;
} counts;

static json_t *run_traced(const char *path, int64_t cap, sim_summary *sum, int64_t *written)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_cluster *cl = NULL;
    sim_trace_out *t = NULL;
    CHECK(sim_loader_load_string(yaml, strlen(yaml), "t", NULL, 0, sc, &err) == 0);
    CHECK(sim_cluster_create(sc, &cl, &err) == 0);
    CHECK(sim_trace_out_open(path, 0, 0, cap, &t, &err) == 0);
    if (cl && t) {
        sim_cluster_set_trace(cl, t);
        CHECK(sim_cluster_run(cl, sum, &err) == 0);
    }
    CHECK(sim_trace_out_close(t, written, &err) == 0);
    sim_cluster_destroy(cl);
    free(sc);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    CHECK_MSG(j != NULL, "%s: %s at line %d", path, je.text, je.line);
    return j;
}

static counts count(json_t *j)
{
    counts k = {0};
    json_t *ev = json_object_get(j, "traceEvents");
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (!ph) continue;
        if (!strcmp(ph, "X")) {
            k.x++;
            json_t *a = json_object_get(e, "args");
            k.batch_ok += json_integer_value(json_object_get(a, "batch")) ==
                          json_integer_value(json_object_get(a, "prefill_seqs")) +
                              json_integer_value(json_object_get(a, "decode_seqs"));
        } else if (!strcmp(ph, "C")) k.c++;
        else if (!strcmp(ph, "b")) k.b++;
        else if (!strcmp(ph, "e")) k.e++;
        else if (!strcmp(ph, "s")) k.s++;
        else if (!strcmp(ph, "f")) k.f++;
        else if (!strcmp(ph, "M") && !strcmp(json_string_value(json_object_get(e, "name")), "thread_name")) k.names++;
    }
    return k;
}

/* A traced PD run: per instance its iterations, counters and KV transfers, one event per request phase, nothing dropped. */
/* The servesim binary and source folder (argv), and the trace file the
 * cases write (made by main). */
static const char *bin, *src;
static char trace_path[] = "/tmp/test_trace_out_XXXXXX";

static void case_events(void)
{
    sim_summary sum;
    int64_t written = 0;
    json_t *j = run_traced(trace_path, 0, &sum, &written);
    counts k = count(j);
    CHECK(k.names == 3);                                  /* 1 prefill + 2 decode instances */
    CHECK(k.x > 0 && k.batch_ok == k.x);
    CHECK(k.c == 2 * k.x);                                /* queue and KV used per iteration */
    CHECK_MSG(k.b == sum.requests_completed && k.e == k.b, "%lld transfers for %lld requests", (long long)k.b,
              (long long)sum.requests_completed);
    CHECK(k.s == k.b && k.f == k.e);
    CHECK(json_integer_value(json_object_get(json_object_get(j, "otherData"), "dropped_events")) == 0);
    CHECK((int64_t)json_array_size(json_object_get(j, "traceEvents")) == written);
    json_decref(j);
}

static void case_cap(void)
{
    /* The cap: truncated, said so, still JSON. */
    sim_summary sum;
    int64_t written = 0;
    json_t *j = run_traced(trace_path, 50, &sum, &written);
    CHECK(json_integer_value(json_object_get(json_object_get(j, "otherData"), "dropped_events")) > 0);
    counts kc = count(j);
    CHECK(kc.x + kc.c + kc.b + kc.e + kc.s + kc.f == 50);
    json_decref(j);
    unlink(trace_path);
}

static void case_cli_window(void)
{
    /* CLI: a window. */
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --quiet --set workload.requests=200 "
             "--trace %s --trace-window 1:2 2>&1", bin, src, trace_path);
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "trace: ");
    free(out);
    json_t *j = json_load_file(trace_path, 0, NULL);
    CHECK(j != NULL);
    json_t *ev = json_object_get(j, "traceEvents");
    int inside = 1, nx = 0;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        json_t *ts = json_object_get(e, "ts");
        if (json_is_number(ts) && !strcmp(json_string_value(json_object_get(e, "ph")), "X")) {
            nx++;
            inside &= json_number_value(ts) >= 1e6 && json_number_value(ts) < 2e6;
        }
    }
    CHECK(nx > 0 && inside);
    json_decref(j);
    unlink(trace_path);
}

/* No trace of a sweep; a window that ends before it starts. */
static void case_cli_refusals(void)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --sweep workload.arrival.rate=1,2 "
             "--trace %s 2>&1", bin, src, trace_path);
    CHECK(test_sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--trace records one run");
    free(out);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --trace-window 5:1 2>&1", bin, src);
    CHECK(test_sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--trace-window");
    free(out);
}

static const test_case cases[] = {
    {"events", case_events},
    {"cap", case_cap},
    {"cli_window", case_cli_window},
    {"cli_refusals", case_cli_refusals},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    bin = argc > 1 ? argv[1] : "servesim", src = test_src_dir();
    int fd = mkstemp(trace_path);
    REQUIRE_OR(fd >= 0, return test_finish("test_trace_out"));
    close(fd);
    int rc = test_run("test_trace_out", cases);
    unlink(trace_path);
    return rc;
}
