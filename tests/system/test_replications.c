/* test_replications — `servesim run --replications N` (sim_replicate.h).
 *
 * md1_coverage: the shipped scenarios/replications-md1.yaml is an M/D/1
 * queue (one instance, one request at a time, every request one prefill
 * iteration of fixed length D and one output token, Poisson arrivals).
 * D is measured from a one-request run; the rate is set to rho / D with
 * rho = 0.5, so the Pollaczek–Khinchine mean TTFT is D (1 + rho / (2 (1 −
 * rho))) = 1.5 D. 100 intervals (scenario seeds 1..100), each over 5
 * replications of 1000 requests, must contain it about 95 times: binomial
 * sd 2.18, so 88..100 (within 3.2 sd). The runs start empty, which biases
 * a 1000-request mean low by a fraction of a millisecond against a
 * half-width near 3.4 ms, so the count stays near 95. Seeds are fixed: the count is exact and
 * repeatable (printed).
 *
 * cli_json, replay, jobs_invariant, usage: the JSON's `intervals` object
 * (every headline key, n, low <= mean <= high, the mean of the runs'
 * figures), a replication replayed with `--seed`, the same output on 1 and
 * 3 threads, and the refusals (N < 2, with a sweep or --out, --jobs
 * alone). stored_in_db: the sets in the results DB (tables
 * replication_sets and intervals), read back with SQLite; a DB path that
 * cannot be opened fails before the runs (exit 2). */
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_replicate.h"
#include "test_util.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void case_md1_coverage(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/replications-md1.yaml", test_src_dir());
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    const char *one[] = {"workload.requests=1"};
    REQUIRE_MSG_OR(sim_loader_load_file(path, one, 1, sc, &err) == 0, { free(sc); return; }, "%s", err.msg);
    sim_cluster *cl = NULL;
    sim_summary sum;
    REQUIRE_MSG_OR(sim_cluster_create(sc, &cl, &err) == 0 && sim_cluster_run(cl, &sum, &err) == 0,
                   { sim_cluster_destroy(cl); free(sc); return; }, "%s", err.msg);
    sim_cluster_destroy(cl);
    const double d_ms = sum.ttft_ms.mean, rho = 0.5, theory = d_ms * (1 + rho / (2 * (1 - rho)));
    CHECK(d_ms > 1 && sum.ttft_ms.n == 1);
    sc->workload.requests = 1000;
    sc->workload.arrival.rate = rho / (d_ms * 1e-3);
    int covered = 0;
    double hw = 0;
    for (int k = 0; k < 100; k++) {
        sc->seed = 1 + (uint64_t)k;
        sim_replicate_result r;
        REQUIRE_MSG_OR(sim_replicate_run(sc, 5, 2, 0.95, &r, &err) == 0, { free(sc); return; }, "%s", err.msg);
        const sim_interval *iv = &r.iv[SIM_HL_TTFT_MEAN];
        covered += iv->low <= theory && theory <= iv->high;
        hw += iv->half_width / 100;
        CHECK(r.n_overloaded == 0 && iv->n == 5);
        CHECK(r.iv[SIM_HL_TPOT_MEAN].n == 0); /* one-token answers: no TPOT */
        sim_replicate_free(&r);
    }
    printf("  M/D/1 rho 0.5, D %.3f ms: %d of 100 intervals (5 x 1000 requests) contain the P-K mean TTFT "
           "%.3f ms; mean half-width %.3f ms\n",
           d_ms, covered, theory, hw);
    CHECK(covered >= 88);
    free(sc);
}

static char *run_cmd(const char *args, int *status)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>/dev/null", test_src_dir(), test_servesim, args);
    *status = test_sh(cmd, &out);
    return out;
}

#define QS "run scenarios/quickstart.yaml --set workload.requests=300"

