/* test_loader — the strict scenario loader: round trip of every key, every
 * error path with its message, --set overrides, path resolution and the
 * generated reference (docs/scenario-reference.md must match the schema;
 * SERVESIM_WRITE_REFERENCE=1 rewrites it). */
#include "test_util.h"

#include "sim_file.h"
#include "sim_loader.h"
#include "sim_schema.h"

#include <stdlib.h>
#include <string.h>

static const char *src_dir = ".";

static int load(const char *yaml, const char *const *sets, int n_sets, sim_scenario *sc, sim_err *err)
{
    err->msg[0] = '\0';
    return sim_loader_load_string(yaml, strlen(yaml), "t.yaml", sets, n_sets, sc, err);
}

/* Loads and expects failure; returns the message for CHECK_CONTAINS. */
static const char *load_fail(const char *yaml, const char *const *sets, int n_sets)
{
    static sim_err err;
    sim_scenario sc;
    int rc = load(yaml, sets, n_sets, &sc, &err);
    CHECK_MSG(rc < 0, "expected failure for:\n%s", yaml);
    return err.msg;
}

static void test_defaults(void)
{
    sim_scenario sc, def;
    sim_err err;
    sim_scenario_defaults(&def);
    CHECK(load("{}", NULL, 0, &sc, &err) == 0);
    CHECK(strcmp(sc.name, def.name) == 0 && strcmp(sc.model, def.model) == 0);
    CHECK(sc.seed == def.seed && sc.workload.requests == def.workload.requests);
    CHECK(sc.deployment.n_pools == 1 && sc.deployment.pools[0].scheduler.max_seqs == 256);
    CHECK(sc.source_path[0] == '\0');
    /* Empty sections keep their defaults. */
    CHECK_MSG(load("model: x\nworkload:\nhardware: ~\n", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(strcmp(sc.model, "x") == 0 && sc.hardware.gpus_per_node == 8);
}

static void test_full_file(void)
{
    char path[1024], want[1200];
    sim_scenario sc;
    sim_err err;
    snprintf(path, sizeof path, "%s/tests/data/loader/full.yaml", src_dir);
    int rc = sim_loader_load_file(path, NULL, 0, &sc, &err);
    REQUIRE_MSG(rc == 0, "%s", err.msg);
    CHECK(strcmp(sc.name, "full-test") == 0);
    CHECK(sc.seed == 12345678901234ULL);
    snprintf(want, sizeof want, "%s/tests/data/loader/configs/qwen3.json", src_dir);
    CHECK_MSG(strcmp(sc.model, want) == 0, "model %s", sc.model);
    CHECK(sc.dtype == SIM_DTYPE_FP8 && sc.kv_dtype == SIM_DTYPE_FP8);
    CHECK(strcmp(sc.hardware.gpu, "h200") == 0 && sc.hardware.gpus_per_node == 4);
    const sim_workload_cfg *w = &sc.workload;
    CHECK(w->requests == 2000);
    CHECK_NEAR(w->duration_s, 120.5, 0);
    CHECK(w->arrival.process == SIM_ARRIVAL_GAMMA);
    CHECK_NEAR(w->arrival.rate, 20, 0);
    CHECK_NEAR(w->arrival.cv, 2.5, 0);
    CHECK(w->arrival.concurrency == 32);
    CHECK_NEAR(w->arrival.think_time_s, 0.25, 0);
    CHECK(w->input_tokens.dist == SIM_DIST_LOGNORMAL);
    CHECK_NEAR(w->input_tokens.mean, 1024, 0);
    CHECK_NEAR(w->input_tokens.std, 512, 0);
    CHECK(w->input_tokens.min == 16 && w->input_tokens.max == 8192);
    CHECK(w->output_tokens.dist == SIM_DIST_EMPIRICAL);
    CHECK_NEAR(w->output_tokens.value, 300, 0);
    CHECK_NEAR(w->output_tokens.s, 1.3, 1e-12);
    CHECK(w->output_tokens.max == 32768); /* untouched default */
    snprintf(want, sizeof want, "%s/tests/data/loader/lengths/out.txt", src_dir);
    CHECK_MSG(strcmp(w->output_tokens.path, want) == 0, "path %s", w->output_tokens.path);
    CHECK(w->trace.format == SIM_TRACE_MOONCAKE);
    snprintf(want, sizeof want, "%s/tests/data/loader/traces/conv.jsonl", src_dir);
    CHECK(strcmp(w->trace.path, want) == 0);
    CHECK_NEAR(w->trace.time_scale, 2, 0);
    CHECK_NEAR(w->trace.rate_scale, 0.5, 0);
    const sim_deploy_cfg *d = &sc.deployment;
    CHECK(d->mode == SIM_MODE_COLOCATED && d->n_pools == 2);
    CHECK(d->pools[0].role == SIM_ROLE_COLOCATED && d->pools[0].instances == 4);
    CHECK(strcmp(d->pools[0].gpu, "b200") == 0);
    CHECK(d->pools[0].parallel.tp == 2 && d->pools[0].parallel.pp == 1);
    CHECK(d->pools[0].scheduler.max_seqs == 128 && d->pools[0].scheduler.max_batched_tokens == 4096);
    CHECK(d->pools[0].scheduler.chunk_tokens == 512 && d->pools[0].scheduler.block_tokens == 32);
    CHECK_NEAR(d->pools[0].scheduler.gpu_mem_util, 0.85, 0);
    CHECK_NEAR(d->pools[0].scheduler.reserve_gb, 3.5, 0);
    CHECK_NEAR(d->pools[0].scheduler.overhead_us, 900, 0);
    /* The second pool starts from the defaults, not from pool 0. */
    CHECK(d->pools[1].instances == 2 && d->pools[1].parallel.tp == 4 && d->pools[1].parallel.pp == 1);
    CHECK(d->pools[1].scheduler.max_seqs == 256 && d->pools[1].gpu[0] == '\0');
    CHECK(sc.routing.policy == SIM_ROUTE_LEAST_LOADED);
    CHECK_NEAR(sc.slo.ttft_ms, 2000, 0);
    CHECK_NEAR(sc.slo.tpot_ms, 50, 0);
    CHECK(strcmp(sc.output.db, "/tmp/results.db") == 0); /* absolute: unchanged */
    CHECK(sc.output.store_requests == 0);
    CHECK_NEAR(sc.output.sample_interval_s, 0.5, 0);
    CHECK(sc.overload.enabled == 0 && sc.overload.max_waiting == 5000);
    CHECK_NEAR(sc.overload.max_queue_delay_s, 30, 0);
    CHECK(strcmp(sc.source_path, path) == 0);
}

static void test_paths(void)
{
    char path[1024], want[1200];
    sim_scenario sc;
    sim_err err;
    snprintf(path, sizeof path, "%s/tests/data/loader/relative.yaml", src_dir);
    const char *sets[] = {"workload.trace.path=cli.jsonl", "workload.trace.format=csv"};
    int rc = sim_loader_load_file(path, sets, 2, &sc, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    snprintf(want, sizeof want, "%s/tests/data/loader/in.txt", src_dir);
    CHECK_MSG(strcmp(sc.workload.input_tokens.path, want) == 0, "%s", sc.workload.input_tokens.path);
    /* Outputs land in the working directory, not beside the scenario. */
    CHECK_MSG(strcmp(sc.output.db, "out/results.db") == 0, "%s", sc.output.db);
    CHECK(strcmp(sc.model, "llama-3.1-8b") == 0); /* a catalogue name is not a path */
    CHECK(strcmp(sc.workload.trace.path, "cli.jsonl") == 0); /* --set paths: current directory */
    CHECK(sc.workload.trace.format == SIM_TRACE_CSV);
    /* In-memory documents resolve against the current directory. */
    CHECK(load("output: {db: r.db}\nmodel: m/config.json\n", NULL, 0, &sc, &err) == 0);
    CHECK(strcmp(sc.output.db, "r.db") == 0 && strcmp(sc.model, "m/config.json") == 0);
    /* Output file names: joined without doubled slashes, stems from names. */
    char j[64];
    CHECK(sim_file_join(j, sizeof j, "out/", "a.png") == 0 && strcmp(j, "out/a.png") == 0);
    CHECK(sim_file_join(j, sizeof j, "out//", "a.png") == 0 && strcmp(j, "out/a.png") == 0);
    CHECK(sim_file_join(j, sizeof j, "out", "a.png") == 0 && strcmp(j, "out/a.png") == 0);
    CHECK(sim_file_join(j, sizeof j, "/", "a.png") == 0 && strcmp(j, "/a.png") == 0);
    CHECK(sim_file_join(j, sizeof j, "", "a.png") == 0 && strcmp(j, "a.png") == 0);
    CHECK(sim_file_join(j, 4, "out", "a.png") == SIM_ERANGE);
    sim_file_stem(j, sizeof j, "my run/v2");
    CHECK(strcmp(j, "my_run_v2") == 0);
    sim_file_stem(j, sizeof j, "");
    CHECK(strcmp(j, "servesim") == 0);
    /* Missing file. */
    rc = sim_loader_load_file("/nonexistent/servesim/x.yaml", NULL, 0, &sc, &err);
    CHECK(rc == SIM_EIO);
    CHECK_CONTAINS(err.msg, "/nonexistent/servesim/x.yaml");
    /* A file name without a folder leaves paths as written. */
    FILE *f = fopen("loader_test_tmp.yaml", "w");
    REQUIRE(f != NULL);
    fputs("output: {db: here.db}\n", f);
    fclose(f);
    CHECK(sim_loader_load_file("loader_test_tmp.yaml", NULL, 0, &sc, &err) == 0);
    CHECK(strcmp(sc.output.db, "here.db") == 0);
    CHECK(strcmp(sc.source_path, "loader_test_tmp.yaml") == 0);
    remove("loader_test_tmp.yaml");
}

static void test_key_errors(void)
{
    const char *m = load_fail("workload:\n  reqests: 5\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:3: unknown key 'reqests' at workload.reqests (did you mean 'requests'?)");
    m = load_fail("modle: x\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:1: unknown key 'modle' at modle (did you mean 'model'?)");
    m = load_fail("deployment:\n  pools:\n    - role: colocated\n      schedular: {max_seqs: 3}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:4:7: unknown key 'schedular' at deployment.pools.0.schedular (did you mean 'scheduler'?)");
    /* Nothing close: list the keys instead. */
    m = load_fail("hardware: {zzzzzzzz: 1}\n", NULL, 0);
    CHECK_CONTAINS(m, "unknown key 'zzzzzzzz' at hardware.zzzzzzzz (known keys: gpu, perf_db, op_params_gpu, gpus_per_node, op_speedup)");
    /* Dotted keys are not a way around the nesting. */
    m = load_fail("workload.requests: 5\n", NULL, 0);
    CHECK_CONTAINS(m, "unknown key 'workload.requests'");
    m = load_fail("workload:\n  requests: 1\n  arrival: {rate: 2}\n  requests: 3\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:4:3: duplicate key 'requests' at workload.requests (first defined at line 2, column 3)");
    m = load_fail("deployment:\n  pools:\n    - {instances: 1, instances: 2}\n", NULL, 0);
    CHECK_CONTAINS(m, "duplicate key 'instances' at deployment.pools.0.instances");
}

static void test_value_errors(void)
{
    const char *m = load_fail("workload:\n  arrival:\n    rate: fast\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:3:11: workload.arrival.rate: expected a number");
    CHECK_CONTAINS(m, "got 'fast'");
    m = load_fail("workload: {arrival: {rate: -3}}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:28: workload.arrival.rate: expected a number > 0, got -3");
    m = load_fail("workload: {arrival: {process: bursty}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.arrival.process: expected one of poisson|gamma|constant|closed_loop|schedule, got 'bursty'");
    m = load_fail("dtype: int8\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:8: dtype: expected one of auto|bf16|fp8|fp8_block|mxfp8|nvfp4|mxfp4|int4, got 'int8'");
    m = load_fail("deployment: {pools: [{scheduler: {gpu_mem_util: 1.5}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools.0.scheduler.gpu_mem_util: expected a number in (0, 1], got 1.5");
    load_fail("deployment: {pools: [{scheduler: {gpu_mem_util: 0}}]}\n", NULL, 0);
    sim_scenario sc;
    sim_err err;
    CHECK(load("deployment: {pools: [{scheduler: {gpu_mem_util: 1}}]}\n", NULL, 0, &sc, &err) == 0);
    m = load_fail("deployment: {pools: [{parallel: {tp: 2000}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools.0.parallel.tp: expected an integer in 1..1024, got 2000");
    m = load_fail("deployment: {pools: [{instances: 2.5}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "expected an integer in 1..100000, got '2.5'");
    m = load_fail("deployment: {pools: [{scheduler: {max_batched_tokens: 99999999999}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "max_batched_tokens: expected an integer >= 1, got 99999999999");
    m = load_fail("deployment: {pools: [{scheduler: {max_batched_tokens: 0}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "max_batched_tokens: expected an integer >= 1, got 0");
    m = load_fail("output: {store_requests: maybe}\n", NULL, 0);
    CHECK_CONTAINS(m, "output.store_requests: expected true or false, got 'maybe'");
    m = load_fail("output: {request_records: -5}\n", NULL, 0);
    CHECK_CONTAINS(m, "output.request_records: expected an integer >= 0, got -5");
    CHECK(load("output: {request_records: 0, sample_records: 7}\n", NULL, 0, &sc, &err) == 0 &&
          sc.output.request_records == 0 && sc.output.sample_records == 7);
    CHECK(load("{}\n", NULL, 0, &sc, &err) == 0 && sc.output.request_records == 1000000);
    m = load_fail("seed: -1\n", NULL, 0);
    CHECK_CONTAINS(m, "seed: expected an integer >= 0, got '-1'");
    CHECK(load("seed: 18446744073709551615\n", NULL, 0, &sc, &err) == 0 && sc.seed == UINT64_MAX);
    m = load_fail("workload: {arrival: {rate: nan}}\n", NULL, 0);
    CHECK_CONTAINS(m, "got 'nan'");
    m = load_fail("workload: {arrival: {rate: }}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.arrival.rate: expected a number > 0, got an empty value");
    /* Shape mismatches both ways. */
    m = load_fail("workload:\n  requests: {a: 1}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:13: workload.requests: expected an integer >= 0, got a mapping");
    m = load_fail("name: [a, b]\n", NULL, 0);
    CHECK_CONTAINS(m, "name: expected a string, got a list");
    m = load_fail("workload: 5\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:11: workload: expected a mapping with keys requests, duration_s, arrival");
    CHECK_CONTAINS(m, "got '5'");
    m = load_fail("deployment:\n  pools: {role: colocated}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:10: deployment.pools: expected a list of 1..8 items, got a mapping");
    m = load_fail("deployment: {pools: []}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools: expected a list of 1..8 items, got 0");
    m = load_fail("deployment: {pools: [{}, {}, {}, {}, {}, {}, {}, {}, {}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "got 9");
    m = load_fail("model: ''\n", NULL, 0);
    CHECK_CONTAINS(m, "model: expected a model name or config path");
}

static void test_document_errors(void)
{
    const char *m = load_fail("", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:1: empty scenario");
    m = load_fail("# just a comment\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:1: empty scenario");
    m = load_fail("- a\n- b\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:1: the top level must be a mapping");
    CHECK_CONTAINS(m, "got a list");
    m = load_fail("hello\n", NULL, 0);
    CHECK_CONTAINS(m, "got 'hello'");
    m = load_fail("workload: [1, 2\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']'");
    m = load_fail("name: a\n  seed: 3\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:7: YAML syntax error: mapping values are not allowed in this context");
    m = load_fail("name: \"abc\n", NULL, 0);
    CHECK_CONTAINS(m, "YAML syntax error");
    m = load_fail("name: a\n\tseed: 1\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:");
    m = load_fail("name: &a x\nmodel: *a\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:8: YAML aliases (*a) are not supported");
    m = load_fail("name: a\n---\nname: b\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:1: a scenario file holds one YAML document");
    m = load_fail("? [a]\n: 1\n", NULL, 0);
    CHECK_CONTAINS(m, "mapping keys must be plain words");
    /* Invalid UTF-8 is a reader error with a computed position. */
    m = load_fail("name: ok\nmodel: \xff\xfe\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:8: YAML syntax error");
    /* Deep nesting is refused, not recursed into. */
    char deep[400];
    memset(deep, '[', 300);
    deep[300] = '\0';
    m = load_fail(deep, NULL, 0);
    CHECK_CONTAINS(m, "nesting deeper than");
    /* `out` is never half-written. */
    sim_scenario sc;
    sim_err err;
    memset(&sc, 0x5a, sizeof sc);
    CHECK(load("name: changed\nworkload: {requests: x}\n", NULL, 0, &sc, &err) < 0);
    CHECK(sc.name[0] == 0x5a && sc.seed == 0x5a5a5a5a5a5a5a5aULL);
    /* NULL err is allowed. */
    CHECK(sim_loader_load_string("x: 1", 4, "n", NULL, 0, &sc, NULL) < 0);
}

static void test_cross_field(void)
{
    const char *m = load_fail("workload:\n  input_tokens: {dist: uniform, min: 100, max: 10}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:48: workload.input_tokens.max: dist uniform needs min <= max, got min 100 and max 10");
    m = load_fail("workload: {output_tokens: {dist: fixed, value: 0}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.output_tokens.value: dist fixed needs value >= 1, got 0");
    m = load_fail("workload: {input_tokens: {dist: normal, mean: 0, std: 3}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.input_tokens.mean: dist normal needs mean > 0, got 0");
    m = load_fail("workload: {input_tokens: {dist: lognormal, mean: 5, std: -1}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.input_tokens.std: expected a number >= 0, got -1");
    m = load_fail("workload: {input_tokens: {dist: zipf, s: 0}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.input_tokens.s: dist zipf needs s > 0, got 0");
    m = load_fail("workload: {input_tokens: {dist: zipf, min: 50, max: 5}}\n", NULL, 0);
    CHECK_CONTAINS(m, "dist zipf needs min <= max");
    m = load_fail("workload:\n  input_tokens: {dist: empirical}\n", NULL, 0);
    /* No path key: the message points at the nearest key that exists. */
    CHECK_CONTAINS(m, "t.yaml:2:17: workload.input_tokens.path: dist empirical needs a path");
    m = load_fail("workload: {arrival: {process: closed_loop, concurrency: 0}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.arrival.concurrency: process closed_loop needs concurrency >= 1, got 0");
    m = load_fail("workload: {trace: {path: a.jsonl}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.trace.path: a trace path needs workload.trace.format (mooncake|csv)");
    m = load_fail("workload: {trace: {format: csv}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.trace.format: trace format csv needs workload.trace.path");
    m = load_fail("workload: {requests: 0}\n", NULL, 0);
    CHECK_CONTAINS(m, "the run would never end");
    sim_scenario sc;
    sim_err err;
    CHECK(load("workload: {requests: 0, trace: {format: mooncake, path: t.jsonl}}\n", NULL, 0, &sc, &err) == 0);
    CHECK(load("workload: {requests: 0, duration_s: 60}\n", NULL, 0, &sc, &err) == 0);
    m = load_fail("deployment: {pools: [{scheduler: {max_batched_tokens: 256, chunk_tokens: 512}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools.0.scheduler.chunk_tokens: chunk_tokens (512) must be <= max_batched_tokens (256)");
    m = load_fail("deployment:\n  pools:\n    - role: colocated\n    - role: prefill\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:4:13: deployment.pools.1.role: role prefill is not allowed in mode colocated (allowed: colocated)");
    m = load_fail("deployment:\n  mode: pd\n  pools: [{role: prefill}]\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:2:9: deployment.mode: mode pd needs at least one pool with role decode");
    m = load_fail("deployment: {mode: af, pools: [{role: attention}, {role: decode}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "role decode is not allowed in mode af (allowed: attention, ffn)");
    m = load_fail("deployment: {mode: pd+af, pools: [{role: attention}, {role: ffn}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "mode pd+af needs at least one pool with role prefill");
    CHECK(load("deployment: {mode: pd, pools: [{role: prefill, instances: 2}, {role: decode}]}\n", NULL, 0,
               &sc, &err) == 0);
    CHECK(sc.deployment.mode == SIM_MODE_PD && sc.deployment.n_pools == 2 &&
          sc.deployment.pools[1].role == SIM_ROLE_DECODE);
    CHECK(load("deployment: {mode: af, pools: [{role: attention}, {role: ffn}]}\n", NULL, 0, &sc, &err) == 0);
    CHECK(load("deployment: {mode: pd+af, pools: [{role: prefill}, {role: attention}, {role: ffn}]}\n", NULL,
               0, &sc, &err) == 0);
    CHECK(sc.deployment.mode == SIM_MODE_PD_AF && sc.deployment.n_pools == 3);
}

static void test_overrides(void)
{
    sim_scenario sc;
    sim_err err;
    const char *base = "workload:\n  arrival: {rate: 20}\ndeployment:\n  pools:\n    - instances: 2\n";
    const char *s1[] = {"workload.arrival.rate=40", "hardware.gpu=h200", "deployment.pools.0.instances=8",
                        "deployment.pools.1.role=colocated", "deployment.pools.1.parallel.tp=4",
                        "name=\"hello: world\"", "output.db=", "seed=7"};
    int rc = load(base, s1, 8, &sc, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    CHECK_NEAR(sc.workload.arrival.rate, 40, 0);
    CHECK(strcmp(sc.hardware.gpu, "h200") == 0);
    CHECK(sc.deployment.n_pools == 2 && sc.deployment.pools[0].instances == 8);
    CHECK(sc.deployment.pools[1].parallel.tp == 4 && sc.deployment.pools[1].instances == 1);
    CHECK(strcmp(sc.name, "hello: world") == 0);
    CHECK(sc.output.db[0] == '\0' && sc.seed == 7);
    /* A list the file does not have is created from index 0. */
    const char *s2[] = {"deployment.pools.0.instances=8"};
    CHECK(load("model: m\n", s2, 1, &sc, &err) == 0);
    CHECK(sc.deployment.n_pools == 1 && sc.deployment.pools[0].instances == 8);
    /* A whole section as a YAML flow mapping; later --set wins. */
    const char *s3[] = {"workload.arrival={process: closed_loop, concurrency: 4}", "workload.arrival.concurrency=9"};
    CHECK(load(base, s3, 2, &sc, &err) == 0);
    CHECK(sc.workload.arrival.process == SIM_ARRIVAL_CLOSED && sc.workload.arrival.concurrency == 9);
    CHECK_NEAR(sc.workload.arrival.rate, 10, 0); /* the section was replaced */

    const char *e1[] = {"deployment.pools.0.instances=abc"};
    const char *m = load_fail(base, e1, 1);
    CHECK_MSG(strncmp(m, "--set deployment.pools.0.instances=abc: expected an integer", 59) == 0, "%s", m);
    CHECK_CONTAINS(m, "got 'abc'");
    const char *e2[] = {"deployment.pools.0.instnces=8"};
    m = load_fail(base, e2, 1);
    CHECK_CONTAINS(m, "--set deployment.pools.0.instnces=8: unknown key 'instnces' at deployment.pools.0.instnces (did you mean 'instances'?)");
    const char *e3[] = {"deployment.pools.3.instances=1"};
    m = load_fail(base, e3, 1);
    CHECK_CONTAINS(m, "--set deployment.pools.3.instances=1: index 3 is past the end of deployment.pools (it has 1 items");
    const char *e4[] = {"deployment.pools.x.instances=1"};
    m = load_fail(base, e4, 1);
    CHECK_CONTAINS(m, "'x' is not a list index");
    const char *e5[] = {"workload.arival.rate=3"};
    m = load_fail(base, e5, 1);
    CHECK_CONTAINS(m, "unknown key 'arival' at workload.arival (did you mean 'arrival'?)");
    const char *e6[] = {"workload.arrival.rate"};
    m = load_fail(base, e6, 1);
    CHECK_CONTAINS(m, "--set workload.arrival.rate: expected key.path=value");
    const char *e7[] = {"name.first=x"};
    m = load_fail(base, e7, 1);
    CHECK_CONTAINS(m, "--set name.first=x: name is a single value");
    const char *e8[] = {"hardware.gpu=h200"};
    m = load_fail("hardware: h100\n", e8, 1);
    CHECK_CONTAINS(m, "cannot set a key inside hardware: t.yaml:1:11 holds 'h100'");
    const char *e9[] = {"workload.arrival.rate=-3"};
    m = load_fail(base, e9, 1);
    CHECK_CONTAINS(m, "--set workload.arrival.rate=-3: expected a number > 0, got -3");
    const char *e10[] = {"workload.arrival={rate: x}"};
    m = load_fail(base, e10, 1);
    CHECK_CONTAINS(m, "--set workload.arrival={rate: x}: workload.arrival.rate: expected a number");
    const char *e11[] = {"workload.arrival.rate=[1"};
    m = load_fail(base, e11, 1);
    CHECK_CONTAINS(m, "--set workload.arrival.rate=[1: YAML syntax error: did not find expected ',' or ']'");
    const char *e12[] = {"deployment.mode=pd"};
    m = load_fail(base, e12, 1);
    CHECK_CONTAINS(m, "role colocated is not allowed in mode pd");
    const char *e13[] = {"workload..requests=5"};
    m = load_fail(base, e13, 1);
    CHECK_CONTAINS(m, "--set workload..requests=5: empty key in the key path");
    const char *e14[] = {"=5"};
    m = load_fail(base, e14, 1);
    CHECK_CONTAINS(m, "--set =5: expected key.path=value");
    const char *e15[] = {"workload.arrival={raet: 3}"};
    m = load_fail(base, e15, 1);
    CHECK_CONTAINS(m, "--set workload.arrival={raet: 3}: unknown key 'raet' at workload.arrival.raet (did you mean 'rate'?)");
    /* Errors in the file are still found when overrides are fine. */
    const char *ok[] = {"seed=1"};
    m = load_fail("workload: {reqests: 3}\n", ok, 1);
    CHECK_CONTAINS(m, "did you mean 'requests'");
}

static void test_schema_names(void)
{
    /* The schema's enum names must be the names sim_scenario prints. */
    const sim_schema_field *f = sim_schema_lookup("workload.arrival.process");
    CHECK(f && f->n_names == 5);
    for (int i = 0; f && i < f->n_names; i++) CHECK(strcmp(f->names[i], sim_arrival_name((sim_arrival_kind)i)) == 0);
    f = sim_schema_lookup("workload.input_tokens.dist");
    for (int i = 0; f && i < f->n_names; i++) CHECK(strcmp(f->names[i], sim_dist_name((sim_dist_kind)i)) == 0);
    f = sim_schema_lookup("deployment.mode");
    for (int i = 0; f && i < f->n_names; i++) CHECK(strcmp(f->names[i], sim_mode_name((sim_deploy_mode)i)) == 0);
    f = sim_schema_lookup("deployment.pools.*.role");
    for (int i = 0; f && i < f->n_names; i++) CHECK(strcmp(f->names[i], sim_role_name((sim_role)i)) == 0);
    f = sim_schema_lookup("routing.policy");
    for (int i = 0; f && i < f->n_names; i++)
        CHECK(strcmp(f->names[i], sim_route_policy_name((sim_route_policy)i)) == 0);
    CHECK(sim_schema_edit_distance("reqests", "requests") == 1);
    CHECK(sim_schema_edit_distance("", "abc") == 3);
    CHECK(sim_schema_edit_distance("kitten", "sitting") == 3);
}

/* The names the schema parses once into the scenario's C enums: the
 * value lands in the struct, a wrong name is refused with the key path and
 * the names, and every table entry prints back as its own name. */
static void test_typed_enums(void)
{
    sim_scenario sc;
    sim_err err;
    REQUIRE(load("deployment: {pools: [{parallel: {sp_kind: ring, ep_mode: low_latency, moe_gemm: masked}}]}\n",
                 NULL, 0, &sc, &err) == 0);
    const sim_parallel_cfg *p = &sc.deployment.pools[0].parallel;
    CHECK(p->sp_kind == SIM_SP_RING && p->ep_mode == SIM_EP_LOW_LATENCY && p->moe_gemm == SIM_MOE_GEMM_MASKED);
    REQUIRE(load("model: llama-3.1-8b\n", NULL, 0, &sc, &err) == 0);
    p = &sc.deployment.pools[0].parallel;
    CHECK(p->sp_kind == SIM_SP_ULYSSES && p->ep_mode == SIM_EP_AUTO && p->moe_gemm == SIM_MOE_GEMM_AUTO);
    const char *m = load_fail("deployment: {pools: [{parallel: {sp_kind: Ring}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:43: deployment.pools.0.parallel.sp_kind: expected one of ulysses|ring, got 'Ring'");
    const char *set[] = {"deployment.pools.0.parallel.ep_mode=fast"};
    m = load_fail("model: llama-3.1-8b\n", set, 1);
    CHECK_CONTAINS(m, "parallel.ep_mode=fast: expected one of auto|normal|low_latency|alltoall|allgather, got 'fast'");
    REQUIRE(load("deployment: {pools: [{parallel: {ep_mode: alltoall}}, {parallel: {ep_mode: allgather}}]}\n", NULL,
                 0, &sc, &err) == 0);
    CHECK(sc.deployment.pools[0].parallel.ep_mode == SIM_EP_ALLTOALL &&
          sc.deployment.pools[1].parallel.ep_mode == SIM_EP_ALLGATHER);
    m = load_fail("deployment: {pools: [{parallel: {moe_gemm: 1}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "parallel.moe_gemm: expected one of auto|contiguous|masked, got '1'");
    const sim_schema_field *f = sim_schema_lookup("deployment.pools.*.parallel.ep_mode");
    REQUIRE(f != NULL);
    CHECK(sim_schema_enum_value(f, "normal") == SIM_EP_NORMAL);
    CHECK(sim_schema_enum_value(f, "Normal") == -1 && sim_schema_enum_value(f, "") == -1);
    for (int i = 0; i < SIM_SP_KINDS; i++) CHECK(strcmp(sim_sp_kind_name((sim_sp_kind)i), sim_sp_kind_names[i]) == 0);
    for (int i = 0; i < SIM_EP_MODES; i++) {
        CHECK(strcmp(sim_ep_mode_name((sim_ep_mode)i), sim_ep_mode_names[i]) == 0);
        CHECK(sim_schema_enum_value(f, sim_ep_mode_names[i]) == i);
    }
    for (int i = 0; i < SIM_MOE_GEMMS; i++)
        CHECK(strcmp(sim_moe_gemm_name((sim_moe_gemm)i), sim_moe_gemm_names[i]) == 0);
    CHECK(strcmp(sim_ep_mode_name((sim_ep_mode)7), "?") == 0);

    /* dtype and kv_dtype: one table, kv_dtype's names from bf16 to nvfp4. */
    REQUIRE(load("dtype: int4\nkv_dtype: fp8_block\n", NULL, 0, &sc, &err) == 0);
    CHECK(sc.dtype == SIM_DTYPE_INT4 && sc.kv_dtype == SIM_DTYPE_FP8_BLOCK);
    REQUIRE(load("{}\n", NULL, 0, &sc, &err) == 0);
    CHECK(sc.dtype == SIM_DTYPE_AUTO && sc.kv_dtype == SIM_DTYPE_BF16);
    m = load_fail("kv_dtype: auto\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:11: kv_dtype: expected one of bf16|fp8|fp8_block|mxfp8|nvfp4, got 'auto'");
    m = load_fail("dtype: FP8\n", NULL, 0);
    CHECK_CONTAINS(m, "dtype: expected one of auto|bf16|fp8|fp8_block|mxfp8|nvfp4|mxfp4|int4, got 'FP8'");
    f = sim_schema_lookup("kv_dtype");
    REQUIRE(f != NULL);
    CHECK(sim_schema_enum_value(f, "nvfp4") == SIM_DTYPE_NVFP4 && sim_schema_enum_value(f, "mxfp4") == -1);
    CHECK(strcmp(sim_schema_enum_name(f, SIM_DTYPE_BF16), "bf16") == 0 && sim_schema_enum_name(f, 0) == NULL);
    for (int i = 0; i < SIM_DTYPES; i++) CHECK(strcmp(sim_dtype_name((sim_dtype)i), sim_dtype_names[i]) == 0);

    /* The PD hand-over's names. */
    REQUIRE(load("model: llama-3.1-8b\n", NULL, 0, &sc, &err) == 0);
    CHECK(sc.deployment.kv_transfer == SIM_KV_WHOLE && sc.deployment.decode_routing == SIM_DECODE_LEAST_LOADED &&
          sc.deployment.decode_pick == SIM_DECODE_PICK_PREFILL_END);
    REQUIRE(load("deployment: {kv_transfer: layerwise, decode_routing: round_robin, decode_pick: arrival}\n", NULL, 0,
                 &sc, &err) == 0);
    CHECK(sc.deployment.kv_transfer == SIM_KV_LAYERWISE && sc.deployment.decode_routing == SIM_DECODE_ROUND_ROBIN &&
          sc.deployment.decode_pick == SIM_DECODE_PICK_ARRIVAL);
    m = load_fail("deployment: {decode_routing: random}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:30: deployment.decode_routing: expected one of round_robin|least_loaded, got 'random'");
    CHECK(strcmp(sim_kv_transfer_name(SIM_KV_LAYERWISE), "layerwise") == 0);
    CHECK(strcmp(sim_decode_routing_name(SIM_DECODE_LEAST_LOADED), "least_loaded") == 0);
    CHECK(strcmp(sim_decode_pick_name(SIM_DECODE_PICK_ARRIVAL), "arrival") == 0);

    /* The router's view, the prefix cache's eviction and sharing, the search's objective. */
    CHECK(sc.routing.view == SIM_VIEW_EXACT && sc.cache.policy == SIM_CACHE_LRU &&
          sc.cache.sharing == SIM_SHARING_NONE && sc.search.objective == SIM_OBJECTIVE_AUTO);
    REQUIRE(load("routing: {view: approximate}\ncache: {enabled: true, policy: lfu, sharing: pool}\n"
                 "search: {objective: cost}\n",
                 NULL, 0, &sc, &err) == 0);
    CHECK(sc.routing.view == SIM_VIEW_APPROXIMATE && sc.cache.policy == SIM_CACHE_LFU &&
          sc.cache.sharing == SIM_SHARING_POOL && sc.search.objective == SIM_OBJECTIVE_COST);
    m = load_fail("cache: {sharing: peers}\n", NULL, 0);
    CHECK_CONTAINS(m, "cache.sharing: expected one of none|pull|pool, got 'peers'");
    m = load_fail("search: {objective: speed}\n", NULL, 0);
    CHECK_CONTAINS(m, "search.objective: expected one of auto|goodput_per_gpu|cost|energy, got 'speed'");
    CHECK(strcmp(sim_cache_sharing_name(SIM_SHARING_PULL), "pull") == 0);
}

/* workload.prefix.kind and the scheduler's names: parsed once into their
 * enums, refused with file:line:column, the key path and the names, and
 * printed back from the same tables. */
static void test_typed_enums_workload_scheduler(void)
{
    sim_scenario sc;
    sim_err err;
    REQUIRE(load("model: llama-3.1-8b\n", NULL, 0, &sc, &err) == 0);
    const sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    CHECK(sc.workload.prefix.kind == SIM_PREFIX_NONE);
    CHECK(s->policy == SIM_POLICY_DECODE_FIRST && s->admission == SIM_ADMISSION_OPTIMISTIC &&
          s->mem_fraction_of == SIM_MEM_OF_TOTAL && s->preset == SIM_SCHED_PRESET_NONE);
    REQUIRE(load("workload: {prefix: {kind: rag}}\n"
                 "deployment: {pools: [{scheduler: {policy: prefill_first, admission: reserve, "
                 "mem_fraction_of: free}}]}\n",
                 NULL, 0, &sc, &err) == 0);
    CHECK(sc.workload.prefix.kind == SIM_PREFIX_RAG);
    CHECK(s->policy == SIM_POLICY_PREFILL_FIRST && s->admission == SIM_ADMISSION_RESERVE &&
          s->mem_fraction_of == SIM_MEM_OF_FREE && s->preset == SIM_SCHED_PRESET_NONE);
    const char *m = load_fail("workload: {prefix: {kind: chat}}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:27: workload.prefix.kind: expected one of none|system_prompt|multi_turn|rag, got 'chat'");
    m = load_fail("deployment: {pools: [{scheduler: {policy: fifo}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:43: deployment.pools.0.scheduler.policy: expected one of decode_first|prefill_first, "
                      "got 'fifo'");
    m = load_fail("deployment: {pools: [{}, {scheduler: {admission: Reserve}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools.1.scheduler.admission: expected one of optimistic|reserve|ratio, got 'Reserve'");
    m = load_fail("deployment: {pools: [{scheduler: {preset: tgi}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:1:43: deployment.pools.0.scheduler.preset: expected one of none|vllm|sglang|trtllm, "
                      "got 'tgi'");
    const char *set[] = {"deployment.pools.0.scheduler.mem_fraction_of=all"};
    m = load_fail("model: llama-3.1-8b\n", set, 1);
    CHECK_CONTAINS(m, "scheduler.mem_fraction_of=all: expected one of total|free|sglang, got 'all'");
    m = load_fail("deployment: {pools: [{scheduler: {policy: 1}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "scheduler.policy: expected one of decode_first|prefill_first, got '1'");
    for (int i = 0; i < SIM_PREFIX_KINDS; i++)
        CHECK(strcmp(sim_prefix_kind_name((sim_prefix_kind)i), sim_prefix_kind_names[i]) == 0);
    for (int i = 0; i < SIM_SCHED_POLICIES; i++)
        CHECK(strcmp(sim_sched_policy_name((sim_sched_policy)i), sim_sched_policy_names[i]) == 0);
    for (int i = 0; i < SIM_ADMISSIONS; i++)
        CHECK(strcmp(sim_admission_name((sim_admission)i), sim_admission_names[i]) == 0);
    for (int i = 0; i < SIM_MEM_FRACTIONS_OF; i++)
        CHECK(strcmp(sim_mem_fraction_of_name((sim_mem_fraction_of)i), sim_mem_fraction_of_names[i]) == 0);
    for (int i = 0; i < SIM_SCHED_PRESETS; i++)
        CHECK(strcmp(sim_sched_preset_name((sim_sched_preset)i), sim_sched_preset_names[i]) == 0);
    CHECK(strcmp(sim_sched_preset_name((sim_sched_preset)9), "?") == 0);
    const sim_schema_field *f = sim_schema_lookup("deployment.pools.*.scheduler.preset");
    REQUIRE(f != NULL);
    CHECK(sim_schema_enum_value(f, "sglang") == SIM_SCHED_PRESET_SGLANG);
}

static void test_reference(void)
{
    FILE *f = tmpfile();
    REQUIRE(f != NULL);
    sim_loader_write_reference(f);
    long len;
    char *ref = test_read_stream(f, &len);
    fclose(f);
    REQUIRE(ref != NULL);
    size_t n;
    const sim_schema_field *t = sim_schema_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (!*t[i].path) continue;
        char needle[600];
        snprintf(needle, sizeof needle, "`%s`", t[i].path);
        CHECK_CONTAINS(ref, needle);
    }
    CHECK_CONTAINS(ref, "| `workload.arrival.rate` | number | `10` | > 0 |");
    CHECK_CONTAINS(ref, "poisson\\|gamma\\|constant\\|closed_loop");
    CHECK_CONTAINS(ref, "| `deployment.pools.*.scheduler.gpu_mem_util` | number | `0.9` | (0, 1] |");

    /* The committed reference must be what the schema writes now. */
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/scenario-reference.md", src_dir);
    const char *regen = getenv("SERVESIM_WRITE_REFERENCE");
    if (regen && strcmp(regen, "1") == 0) {
        FILE *w = fopen(path, "w");
        CHECK(w != NULL);
        if (w) {
            fwrite(ref, 1, (size_t)len, w);
            fclose(w);
        }
    }
    FILE *doc = fopen(path, "rb");
    CHECK_MSG(doc != NULL, "%s missing (rerun with SERVESIM_WRITE_REFERENCE=1)", path);
    if (doc) {
        long dlen;
        char *d = test_read_stream(doc, &dlen);
        fclose(doc);
        CHECK_MSG(d && dlen == len && memcmp(d, ref, (size_t)len) == 0,
                  "%s is stale: rerun test_loader with SERVESIM_WRITE_REFERENCE=1", path);
        free(d);
    }
    free(ref);
}

/* scheduler.preset fills the pool's scheduler first; keys written beside
 * it win in either order; --set works; unknown names are refused. */
static void test_presets(void)
{
    sim_scenario sc;
    sim_err err;
    const sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    CHECK_MSG(load("deployment:\n  pools:\n    - scheduler: {preset: vllm}\n", NULL, 0, &sc, &err) == 0, "%s",
              err.msg);
    CHECK(s->preset == SIM_SCHED_PRESET_VLLM && s->policy == SIM_POLICY_DECODE_FIRST);
    CHECK(s->chunk_tokens == 2048 && s->max_batched_tokens == 8192);
    CHECK_NEAR(s->frontend_us, 45000, 0);
    CHECK_NEAR(s->overhead_per_seq_us, 50, 0);
    CHECK(load("deployment:\n  pools:\n    - scheduler: {chunk_tokens: 512, preset: sglang, frontend_us: 7}\n",
               NULL, 0, &sc, &err) == 0);
    CHECK(s->policy == SIM_POLICY_PREFILL_FIRST && s->chunk_tokens == 512);
    CHECK_NEAR(s->frontend_us, 7, 0);
    const char *set[] = {"deployment.pools.0.scheduler.preset=trtllm"};
    CHECK(load("model: m\n", set, 1, &sc, &err) == 0);
    CHECK(s->preset == SIM_SCHED_PRESET_TRTLLM);
    CHECK_NEAR(s->eager_launch_us, 75, 0);
    CHECK_NEAR(s->eager_serial, 0.5, 0); /* half of host and GPU in series (scripts/fit-engine.py --trt-floor) */
    CHECK_NEAR(s->overhead_us, 0, 0); /* the default is 1500 */
    CHECK(s->admission == SIM_ADMISSION_RESERVE);
    CHECK(load("deployment:\n  pools:\n    - scheduler: {preset: sglang, eager_serial: 0.25}\n", NULL, 0, &sc,
               &err) == 0);
    CHECK_NEAR(s->eager_serial, 0.25, 0);
    CHECK_NEAR(s->eager_launch_us, 200, 0);
    const char *over = load_fail("deployment:\n  pools:\n    - scheduler: {eager_serial: 1.5}\n", NULL, 0);
    CHECK_MSG(strstr(over, "t.yaml:3:") && strstr(over, "eager_serial"), "%s", over);
    /* A second pool keeps the defaults. */
    CHECK(load("deployment:\n  pools:\n    - scheduler: {preset: vllm}\n    - instances: 1\n", NULL, 0, &sc,
               &err) == 0);
    CHECK(sc.deployment.pools[1].scheduler.preset == SIM_SCHED_PRESET_NONE);
    CHECK_NEAR(sc.deployment.pools[1].scheduler.frontend_us, 0, 0);
    const char *msg = load_fail("deployment:\n  pools:\n    - scheduler: {preset: vlm}\n", NULL, 0);
    CHECK_MSG(strstr(msg, "t.yaml:3:") && strstr(msg, "vllm"), "%s", msg);

    /* Overlay: overrides on a built scenario keep everything else, the
     * base's extra pools included; a preset in them replaces the pool's
     * scheduler before the other overrides. */
    sim_scenario base, out;
    CHECK(load("model: llama-3.1-70b\nseed: 5\ndeployment:\n  pools:\n    - instances: 2\n    - instances: 3\n",
               NULL, 0, &base, &err) == 0);
    const char *ov[] = {"deployment.pools.0.scheduler.preset=vllm", "deployment.pools.0.scheduler.frontend_us=10"};
    CHECK_MSG(sim_loader_overlay(&base, ov, 2, &out, &err) == 0, "%s", err.msg);
    CHECK(strcmp(out.model, "llama-3.1-70b") == 0 && out.seed == 5);
    CHECK(out.deployment.n_pools == 2 && out.deployment.pools[1].instances == 3);
    CHECK(out.deployment.pools[0].instances == 2);
    CHECK(out.deployment.pools[0].scheduler.preset == SIM_SCHED_PRESET_VLLM);
    CHECK(out.deployment.pools[0].scheduler.chunk_tokens == 2048);
    CHECK_NEAR(out.deployment.pools[0].scheduler.frontend_us, 10, 0);
    const char *bad[] = {"deployment.pools.0.scheduler.frontend_us=-1"};
    CHECK(sim_loader_overlay(&base, bad, 1, &out, &err) < 0);
    CHECK_CONTAINS(err.msg, "frontend_us");
    /* In place: the result replaces the base; a failure leaves it alone. */
    CHECK(sim_loader_overlay(&base, ov, 2, &base, &err) == 0);
    CHECK(base.deployment.pools[0].scheduler.preset == SIM_SCHED_PRESET_VLLM && base.deployment.pools[1].instances == 3);
    CHECK(sim_loader_overlay(&base, bad, 1, &base, &err) < 0);
    CHECK_NEAR(base.deployment.pools[0].scheduler.frontend_us, 10, 0);
    /* The base's second pool can be named alone (pool 0 stays as it was);
     * one past the base's pools still needs the ones before it. */
    const char *p1[] = {"deployment.pools.1.scheduler.frontend_us=30000"};
    CHECK_MSG(sim_loader_overlay(&base, p1, 1, &out, &err) == 0, "%s", err.msg);
    CHECK(out.deployment.n_pools == 2 && out.deployment.pools[0].instances == 2);
    CHECK_NEAR(out.deployment.pools[0].scheduler.frontend_us, 10, 0);
    CHECK_NEAR(out.deployment.pools[1].scheduler.frontend_us, 30000, 0);
    CHECK(out.deployment.pools[1].instances == 3);
    const char *p1bad[] = {"deployment.pools.1.scheduler.frontend_usec=1"};
    CHECK(sim_loader_overlay(&base, p1bad, 1, &out, &err) < 0);
    CHECK_CONTAINS(err.msg, "deployment.pools.1.scheduler.frontend_usec");
    const char *p3[] = {"deployment.pools.3.instances=1"};
    CHECK(sim_loader_overlay(&base, p3, 1, &out, &err) < 0);
    CHECK_CONTAINS(err.msg, "past the end of deployment.pools");
}

/* workload.classes: items start from the workload's keys (wherever the
 * file puts them), and the loader refuses what classes cannot do with the
 * key path of the offending item. */
static void test_classes(void)
{
    sim_scenario sc;
    sim_err err;
    const char *ok = "workload:\n"
                     "  classes:\n"
                     "    - {name: chat, priority: 0, slo: {ttft_ms: 200}}\n"
                     "    - {name: batch, priority: 2, arrival: {rate: 1}, admission: {rate: 0.5, burst: 4}}\n"
                     "  arrival: {process: constant, rate: 7}\n"
                     "  input_tokens: {dist: fixed, value: 300}\n"
                     "  admission: {rate: 3, burst: 5, slo_factor: 2}\n";
    REQUIRE_MSG(load(ok, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(sc.workload.n_classes == 2);
    CHECK(strcmp(sc.workload.classes[1].name, "batch") == 0 && sc.workload.classes[1].priority == 2);
    /* inherited from the workload (walked after it), then overridden */
    CHECK(sc.workload.classes[0].arrival.process == SIM_ARRIVAL_CONSTANT && sc.workload.classes[0].arrival.rate == 7);
    CHECK(sc.workload.classes[1].arrival.process == SIM_ARRIVAL_CONSTANT && sc.workload.classes[1].arrival.rate == 1);
    CHECK(sc.workload.classes[1].input_tokens.value == 300);
    CHECK(sc.workload.classes[1].admission.rate == 0.5 && sc.workload.classes[1].admission.burst == 4);
    CHECK(sc.workload.admission.bucket.rate == 3 && sc.workload.admission.slo_factor == 2);
    sim_slo_cfg s0 = sim_class_slo(&sc, 0), s1 = sim_class_slo(&sc, 1);
    CHECK(s0.ttft_ms == 200 && s1.ttft_ms == 0);
    const char *set[] = {"workload.classes.1.slo.e2e_ms=9000", "slo.ttft_ms=50"};
    REQUIRE_MSG(load(ok, set, 2, &sc, &err) == 0, "%s", err.msg);
    s0 = sim_class_slo(&sc, 0);
    s1 = sim_class_slo(&sc, 1);
    CHECK(s0.ttft_ms == 200 && s1.ttft_ms == 50 && s1.e2e_ms == 9000);

    const char *m = load_fail("workload:\n  classes:\n    - {priority: 1}\n", NULL, 0);
    CHECK_CONTAINS(m, "t.yaml:3:7: workload.classes.0.name: every class needs a name");
    m = load_fail("workload:\n  classes:\n    - {name: a}\n    - {name: a}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.1.name: class name 'a' is used twice (also workload.classes.0)");
    m = load_fail("workload:\n  classes:\n    - {name: a b}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.name: class name 'a b': expected letters, digits");
    /* A class may be closed loop (its own clients), the workload's own
     * arrival may not: each closed-loop class names its concurrency. */
    REQUIRE_MSG(load("workload:\n  classes:\n    - {name: a, arrival: {process: closed_loop, concurrency: 4, "
                     "think_time_s: 0.5}}\n    - {name: b}\n", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(sc.workload.classes[0].arrival.process == SIM_ARRIVAL_CLOSED && sc.workload.classes[0].arrival.concurrency == 4);
    CHECK(sc.workload.classes[0].arrival.think_time_s == 0.5 && sc.workload.classes[1].arrival.process == SIM_ARRIVAL_POISSON);
    m = load_fail("workload:\n  classes:\n    - {name: a, arrival: {process: closed_loop, concurrency: 0}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.arrival.concurrency: process closed_loop needs concurrency >= 1, got 0");
    m = load_fail("workload:\n  classes:\n    - {name: a, arrival: {process: closed_loop, think_time_s: -1}}\n",
                  NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.arrival.think_time_s:");
    m = load_fail("workload:\n  arrival: {process: closed_loop}\n  classes:\n    - {name: a}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.arrival.process: closed_loop with workload.classes: give each closed-loop class");
    m = load_fail("workload:\n  classes:\n    - {name: a, priority: -1}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.priority: expected an integer in 0..1000000, got -1");
    m = load_fail("workload:\n  classes:\n    - {name: a, arrival: {rate: 0}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.arrival.rate: expected a number > 0, got 0");
    m = load_fail("workload:\n  classes:\n    - {name: a, input_tokens: {dist: uniform, min: 9, max: 3}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.input_tokens.max: dist uniform needs min <= max");
    m = load_fail("workload:\n  classes:\n    - {name: a, admission: {rate: 2}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.admission.burst: a token bucket with rate 2 needs burst >= 1");
    m = load_fail("workload:\n  classes:\n    - {name: a, requests: 0}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes.0.requests: requests 0 and duration_s 0");
    m = load_fail("workload:\n  classes:\n    - {name: a, sloo: {}}\n", NULL, 0);
    CHECK_CONTAINS(m, "unknown key 'sloo' at workload.classes.0.sloo (did you mean 'slo'?)");
    m = load_fail("workload:\n  classes: []\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes: expected a list of 1..8 items, got 0");
    m = load_fail("workload:\n  trace: {format: csv, path: t.csv}\n  classes:\n    - {name: a}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.classes: classes generate their own arrivals");
    CHECK_CONTAINS(m, "a trace's lines carry no class");
    /* A class starts from workload.prefix and may set its own. */
    {
        sim_scenario ps;
        sim_err perr = {{0}};
        const char *py = "workload:\n  prefix: {kind: rag, docs: 50}\n  classes:\n    - {name: a}\n"
                         "    - {name: b, prefix: {kind: system_prompt, prompts: 3}}\n    - {name: c, prefix: {kind: none}}\n";
        CHECK_MSG(load(py, NULL, 0, &ps, &perr) == 0, "%s", perr.msg);
        CHECK(ps.workload.classes[0].prefix.kind == SIM_PREFIX_RAG && ps.workload.classes[0].prefix.docs == 50);
        CHECK(ps.workload.classes[1].prefix.kind == SIM_PREFIX_SYSTEM_PROMPT && ps.workload.classes[1].prefix.prompts == 3);
        CHECK(ps.workload.classes[1].prefix.docs == 50 && ps.workload.classes[2].prefix.kind == SIM_PREFIX_NONE);
    }
    /* A class starts from workload.sessions and may set its own (tests/system/test_slo_classes_prefix.c). */
    {
        sim_scenario ss;
        sim_err serr = {{0}};
        const char *sy = "workload:\n  sessions: {count: 3}\n  classes:\n    - {name: a}\n"
                         "    - {name: b, sessions: {count: 0}, requests: 10}\n";
        CHECK_MSG(load(sy, NULL, 0, &ss, &serr) == 0, "%s", serr.msg);
        CHECK(ss.workload.classes[0].sessions.count == 3 && ss.workload.classes[1].sessions.count == 0);
    }
    m = load_fail("workload: {admission: {slo_factor: 2}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.admission.slo_factor: shedding by predicted TTFT needs a TTFT bound");
    m = load_fail("workload: {admission: {rate: 1, burst: 0.5}}\n", NULL, 0);
    CHECK_CONTAINS(m, "workload.admission.burst: a token bucket with rate 1 needs burst >= 1");
    const char *bad_set[] = {"workload.classes.3.name=x"};
    m = load_fail(ok, bad_set, 1);
    CHECK_CONTAINS(m, "index 3 is past the end of workload.classes (it has 2 items; 2 adds one)");
}

/* scheduler.admission ratio and its keys: SGLang's defaults, the SGLang
 * preset runs it, and bad values are refused with their key paths. */
static void test_ratio_keys(void)
{
    sim_scenario sc;
    sim_err err;
    const sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    REQUIRE(load("deployment: {pools: [{scheduler: {preset: sglang}}]}\n", NULL, 0, &sc, &err) == 0);
    CHECK(s->admission == SIM_ADMISSION_RATIO);
    CHECK_NEAR(s->ratio_init, 0.7, 0);
    CHECK_NEAR(s->ratio_min, 0.098, 1e-15);
    CHECK_NEAR(s->ratio_decay, (0.7 - 0.098) / 600, 1e-15);
    CHECK(s->ratio_clip == 4096 && s->retract_steps == 20);
    REQUIRE(load("deployment: {pools: [{scheduler: {admission: ratio, ratio_init: 0.5, ratio_min: 0.2, "
                 "ratio_decay: 0.01, ratio_clip: 512, retract_steps: 4}}]}\n",
                 NULL, 0, &sc, &err) == 0);
    CHECK(s->admission == SIM_ADMISSION_RATIO && s->ratio_clip == 512 && s->retract_steps == 4);
    CHECK_NEAR(s->ratio_init, 0.5, 0);
    CHECK_NEAR(s->ratio_min, 0.2, 0);
    CHECK_NEAR(s->ratio_decay, 0.01, 0);
    const char *bad[][2] = {{"ratio_init", "1.5"}, {"ratio_decay", "-0.1"}, {"ratio_clip", "0"},
                            {"retract_steps", "-1"}, {"ratio_min", "2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char yaml[128], key[96];
        snprintf(yaml, sizeof yaml, "deployment: {pools: [{scheduler: {%s: %s}}]}\n", bad[i][0], bad[i][1]);
        snprintf(key, sizeof key, "deployment.pools.0.scheduler.%s", bad[i][0]);
        CHECK_CONTAINS(load_fail(yaml, NULL, 0), key);
    }
    const char *m = load_fail("deployment: {pools: [{scheduler: {ratio_init: 0.3, ratio_min: 0.4}}]}\n", NULL, 0);
    CHECK_CONTAINS(m, "deployment.pools.0.scheduler.ratio_min: ratio_min (0.4) must be <= ratio_init (0.3)");
}

static const test_case cases[] = {
    {"ratio_keys", test_ratio_keys},
    {"classes", test_classes},
    {"defaults", test_defaults},
    {"full_file", test_full_file},
    {"paths", test_paths},
    {"key_errors", test_key_errors},
    {"value_errors", test_value_errors},
    {"document_errors", test_document_errors},
    {"cross_field", test_cross_field},
    {"overrides", test_overrides},
    {"presets", test_presets},
    {"schema_names", test_schema_names},
    {"typed_enums", test_typed_enums},
    {"typed_enums_workload_scheduler", test_typed_enums_workload_scheduler},
    {"reference", test_reference},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    src_dir = test_src_dir();
    return test_run("test_loader", cases);
}
