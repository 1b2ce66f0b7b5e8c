/* test_plot — `servesim plot` figures: every kind writes a non-empty PNG
 * and SVG from a results DB filled by a small search and a sweep (skipped,
 * exit 77, when gnuplot is not installed); a missing gnuplot is an error
 * naming the package; kinds without data fail with a reason. */
#include "test_util.h"

#include "sim_loader.h"
#include "sim_plot.h"
#include "sim_search.h"
#include "sim_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *yaml =
    "name: t-plot\n"
    "model: llama-3.1-8b\n"
    "workload:\n"
    "  arrival: {process: poisson, rate: 20}\n"
    "  input_tokens: {dist: uniform, min: 256, max: 1024}\n"
    "  output_tokens: {dist: uniform, min: 32, max: 128}\n"
    "slo: {ttft_ms: 300, tpot_ms: 15}\n"
    "search: {max_gpus: 2, modes: colocated, layouts: \"tp1,tp2\", max_seqs: \"16,64\", requests: 150}\n";

static long file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

static int starts_with_file(const char *p, const char *magic, size_t n)
{
    char buf[512] = "";
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (n) return got >= n && memcmp(buf, magic, n) == 0;
    return strstr(buf, magic) != NULL;
}

/* A new results DB at the mkstemp pattern db, and the test scenario in sc. */
static sim_store *open_fresh(char *db, sim_scenario *sc)
{
    sim_err err = {{0}};
    sim_store *st = NULL;
    int fd = mkstemp(db);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    unlink(db);
    CHECK_MSG(sim_store_open(db, &st, &err) == 0, "%s", err.msg);
    CHECK_MSG(sim_loader_load_string(yaml, strlen(yaml), "t", NULL, 0, sc, &err) == 0, "%s", err.msg);
    return st;
}

/* Candidates tied on score: the "recommended" marker is the candidate the
 * search ranked first (its final rank-1 run, by id), not the first stored. */
static void test_pareto_tie(void)
{
    char db[] = "/tmp/test_plot_tie_XXXXXX";
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_store *st = open_fresh(db, sc);
    sim_summary sum;
    memset(&sum, 0, sizeof sum);
    for (int c = 0; c < 3; c++) {
        char params[512];
        snprintf(params, sizeof params,
                 "{\"search\": {\"session\": \"s1\", \"candidate\": %d, \"label\": \"cand %d\", \"best\": true, "
                 "\"score\": 100.0, \"goodput_per_gpu\": 100.0, \"tok_s_user\": %d.5, \"ttft_ms\": %d, "
                 "\"mode\": \"%s\"}}",
                 c, c, 40 + c, 300 - 10 * c, c == 1 ? "pd" : "colocated");
        CHECK(st && sim_store_write_run(st, sc, NULL, params, &sum, NULL, NULL, &err) == 0);
    }
    CHECK(st && sim_store_write_run(st, sc, NULL,
                                    "{\"search\": {\"session\": \"s1\", \"candidate\": 2, \"label\": \"cand 2\", "
                                    "\"best\": true, \"final\": true, \"rank\": 1}}",
                                    &sum, NULL, NULL, &err) == 0);
    sim_store_close(st);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_plot_opts po = {.kind = SIM_PLOT_PARETO, .db = db};
    CHECK_MSG(sim_plot_write_data(&po, f, &err) == 0, "%s", err.msg);
    fclose(f);
    const char *rec = buf ? strstr(buf, "\"recommended\"") : NULL;
    CHECK(rec != NULL);
    if (rec) CHECK_CONTAINS(rec, "42.5 100");
    if (rec) CHECK(strstr(rec, "40.5") == NULL);
    /* Colocated and PD candidates in blocks of their own; both frontiers, labelled. */
    CHECK_CONTAINS(buf, "\"colocated\" x y ttft\n40.5 100 300\n42.5 100 280\n");
    CHECK_CONTAINS(buf, "\"pd\" x y ttft\n41.5 100 290\n");
    CHECK_CONTAINS(buf, "\"Pareto frontier\" x y label\n42.5 100 \"cand 2\"\n");
    /* Tied on goodput: the lowest TTFT alone is on the TTFT frontier. */
    CHECK_CONTAINS(buf, "\"Pareto frontier (TTFT)\" ttft y label\n280 100 \"cand 2\"\n\n");
    free(buf);
    free(sc);
    unlink(db);
}