static void case_cli_json(void)
{
    int st;
    char *out = run_cmd(QS " --replications 4 --jobs 2 --json --no-db", &st);
    REQUIRE(out);
    CHECK(st == 0);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    free(out);
    REQUIRE_MSG(o, "not JSON: %s", je.text);
    CHECK(json_integer_value(json_object_get(o, "replications")) == 4);
    CHECK(json_array_size(json_object_get(o, "seeds")) == 4);
    json_t *ivs = json_object_get(o, "intervals"), *runs = json_object_get(o, "runs");
    REQUIRE(json_is_object(ivs) && json_array_size(runs) == 4);
    CHECK(json_object_size(ivs) == SIM_HL_COUNT);
    for (int h = 0; h < SIM_HL_COUNT; h++) {
        const char *key = sim_headline_key((sim_headline)h);
        json_t *iv = json_object_get(ivs, key);
        REQUIRE_MSG(json_is_object(iv), "%s", key);
        double mean = json_real_value(json_object_get(iv, "mean")), lo = json_real_value(json_object_get(iv, "low")),
               hi = json_real_value(json_object_get(iv, "high")), half = json_real_value(json_object_get(iv, "half_width"));
        CHECK_MSG(json_integer_value(json_object_get(iv, "n")) == 4, "%s", key);
        CHECK_MSG(lo <= mean && mean <= hi && half >= 0, "%s", key);
        CHECK_NEAR(hi - mean, half, 1e-6 * (1 + half));
        double sum = 0;
        for (size_t i = 0; i < 4; i++)
            sum += json_real_value(json_object_get(json_object_get(json_array_get(runs, i), "figures"), key));
        CHECK_NEAR(mean, sum / 4, 1e-6 * (1 + fabs(mean)));
    }
    /* Independent seeds: the runs differ. */
    json_t *m = json_object_get(ivs, "ttft_ms.mean");
    CHECK(json_real_value(json_object_get(m, "half_width")) > 0);
    json_decref(o);
}

static void case_replay(void)
{
    int st;
    char *out = run_cmd(QS " --replications 2 --json --no-db", &st);
    REQUIRE(out && st == 0);
    json_t *o = json_loads(out, 0, NULL);
    free(out);
    REQUIRE(o);
    json_t *run1 = json_array_get(json_object_get(o, "runs"), 1);
    long long seed = json_integer_value(json_object_get(run1, "seed"));
    double ttft = json_real_value(json_object_get(json_object_get(run1, "figures"), "ttft_ms.p99"));
    double gput = json_real_value(json_object_get(json_object_get(run1, "figures"), "goodput_req_per_s"));
    json_decref(o);
    CHECK_MSG(seed > 0 && ttft > 0 && gput > 0, "run 1: seed %lld, ttft_ms.p99 %g, goodput %g", seed, ttft, gput);
    char args[512];
    snprintf(args, sizeof args, QS " --no-db --json --seed %lld", seed);
    out = run_cmd(args, &st);
    REQUIRE(out && st == 0);
    o = json_loads(out, 0, NULL);
    free(out);
    REQUIRE(o);
    CHECK(json_real_value(json_object_get(json_object_get(o, "ttft_ms"), "p99")) == ttft);
    CHECK(json_real_value(json_object_get(o, "goodput_req_per_s")) == gput);
    json_decref(o);
}

static void case_jobs_invariant(void)
{
    int s1, s3;
    char *a = run_cmd(QS " --replications 5 --jobs 1 --json --no-db", &s1),
         *b = run_cmd(QS " --replications 5 --jobs 3 --json --no-db", &s3);
    REQUIRE(a && b);
    CHECK(s1 == 0 && s3 == 0);
    CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
    char *t = run_cmd(QS " --replications 3 --no-db", &s1);
    REQUIRE(t);
    CHECK(s1 == 0);
    CHECK_CONTAINS(t, "replications 3, seeds derived from 42");
    CHECK_CONTAINS(t, "TTFT p99 (ms)");
    CHECK_CONTAINS(t, "goodput tok/s/GPU");
    CHECK(!strstr(t, "results:"));
    free(t);
}

static void case_usage(void)
{
    static const char *const bad[] = {
        QS " --replications 1",
        QS " --replications x",
        QS " --replications 3 --sweep workload.arrival.rate=10,20",
        QS " --replications 3 --out /tmp/x-replications",
        QS " --jobs 2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st;
        char cmd[1024], *err = NULL;
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1 >/dev/null", test_src_dir(), test_servesim, bad[i]);
        st = test_sh(cmd, &err);
        CHECK_MSG(st == 2, "%s: exit %d", bad[i], st);
        CHECK_MSG(err && strstr(err, "--"), "%s: %s", bad[i], err ? err : "");
        free(err);
    }
}

