/* test_cli — the servesim binary as users call it: byte-identical JSON for
 * the same seed, a different run for another seed, the JSON keys scripts
 * rely on, the seeded reference output of the quickstart scenario
 * (tests/ref/quickstart.json; regenerate with SERVESIM_UPDATE_REF=1 after an
 * intended model change), exit codes, --help, and the results DB. */
#include "test_util.h"

#include "sim_suggest.h"

#include <dirent.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *bin, *src;

#define sh test_sh

/* Structural equality with numbers within 1e-6 relative; prints the first difference. */
static int json_close(json_t *x, json_t *y, const char *path)
{
    char sub[512];
    if (json_is_number(x) && json_is_number(y)) {
        double u = json_number_value(x), v = json_number_value(y);
        if (fabs(u - v) <= 1e-6 * fmax(fabs(u), fabs(v)) + 1e-12) return 1;
        fprintf(stderr, "%s: %.9g vs %.9g\n", path, u, v);
        return 0;
    }
    if (json_typeof(x) != json_typeof(y)) {
        fprintf(stderr, "%s: different types\n", path);
        return 0;
    }
    if (json_is_object(x)) {
        if (json_object_size(x) != json_object_size(y)) {
            fprintf(stderr, "%s: different key sets\n", path);
            return 0;
        }
        const char *k;
        json_t *vx;
        json_object_foreach(x, k, vx) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            json_t *vy = json_object_get(y, k);
            if (!vy || !json_close(vx, vy, sub)) {
                if (!vy) fprintf(stderr, "%s: missing\n", sub);
                return 0;
            }
        }
        return 1;
    }
    if (json_is_string(x)) return strcmp(json_string_value(x), json_string_value(y)) == 0;
    return json_equal(x, y);
}