/* Writes one run with pools (two: prefill and decode) and the given params. */
static void pd_run(sim_store *st, sim_scenario *sc, const char *params, double rate, double ttft, double u0)
{
    sim_err err = {{0}};
    sim_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.req_per_s = rate;
    sum.goodput_req_per_s = rate;
    sum.ttft_ms.p90 = ttft;
    sum.tpot_ms.p90 = 20;
    sum.n_pools = 2;
    snprintf(sum.pools[0].role, sizeof sum.pools[0].role, "prefill");
    snprintf(sum.pools[1].role, sizeof sum.pools[1].role, "decode");
    sum.pools[0].instances = sum.pools[1].instances = 4;
    sum.pools[0].utilization = u0;
    sum.pools[1].utilization = 0.9;
    CHECK(sim_store_write_run(st, sc, yaml, params, &sum, NULL, NULL, &err) == 0);
}

/* An xPyD sweep: values that are not numbers get one tick each, in the
 * order given; the throughput-latency points keep that order even when the
 * achieved throughput falls along it; every pool's utilisation is drawn;
 * the SLO the runs were simulated with is read back. */
static void test_sweep_order(void)
{
    char db[] = "/tmp/test_plot_sw_XXXXXX";
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_store *st = open_fresh(db, sc);
    static const char *const v[][2] = {{"2", "6"}, {"3", "5"}, {"4", "4"}};
    for (int i = 0; i < 3 && st; i++) {
        char params[256];
        snprintf(params, sizeof params,
                 "{\"set\": [\"deployment.pools.0.instances=%s\", \"deployment.pools.1.instances=%s\", "
                 "\"slo.ttft_ms=750\", \"sweep.key=\"]}",
                 v[i][0], v[i][1]);
        pd_run(st, sc, params, 12 - i, 900 - 100 * i, 0.9 - 0.2 * i);
    }
    sim_store_close(st);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_plot_opts po = {.kind = SIM_PLOT_SWEEP, .db = db};
    CHECK_MSG(sim_plot_write_data(&po, f, &err) == 0, "%s", err.msg);
    fclose(f);
    CHECK_CONTAINS(buf, "\"t-plot\" label goodput tokgpu ttft tpot util0 util1\n0 \"2+6+750\" 12 0 900 20 0.9 0.9\n"
                        "1 \"3+5+750\" 11 0 800 20 0.7 0.9\n2 \"4+4+750\" 10 0 700 20 0.5 0.9\n");
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    po.kind = SIM_PLOT_THROUGHPUT_LATENCY;
    CHECK_MSG(sim_plot_write_data(&po, f, &err) == 0, "%s", err.msg);
    fclose(f);
    const char *a = buf ? strstr(buf, "\"2+6+750\"") : NULL, *b = buf ? strstr(buf, "\"3+5+750\"") : NULL,
               *c = buf ? strstr(buf, "\"4+4+750\"") : NULL;
    CHECK(a && b && c && a < b && b < c);
    CHECK_CONTAINS(buf, "12 900 20 \"2+6+750\"\n");
    free(buf);
    double ttft = -1, tpot = -1;
    CHECK(sim_plot_slo(db, 1, &ttft, &tpot, &err) == 0);
    CHECK_NEAR(ttft, 750, 1e-9); /* the --set value over the scenario's 300 */
    CHECK_NEAR(tpot, 15, 1e-9);  /* the scenario's */
    free(sc);
    unlink(db);
}

static void case_gnuplot_missing_and_kinds(void)
{
    sim_err err = {{0}};
    /* Missing gnuplot: a clear error naming the package. */
    sim_plot_opts miss = {.kind = SIM_PLOT_PARETO, .db = "x.db", .out = "/tmp/x.png", .gnuplot = "/nonexistent/gnuplot"};
    CHECK(sim_plot_make(&miss, &err) == SIM_ENOTSUP);
    CHECK_CONTAINS(err.msg, "gnuplot-nox");
    sim_plot_kind k;
    CHECK(sim_plot_kind_parse("throughput-latency", &k) == 0 && k == SIM_PLOT_THROUGHPUT_LATENCY);
    CHECK(sim_plot_kind_parse("histogram", &k) < 0);
}