/* The set stored in the results DB, read back with SQLite: one row of
 * replication_sets per `run --replications`, and one row of intervals per
 * headline figure holding the mean and half-width the JSON printed. */
static void case_stored_in_db(void)
{
    char path[] = "/tmp/test_replications_db_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(path); /* a new database at that path */
    char args[512];
    int st;
    snprintf(args, sizeof args, QS " --replications 3 --jobs 2 --db %s", path);
    char *t = run_cmd(args, &st);
    REQUIRE(t);
    CHECK(st == 0);
    CHECK_CONTAINS(t, "results: replication set 1 (3 runs");
    free(t);
    snprintf(args, sizeof args, QS " --replications 4 --jobs 2 --json --db %s", path);
    char *out = run_cmd(args, &st);
    REQUIRE(out && st == 0);
    json_t *o = json_loads(out, 0, NULL);
    free(out);
    REQUIRE(o);
    json_t *ivs = json_object_get(o, "intervals");
    sqlite3 *db = NULL;
    REQUIRE_OR(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, {
        json_decref(o);
        return;
    });
    sqlite3_stmt *q = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT id, name, seed, replications, level, overloaded,"
                                 " json_extract(params_json, '$.replications.base_seed'),"
                                 " json_extract(params_json, '$.set[0]') FROM replication_sets ORDER BY id",
                             -1, &q, NULL) == SQLITE_OK);
    int rows = 0;
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        rows++;
        CHECK(sqlite3_column_int64(q, 0) == rows);
        CHECK(strcmp((const char *)sqlite3_column_text(q, 1), "quickstart") == 0);
        CHECK(sqlite3_column_int64(q, 2) == 42 && sqlite3_column_int64(q, 6) == 42);
        CHECK(sqlite3_column_int(q, 3) == (rows == 1 ? 3 : 4));
        CHECK(sqlite3_column_double(q, 4) == 0.95);
        CHECK(sqlite3_column_int(q, 5) == 0);
        CHECK(strcmp((const char *)sqlite3_column_text(q, 7), "workload.requests=300") == 0);
    }
    sqlite3_finalize(q);
    CHECK(rows == 2);
    /* Set 2: every figure of the JSON, with its mean and half-width. */
    CHECK(sqlite3_prepare_v2(db, "SELECT figure, mean, half_width, low, high, sd, n FROM intervals WHERE set_id = 2",
                             -1, &q, NULL) == SQLITE_OK);
    int figs = 0;
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        const char *fig = (const char *)sqlite3_column_text(q, 0);
        json_t *iv = json_object_get(ivs, fig);
        REQUIRE_MSG_OR(json_is_object(iv), break, "figure %s not in the JSON", fig);
        figs++;
        CHECK(sqlite3_column_int(q, 6) == json_integer_value(json_object_get(iv, "n")));
        if (json_is_null(json_object_get(iv, "mean"))) {
            CHECK(sqlite3_column_type(q, 1) == SQLITE_NULL && sqlite3_column_type(q, 2) == SQLITE_NULL);
            continue;
        }
        static const char *const keys[] = {"mean", "half_width", "low", "high", "sd"};
        for (int k = 0; k < 5; k++) {
            double want = json_number_value(json_object_get(iv, keys[k]));
            CHECK_NEAR(sqlite3_column_double(q, 1 + k), want, 1e-8 * (1 + fabs(want)));
        }
    }
    sqlite3_finalize(q);
    CHECK(figs == (int)json_object_size(ivs) && figs > 20);
    sqlite3_close(db);
    json_decref(o);
    unlink(path);
    char *e = run_cmd(QS " --replications 3 --db /nonexistent-dir/x.db", &st);
    CHECK(st == 2);
    free(e);
}

static const test_case cases[] = {
    {"md1_coverage", case_md1_coverage},
    {"cli_json", case_cli_json},
    {"replay", case_replay},
    {"jobs_invariant", case_jobs_invariant},
    {"usage", case_usage},
    {"stored_in_db", case_stored_in_db},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_replications", cases);
}
