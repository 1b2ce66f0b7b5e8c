/* test_search_replications — search.replications / `search --replications N`:
 * the top deployments re-run with independent seeds at their rates.
 *
 * On scenarios/sensitivity-llama70b-h100.yaml (three layouts on 8 H100s):
 * every top entry carries {n, mean, half_width, low, high,
 * indistinguishable_from_best}, the top list is ordered by the means, the
 * leader is never marked and every other entry is marked exactly when its
 * interval overlaps the leader's; the answer is the same on 1 and 3
 * threads; without replications the JSON has no such objects; 1 is refused;
 * with a results DB every replicated deployment's interval is stored. */
#include "test_util.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *search_json(const char *extra, int *status)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' search scenarios/sensitivity-llama70b-h100.yaml --no-db --quiet --json %s 2>/dev/null",
             test_src_dir(), test_servesim, extra);
    *status = test_sh(cmd, &out);
    json_t *o = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    return o;
}

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void case_intervals_and_ties(void)
{
    int st;
    json_t *o = search_json("--replications 6 --threads 2", &st);
    REQUIRE(o);
    CHECK(st == 0);
    CHECK(json_integer_value(json_object_get(o, "replications")) == 6);
    json_t *top = json_object_get(o, "top");
    REQUIRE(json_array_size(top) >= 2);
    json_t *lead = json_object_get(json_array_get(top, 0), "replications");
    REQUIRE(json_is_object(lead));
    CHECK(json_is_false(json_object_get(lead, "indistinguishable_from_best")));
    double prev = INFINITY;
    int tied = 0;
    for (size_t q = 0; q < json_array_size(top); q++) {
        json_t *c = json_array_get(top, q), *r = json_object_get(c, "replications");
        REQUIRE_MSG(json_is_object(r), "top %zu has no replications", q);
        double mean = num(r, "mean"), lo = num(r, "low"), hi = num(r, "high"), hw = num(r, "half_width");
        CHECK(json_integer_value(json_object_get(r, "n")) == 6);
        CHECK(lo <= mean && mean <= hi && hw > 0);
        CHECK_NEAR(hi - lo, 2 * hw, 1e-9 * (1 + hw));
        CHECK_MSG(mean <= prev, "top %zu: mean %g above the one before (%g)", q, mean, prev);
        prev = mean;
        if (q > 0) {
            int overlap = lo <= num(lead, "high") && num(lead, "low") <= hi;
            CHECK(json_is_true(json_object_get(r, "indistinguishable_from_best")) == overlap);
            tied += overlap;
        }
        printf("  #%zu %s: one seed %.2f, mean %.2f ± %.2f%s\n", q + 1,
               json_string_value(json_object_get(c, "label")), num(c, "score"), mean, hw,
               q > 0 && json_is_true(json_object_get(r, "indistinguishable_from_best")) ? " (indistinguishable)" : "");
    }
    printf("  %d runner-up(s) statistically indistinguishable from #1\n", tied);
    json_decref(o);
}

/* The top list (labels and intervals) of a search's JSON. */
static char *top_of(json_t *o)
{
    json_t *t = json_array();
    json_t *top = json_object_get(o, "top");
    for (size_t q = 0; q < json_array_size(top); q++) {
        json_t *c = json_array_get(top, q);
        json_array_append_new(t, json_pack("{s:O,s:O}", "label", json_object_get(c, "label"), "replications",
                                           json_object_get(c, "replications")));
    }
    char *s = json_dumps(t, JSON_COMPACT);
    json_decref(t);
    return s;
}

static void case_threads_invariant(void)
{
    int s1, s3;
    json_t *a = search_json("--replications 4 --threads 1", &s1), *b = search_json("--replications 4 --threads 3", &s3);
    REQUIRE(a && b);
    CHECK(s1 == 0 && s3 == 0);
    char *ta = top_of(a), *tb = top_of(b);
    CHECK_MSG(ta && tb && strcmp(ta, tb) == 0, "%s\nvs\n%s", ta ? ta : "", tb ? tb : "");
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
}