/* Every kind drawn as PNG and SVG from a DB of a search and a sweep; an empty DB and bad usage refused (needs gnuplot). */
static void case_figures(void)
{
    const char *src = test_src_dir();
    char tpl[4096], db[] = "/tmp/test_plot_XXXXXX";
    snprintf(tpl, sizeof tpl, "%s/plots", src);
    sim_err err = {{0}};
    if (!sim_plot_have_gnuplot(NULL)) {
        test_case_skip("gnuplot not installed (gnuplot-nox); the figures were not made");
        return;
    }

    int fd = mkstemp(db);
    CHECK(fd >= 0);
    close(fd);
    unlink(db);
    sim_store *st = NULL;
    CHECK(sim_store_open(db, &st, &err) == 0);
    sim_scenario *sc = malloc(sizeof *sc);
    CHECK(sim_loader_load_string(yaml, strlen(yaml), "t", NULL, 0, sc, &err) == 0);

    /* An empty DB: each kind fails with a reason rather than an empty figure. */
    char out[256];
    snprintf(out, sizeof out, "%s-empty.png", db);
    sim_plot_opts e = {.kind = SIM_PLOT_PARETO, .db = db, .out = out, .templates = tpl};
    CHECK(sim_plot_make(&e, &err) < 0);
    CHECK_CONTAINS(err.msg, "no search runs");

    sim_search *s = NULL;
    sim_search_opts o = {.threads = 2};
    CHECK(sim_search_create(sc, &o, &s, &err) == 0);
    if (s) {
        sim_search_set_store(s, st, yaml);
        CHECK(sim_search_run(s, &err) == 0);
        CHECK(sim_search_store_final(s, 2, &err) == 0);
    }
    sim_search_destroy(s);
    /* Three runs of a sweep, stored as `run --sweep` does. */
    for (int i = 0; i < 3; i++) {
        char params[128];
        snprintf(params, sizeof params, "{\"set\": [\"routing.lambda=%d\", \"sweep.key=\"]}", i + 1);
        sim_summary sum;
        memset(&sum, 0, sizeof sum);
        sum.goodput_req_per_s = 10 + i;
        sum.ttft_ms.p90 = 100 + 10 * i;
        sum.tpot_ms.p90 = 20 + i;
        CHECK(sim_store_write_run(st, sc, NULL, params, &sum, NULL, NULL, &err) == 0);
    }
    sim_store_close(st);
    /* The lambda sweep's values are numbers: drawn at their values. */
    {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        sim_plot_opts po = {.kind = SIM_PLOT_SWEEP, .db = db};
        CHECK_MSG(sim_plot_write_data(&po, f, &err) == 0, "%s", err.msg);
        fclose(f);
        CHECK_CONTAINS(buf, "\n1 \"1\" 10 ");
        CHECK_CONTAINS(buf, "\n3 \"3\" 12 ");
        free(buf);
        /* The timeline titles each instance with its pool's role. */
        buf = NULL;
        f = open_memstream(&buf, &len);
        po.kind = SIM_PLOT_TIMELINE;
        CHECK_MSG(sim_plot_write_data(&po, f, &err) == 0, "%s", err.msg);
        fclose(f);
        CHECK_CONTAINS(buf, "\"instance 0 (colocated)\" t u kv\n");
        free(buf);
    }

    static const sim_plot_kind kinds[] = {SIM_PLOT_CDF, SIM_PLOT_THROUGHPUT_LATENCY, SIM_PLOT_SWEEP, SIM_PLOT_PARETO,
                                          SIM_PLOT_TIMELINE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (int svg = 0; svg < 2; svg++) {
            snprintf(out, sizeof out, "%s-%s.%s", db, sim_plot_kind_name(kinds[i]), svg ? "svg" : "png");
            sim_plot_opts po = {.kind = kinds[i], .db = db, .out = out, .templates = tpl};
            int rc = sim_plot_make(&po, &err);
            CHECK_MSG(rc == 0, "%s: %s", out, err.msg);
            CHECK_MSG(file_size(out) > 1000, "%s is %ld bytes", out, file_size(out));
            if (svg) CHECK(starts_with_file(out, "<svg", 0));
            else CHECK(starts_with_file(out, "\x89PNG", 4));
            unlink(out);
        }
    /* The CLI entry: bad usage, then a figure. */
    snprintf(out, sizeof out, "%s-cli.png", db);
    char *bad[] = {"plot", (char *)db, "--kind", "nope", "-o", out, NULL};
    CHECK(sim_cli_plot(6, bad) == 2);
    char *bad_run[] = {"plot", (char *)db, "--run", "abc", "-o", out, NULL};
    CHECK(sim_cli_plot(6, bad_run) == 2);
    char *bad_flag[] = {"plot", (char *)db, "--titel", "x", "-o", out, NULL};
    CHECK(sim_cli_plot(6, bad_flag) == 2);
    CHECK(file_size(out) < 0); /* nothing drawn on bad usage */
    setenv("SERVESIM_PLOTS", tpl, 1);
    char *good[] = {"plot", (char *)db, "--kind", "pareto", "-o", out, NULL};
    CHECK(sim_cli_plot(6, good) == 0);
    CHECK(file_size(out) > 1000);
    unlink(out);
    unlink(db);
    free(sc);
}

static const test_case cases[] = {
    {"gnuplot_missing_and_kinds", case_gnuplot_missing_and_kinds},
    {"pareto_tie", test_pareto_tie},
    {"sweep_order", test_sweep_order},
    {"figures", case_figures},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_plot", cases);
}