static void test_json_determinism(void)
{
    char cmd[4096], *a = NULL, *b = NULL, *c = NULL;
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --json --no-db --quiet", bin, src);
    CHECK(sh(cmd, &a) == 0);
    CHECK(sh(cmd, &b) == 0);
    test_strip_wall(a);
    test_strip_wall(b);
    CHECK_MSG(strcmp(a, b) == 0, "same seed gave different JSON");
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --json --no-db --quiet --seed 7", bin, src);
    CHECK(sh(cmd, &c) == 0);
    test_strip_wall(c);
    CHECK_MSG(strcmp(a, c) != 0, "another seed gave the same JSON");

    json_error_t je;
    json_t *o = json_loads(a, 0, &je);
    CHECK_MSG(o != NULL, "JSON does not parse: %s", je.text);
    if (o) {
        const char *keys[] = {"requests_completed", "ttft_ms", "tpot_ms", "e2e_ms", "throughput",
                              "goodput_req_per_s", "sim_time_s", "events"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            CHECK_MSG(json_object_get(o, keys[i]) != NULL, "missing key %s", keys[i]);
        const char *stats[] = {"ttft_ms", "tpot_ms", "e2e_ms"};
        const char *fields[] = {"mean", "p50", "p90", "p99"};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                CHECK_MSG(json_is_number(json_object_get(json_object_get(o, stats[i]), fields[j])),
                          "%s.%s not a number", stats[i], fields[j]);
        const char *tp[] = {"req_per_s", "output_tokens_per_s", "input_tokens_per_s"};
        for (int i = 0; i < 3; i++)
            CHECK(json_is_number(json_object_get(json_object_get(o, "throughput"), tp[i])));
        CHECK(json_integer_value(json_object_get(o, "requests_completed")) == 2000);
        json_decref(o);
    }

    /* Seeded reference output. */
    char ref[2048];
    snprintf(ref, sizeof ref, "%s/tests/ref/quickstart.json", src);
    if (getenv("SERVESIM_UPDATE_REF")) {
        FILE *f = fopen(ref, "w");
        CHECK_MSG(f != NULL, "cannot write %s", ref);
        if (f) {
            fputs(a, f);
            fclose(f);
        }
    }
    char *want = test_slurp(ref);
    CHECK_MSG(want != NULL, "missing %s", ref);
    if (want) {
        /* Numbers compared to 1e-6 relative, not bytewise: libm may differ in
         * the last bit between CPUs; same-machine runs are checked bytewise above. */
        json_t *jw = json_loads(want, 0, &je), *ja = json_loads(a, 0, &je);
        CHECK_MSG(jw && ja && json_close(jw, ja, "$"),
                  "quickstart output differs from tests/ref/quickstart.json; if the change is "
                  "intended, rerun with SERVESIM_UPDATE_REF=1 and commit the new reference");
        json_decref(jw);
        json_decref(ja);
    }
    free(want);
    free(a);
    free(b);
    free(c);
}

static void test_exit_codes(void)
{
    char sc_dir[1100];
    snprintf(sc_dir, sizeof sc_dir, "%s/scenarios", src);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s version", bin);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "servesim ");
    free(out);
    const char *helps[] = {"run --help", "validate --help", "schema --help", "version --help", "--help"};
    for (int i = 0; i < 5; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", bin, helps[i]);
        CHECK_MSG(sh(cmd, &out) == 0, "%s", helps[i]);
        CHECK_CONTAINS(out, "usage");
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s frobnicate 2>&1", bin);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "unknown command");
    free(out);
    snprintf(cmd, sizeof cmd, "%s run 2>&1", bin);
    CHECK(sh(cmd, &out) == 2);
    free(out);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --bogus 2>&1", bin, src);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "unknown option");
    free(out);
    snprintf(cmd, sizeof cmd, "%s validate %s/scenarios/quickstart.yaml", bin, src);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "valid");
    free(out);
    /* Every shipped scenario loads. */
    DIR *d = opendir(sc_dir);
    CHECK(d != NULL);
    int n_sc = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml")) continue;
        snprintf(cmd, sizeof cmd, "%s validate %s/%.200s 2>&1", bin, sc_dir, e->d_name);
        int rc = sh(cmd, &out);
        CHECK_MSG(rc == 0, "%s: %s", e->d_name, out ? out : "");
        free(out);
        n_sc++;
    }
    if (d) closedir(d);
    CHECK(n_sc >= 10);
    /* The README's speed comparison with Vidur runs this one. */
    snprintf(cmd, sizeof cmd, "%s validate %s/bench/vidur-compare.yaml 2>&1", bin, src);
    CHECK_MSG(sh(cmd, &out) == 0, "bench/vidur-compare.yaml: %s", out ? out : "");
    CHECK_CONTAINS(out, "valid");
    free(out);
    snprintf(cmd, sizeof cmd,
             "%s validate %s/scenarios/quickstart.yaml --set workload.arrival.rate=fast 2>&1", bin, src);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "workload.arrival.rate");
    free(out);
    snprintf(cmd, sizeof cmd,
             "%s validate %s/scenarios/quickstart.yaml --set model=llama-9000 2>&1", bin, src);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "llama-9000");
    free(out);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --quiet "
             "--set workload.arrival.rate=2000 --set workload.requests=100000 "
             "--set overload.max_queue_delay_s=5 >/dev/null 2>&1", bin, src);
    CHECK_MSG(sh(cmd, NULL) == 3, "overload must exit with status 3");
    snprintf(cmd, sizeof cmd, "%s schema", bin);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "workload.arrival.rate");
    /* The README's scenario reference must be the generated one: every key
     * row `servesim schema` prints appears there verbatim. */
    char readme_path[2048];
    snprintf(readme_path, sizeof readme_path, "%s/README.md", src);
    char *readme = test_slurp(readme_path);
    CHECK_MSG(readme != NULL, "cannot read %s", readme_path);
    int rows = 0, missing = 0;
    for (char *line = out; readme && line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (strncmp(line, "| `", 3) == 0) {
            rows++;
            if (!strstr(readme, line)) {
                if (missing++ < 3) fprintf(stderr, "README lacks reference row: %s\n", line);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    CHECK_MSG(rows > 40 && missing == 0,
              "%d of %d reference rows missing from README.md: paste `servesim schema` output into "
              "its 'Scenario reference' section", missing, rows);
    free(readme);
    free(out);
}

static void test_sweep(void)
{
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --quiet "
             "--set workload.requests=200 --sweep workload.arrival.rate=10,40", bin, src);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "sweep over workload.arrival.rate");
    CHECK(out && strstr(out, "\n10 ") && strstr(out, "\n40 "));
    free(out);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --quiet --json "
             "--set workload.requests=200 --sweep workload.arrival.rate=10,40", bin, src);
    CHECK(sh(cmd, &out) == 0);
    json_error_t je;
    json_t *arr = out ? json_loads(out, 0, &je) : NULL;
    CHECK_MSG(json_is_array(arr) && json_array_size(arr) == 2, "sweep JSON is not a 2-array");
    if (json_is_array(arr) && json_array_size(arr) == 2) {
        double r0 = json_number_value(json_object_get(
            json_object_get(json_object_get(json_array_get(arr, 0), "summary"), "throughput"), "req_per_s"));
        double r1 = json_number_value(json_object_get(
            json_object_get(json_object_get(json_array_get(arr, 1), "summary"), "throughput"), "req_per_s"));
        CHECK_MSG(r1 > 2 * r0, "throughput should follow the swept rate: %g vs %g", r0, r1);
    }
    json_decref(arr);
    free(out);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --sweep workload.arrival.rate 2>&1",
             bin, src);
    CHECK(sh(cmd, &out) == 2);
    free(out);

    /* --out: the sweep's plots (when gnuplot is installed) and its DB. */
    char dir[] = "/tmp/servesim_out_XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --quiet --set workload.requests=200 "
             "--sweep workload.arrival.rate=10,40 --out %s >/dev/null 2>&1", bin, src, dir);
    int rc = sh(cmd, NULL);
    char path[256];
    struct stat stb;
    snprintf(path, sizeof path, "%s/quickstart.db", dir);
    CHECK(stat(path, &stb) == 0 && stb.st_size > 0);
    if (system("gnuplot --version >/dev/null 2>&1") == 0) {
        CHECK(rc == 0);
        const char *pngs[] = {"quickstart-sweep.png", "quickstart-throughput-latency.png", "quickstart-cdf.png"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, pngs[i]);
            CHECK_MSG(stat(path, &stb) == 0 && stb.st_size > 1000, "%s missing or empty", path);
            unlink(path);
        }
    } else {
        CHECK(rc == 1); /* asked for plots, gnuplot missing: says so and fails */
    }
    snprintf(path, sizeof path, "%s/quickstart.db", dir);
    unlink(path);
    /* Relative outputs land in the working directory: the scenario's own
     * output.db (quickstart.db) and --out given with a trailing slash, each
     * message naming the file (no doubled slash). */
    snprintf(cmd, sizeof cmd, "cd %s && %s run %s/scenarios/quickstart.yaml --quiet --set workload.requests=100 2>&1",
             dir, bin, src);
    CHECK(sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "stored in quickstart.db\n");
    free(out);
    snprintf(path, sizeof path, "%s/quickstart.db", dir);
    CHECK(stat(path, &stb) == 0 && stb.st_size > 0);
    unlink(path);
    snprintf(cmd, sizeof cmd, "cd %s && %s run %s/scenarios/quickstart.yaml --quiet --set workload.requests=100 "
             "--sweep workload.arrival.rate=10,20 --out sub/ 2>&1", dir, bin, src);
    sh(cmd, &out);
    CHECK_CONTAINS(out, "results: all 2 runs stored in sub/quickstart.db\n");
    CHECK(strstr(out, "//") == NULL);
    free(out);
    snprintf(path, sizeof path, "%s/sub/quickstart.db", dir);
    CHECK(stat(path, &stb) == 0 && stb.st_size > 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/sub'", dir);
    CHECK(system(cmd) == 0);
    rmdir(dir);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --no-db --out /tmp 2>&1", bin, src);
    CHECK(sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--out");
    free(out);
}

static void test_db(void)
{
    char db[] = "/tmp/servesim_cli_XXXXXX";
    int fd = mkstemp(db);
    CHECK(fd >= 0);
    close(fd);
    unlink(db);
    char cmd[4096];
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.yaml --quiet --db %s "
                 "--set workload.requests=300 >/dev/null", bin, src, db);
        CHECK(sh(cmd, NULL) == 0);
    }
    sqlite3 *h = NULL;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM requests)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        CHECK(sqlite3_column_int(st, 0) == 2);
        CHECK(sqlite3_column_int(st, 1) == 600);
    } else {
        CHECK_MSG(0, "query failed: %s", sqlite3_errmsg(h));
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    unlink(db);
}