static void case_off_by_default(void)
{
    int st;
    json_t *o = search_json("", &st);
    REQUIRE(o);
    CHECK(st == 0);
    CHECK(json_integer_value(json_object_get(o, "replications")) == 0);
    json_t *top = json_object_get(o, "top");
    CHECK(json_array_size(top) >= 1);
    for (size_t q = 0; q < json_array_size(top); q++)
        CHECK(json_object_get(json_array_get(top, q), "replications") == NULL);
    json_decref(o);
}

static void case_refusals(void)
{
    static const char *const bad[] = {"--replications 1", "--replications x", "--set search.replications=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1024], *err = NULL;
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' search scenarios/sensitivity-llama70b-h100.yaml --no-db %s 2>&1 >/dev/null",
                 test_src_dir(), test_servesim, bad[i]);
        int st = test_sh(cmd, &err);
        CHECK_MSG(st == 2, "%s: exit %d", bad[i], st);
        CHECK_MSG(err && strstr(err, "replications"), "%s: %s", bad[i], err ? err : "");
        free(err);
    }
}

/* With a results DB each replicated deployment is one replication set:
 * its objective's mean and interval (figure search.score) as the JSON has
 * them, params_json.search naming its rank, label and tie; read back with
 * SQLite. */
static void case_stored_in_db(void)
{
    char path[] = "/tmp/test_search_replications_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(path);
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' search scenarios/sensitivity-llama70b-h100.yaml --db %s --quiet --json --replications 4 "
             "--threads 2 2>/dev/null",
             test_src_dir(), test_servesim, path);
    int st = test_sh(cmd, &out);
    json_t *o = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    REQUIRE(o);
    CHECK(st == 0);
    json_t *top = json_object_get(o, "top");
    sqlite3 *db = NULL;
    REQUIRE_OR(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, {
        json_decref(o);
        return;
    });
    sqlite3_stmt *q = NULL;
    CHECK(sqlite3_prepare_v2(db,
                             "SELECT s.replications, s.level, json_extract(s.params_json, '$.search.rank'),"
                             " json_extract(s.params_json, '$.search.label'),"
                             " json_extract(s.params_json, '$.search.indistinguishable_from_best'),"
                             " i.figure, i.mean, i.half_width, i.low, i.high, i.n"
                             " FROM replication_sets s JOIN intervals i ON i.set_id = s.id ORDER BY s.id",
                             -1, &q, NULL) == SQLITE_OK);
    size_t rows = 0;
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        json_t *c = json_array_get(top, rows), *r = json_object_get(c, "replications");
        rows++;
        REQUIRE_MSG_OR(json_is_object(r), break, "set %zu: no such top entry", rows);
        CHECK(sqlite3_column_int(q, 0) == 4 && sqlite3_column_double(q, 1) == 0.95);
        CHECK(sqlite3_column_int64(q, 2) == (sqlite3_int64)rows);
        CHECK(strcmp((const char *)sqlite3_column_text(q, 3), json_string_value(json_object_get(c, "label"))) == 0);
        CHECK(sqlite3_column_int(q, 4) == json_is_true(json_object_get(r, "indistinguishable_from_best")));
        CHECK(strcmp((const char *)sqlite3_column_text(q, 5), "search.score") == 0);
        CHECK(sqlite3_column_int(q, 10) == 4);
        static const char *const keys[] = {"mean", "half_width", "low", "high"};
        for (int k = 0; k < 4; k++) {
            double want = num(r, keys[k]);
            CHECK_NEAR(sqlite3_column_double(q, 6 + k), want, 1e-9 * (1 + fabs(want)));
        }
    }
    sqlite3_finalize(q);
    CHECK_MSG(rows == json_array_size(top) && rows >= 2, "%zu sets for %zu top entries", rows, json_array_size(top));
    sqlite3_close(db);
    json_decref(o);
    unlink(path);
}

static const test_case cases[] = {
    {"intervals_and_ties", case_intervals_and_ties},
    {"threads_invariant", case_threads_invariant},
    {"off_by_default", case_off_by_default},
    {"refusals", case_refusals},
    {"stored_in_db", case_stored_in_db},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_replications", cases);
}