/* Mistyped words get the nearest one; bad values are called bad values. */
static void test_suggestions(void)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"serch x.yaml", "unknown command 'serch' (did you mean 'search'?)"},
        {"run scenarios/quickstart.yaml --jsn", "unknown option '--jsn' (did you mean '--json'?)"},
        {"search scenarios/quickstart.yaml --no-prnue", "(did you mean '--no-prune'?)"},
        {"search scenarios/quickstart.yaml --top 0", "--top: expected an integer 1..100, got '0'"},
        {"search scenarios/quickstart.yaml --top abc", "--top: expected an integer 1..100, got 'abc'"},
        {"search scenarios/quickstart.yaml --rate -1", "--rate: expected requests/s > 0, got '-1'"},
        {"search scenarios/quickstart.yaml --format jpg", "--format: invalid value 'jpg'"},
        {"run --help", "[--out DIR]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[1024], *out = NULL;
        snprintf(cmd, sizeof cmd, "cd %s && %s %s 2>&1", src, bin, cases[i].args);
        int rc = sh(cmd, &out);
        CHECK_MSG(rc == (strstr(cases[i].args, "--help") ? 0 : 2), "%s: exit %d", cases[i].args, rc);
        CHECK_CONTAINS(out, cases[i].want);
        free(out);
    }
    const char *const words[] = {"search", "estimate", "predict"};
    CHECK(sim_suggest("estimat", words, 3) == words[1]);
    CHECK(sim_suggest("xyz", words, 3) == NULL);
    CHECK(sim_suggest("search", words, 3) == NULL); /* exact: nothing to suggest */
    /* The plain edit distance the schema and the catalogue share. */
    CHECK(sim_edit_distance("kitten", "sitting", 0) == 3);
    CHECK(sim_edit_distance("H100-SXM", "h100-sxm", 0) == 4);
    CHECK(sim_edit_distance("H100-SXM", "h100-sxm", 1) == 0);
    CHECK(sim_edit_distance("", "abc", 1) == 3);
}

static const test_case cases[] = {
    {"json_determinism", test_json_determinism},
    {"exit_codes", test_exit_codes},
    {"sweep", test_sweep},
    {"db", test_db},
    {"suggestions", test_suggestions},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: test_cli SERVESIM_BIN SOURCE_DIR\n");
        return 2;
    }
    bin = argv[1];
    src = argv[2];
    return test_run("test_cli", cases);
}
