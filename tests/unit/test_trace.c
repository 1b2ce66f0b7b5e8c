/* test_trace — Mooncake JSONL and CSV trace parsing: exact values of small
 * samples, every error path with its message, and the checked-in head of the
 * real Mooncake conversation trace. */
#include "sim_trace.h"
#include "test_util.h"

#include <stdlib.h>

static sim_trace *parse(const char *s, sim_trace_format fmt, sim_err *err)
{
    sim_trace *t = (sim_trace *)0x1; /* must be reset to NULL on error */
    int rc = sim_trace_parse(s, strlen(s), "t.in", fmt, &t, err);
    CHECK((rc == 0) == (t != NULL));
    return rc == 0 ? t : NULL;
}

/* Parses s expecting failure with a message containing each of needles. */
static void expect_error(const char *s, sim_trace_format fmt, const char *n1, const char *n2)
{
    sim_err err = {{0}};
    sim_trace *t = (sim_trace *)0x1;
    int rc = sim_trace_parse(s, strlen(s), "t.in", fmt, &t, &err);
    CHECK_MSG(rc == SIM_EINVAL, "input '%s' gave rc %d", s, rc);
    CHECK(t == NULL);
    CHECK_CONTAINS(err.msg, n1);
    if (n2) CHECK_CONTAINS(err.msg, n2);
    if (rc == 0) sim_trace_destroy(t);
}

static void test_mooncake_small(void)
{
    sim_err err = {{0}};
    const char *s = "{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\n"
                    "\n"
                    "{\"timestamp\": 1500.5, \"input_length\": 131000, \"output_length\": 1}\n"
                    "  {\"hash_ids\": [4294967295, 7], \"output_length\": 3.0, \"input_length\": 2, \"timestamp\": 1500.5}";
    sim_trace *t = parse(s, SIM_TRACE_MOONCAKE, &err);
    REQUIRE_MSG(t != NULL, "%s", err.msg);
    CHECK(t->n == 3);
    CHECK(t->n_hashes == 5);
    CHECK_NEAR(t->entries[0].timestamp_s, 0.0, 0);
    CHECK(t->entries[0].input_tokens == 6758 && t->entries[0].output_tokens == 500);
    CHECK(t->entries[0].n_hash == 3 && t->entries[0].hash_off == 0);
    CHECK(t->hashes[0] == 0 && t->hashes[1] == 1 && t->hashes[2] == 2);
    CHECK_NEAR(t->entries[1].timestamp_s, 1.5005, 1e-12);
    CHECK(t->entries[1].input_tokens == 131000 && t->entries[1].output_tokens == 1);
    CHECK(t->entries[1].n_hash == 0);
    CHECK(t->entries[2].input_tokens == 2 && t->entries[2].output_tokens == 3);
    CHECK(t->entries[2].n_hash == 2 && t->entries[2].hash_off == 3);
    CHECK(t->hashes[3] == 4294967295u && t->hashes[4] == 7);
    sim_trace_destroy(t);
}

static void test_csv_small(void)
{
    sim_err err = {{0}};
    sim_trace *t = parse("1,2,3\n1.25,  40 ,50\n", SIM_TRACE_CSV, &err);
    REQUIRE_MSG(t != NULL, "%s", err.msg);
    CHECK(t->n == 2 && t->n_hashes == 0);
    CHECK_NEAR(t->entries[0].timestamp_s, 1.0, 0);
    CHECK(t->entries[0].input_tokens == 2 && t->entries[0].output_tokens == 3);
    CHECK_NEAR(t->entries[1].timestamp_s, 1.25, 0);
    CHECK(t->entries[1].input_tokens == 40 && t->entries[1].output_tokens == 50);
    CHECK(t->entries[1].n_hash == 0);
    sim_trace_destroy(t);
}

static void test_errors(void)
{
    const sim_trace_format M = SIM_TRACE_MOONCAKE, C = SIM_TRACE_CSV;
    const char *ok = "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n";
    char buf[512];

    /* JSON */
    snprintf(buf, sizeof buf, "%s{\"timestamp\": 6, \"input_length\": 1,\n", ok);
    expect_error(buf, M, "t.in:2:", "invalid JSON");
    expect_error("[1, 2]\n", M, "t.in:1: expected a JSON object, got an array", NULL);
    expect_error("{\"input_length\": 1, \"output_length\": 1}", M, "t.in:1: missing field 'timestamp'", NULL);
    snprintf(buf, sizeof buf, "\n%s{\"timestamp\": 7, \"output_length\": 1}", ok);
    expect_error(buf, M, "t.in:3: missing field 'input_length'", "integer >= 1");
    expect_error("{\"timestamp\": 1, \"input_length\": 1}", M, "missing field 'output_length'", NULL);
    expect_error("{\"timestamp\": \"0\", \"input_length\": 1, \"output_length\": 1}", M,
                 "t.in:1: field 'timestamp': expected a number of ms >= 0, got a string", NULL);
    expect_error("{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}", M,
                 "field 'timestamp': expected a number of ms >= 0, got -1", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1}", M,
                 "field 'input_length': expected an integer >= 1, got a real number", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1}", M,
                 "field 'input_length': expected an integer in [1, 2147483647], got 0", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": -2}", M,
                 "field 'output_length': expected an integer in [1, 2147483647], got -2", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 9999999999}", M,
                 "got 9999999999", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": 5}", M,
                 "field 'hash_ids': expected an array of integers, got an integer", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1, -4]}", M,
                 "field 'hash_ids'[1]: expected an integer in [0, 4294967295], got -4", NULL);
    expect_error("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": [\"a\"]}", M,
                 "field 'hash_ids'[0]: expected a non-negative integer, got a string", NULL);
    snprintf(buf, sizeof buf, "%s{\"timestamp\": 4.5, \"input_length\": 1, \"output_length\": 1}", ok);
    expect_error(buf, M, "t.in:2: timestamp 0.0045 s is before the previous entry's 0.005 s", "backwards");
    expect_error("{\"timestamp\": 0, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1}", M,
                 "t.in:1:", "duplicate");
    expect_error("", M, "t.in: trace is empty", NULL);
    expect_error("\n  \n\t\n", M, "trace is empty", NULL);

    /* CSV */
    expect_error("", C, "t.in: trace is empty", NULL);
    expect_error("timestamp,input_tokens,output_tokens\n\n", C, "trace is empty", NULL);
    expect_error("0,1\n", C, "t.in:1: expected 3 columns (timestamp,input_tokens,output_tokens), got 2", NULL);
    expect_error("0,1,2\n1,2,3,4\n", C, "t.in:2: expected 3 columns", "got 4");
    expect_error("0,1,2\nx,2,3\n", C, "t.in:2: column 1 (timestamp): expected a number of seconds >= 0, got 'x'",
                 NULL);
    expect_error("-1,2,3\n", C, "column 1 (timestamp)", "got '-1'");
    expect_error("0,abc,3\n", C, "t.in:1: column 2 (input_tokens): expected an integer in [1, 2147483647], got 'abc'",
                 NULL);
    expect_error("0,12.5,3\n", C, "column 2 (input_tokens)", "got '12.5'");
    expect_error("0,1,0\n", C, "column 3 (output_tokens)", "got '0'");
    expect_error("0,1,\n", C, "column 3 (output_tokens)", "got ''");
    expect_error("0,1,nan\n", C, "column 3 (output_tokens)", NULL);
    expect_error("inf,1,1\n", C, "column 1 (timestamp)", NULL);
    expect_error("2,1,1\n1.5,1,1\n", C, "t.in:2: timestamp 1.5 s is before the previous entry's 2 s", NULL);
    /* A header is only accepted as the first non-blank line. */
    expect_error("0,1,1\ntimestamp,input_tokens,output_tokens\n", C, "t.in:2: column 1 (timestamp)", NULL);
    /* Long garbage is quoted, truncated. */
    char big[4000];
    memset(big, 'z', sizeof big);
    memcpy(big, "0,", 2);
    memcpy(big + sizeof big - 5, ",1\n", 4);
    expect_error(big, C, "column 2 (input_tokens)", "zzz...'");
    CHECK(strlen(big) < sizeof big);

    /* Unknown format; missing file. */
    sim_err err = {{0}};
    sim_trace *t = NULL;
    CHECK(sim_trace_parse("1,1,1", 5, "x", (sim_trace_format)7, &t, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "unknown trace format");
    CHECK(sim_trace_load("/nonexistent/dir/trace.jsonl", M, &t, &err) == SIM_EIO);
    CHECK(t == NULL);
    CHECK_CONTAINS(err.msg, "/nonexistent/dir/trace.jsonl: cannot open trace");
}

/* A NUL byte inside a line is an error, not a truncation. */
static void test_nul_bytes(void)
{
    sim_err err = {{0}};
    sim_trace *t = NULL;
    const char csv[] = "0,1\0,1\n";
    CHECK(sim_trace_parse(csv, sizeof csv - 1, "n", SIM_TRACE_CSV, &t, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "n:1: column 2");
    const char js[] = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\0\n";
    CHECK(sim_trace_parse(js, sizeof js - 1, "n", SIM_TRACE_MOONCAKE, &t, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "n:1:");
    CHECK(t == NULL);
}

/* One line far longer than any fixed buffer. */
static void test_long_line(void)
{
    const int n = 200000;
    size_t cap = (size_t)n * 8 + 200;
    char *s = malloc(cap);
    REQUIRE(s != NULL);
    size_t p = (size_t)snprintf(s, cap, "{\"timestamp\": 3, \"input_length\": 130000, \"output_length\": 2, \"hash_ids\": [");
    for (int i = 0; i < n; i++) p += (size_t)snprintf(s + p, cap - p, i ? ",%d" : "%d", i);
    p += (size_t)snprintf(s + p, cap - p, "]}\n");
    sim_err err = {{0}};
    sim_trace *t = NULL;
    int rc = sim_trace_parse(s, p, "long", SIM_TRACE_MOONCAKE, &t, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (t) {
        CHECK(t->n == 1 && t->n_hashes == n && t->entries[0].n_hash == n);
        CHECK(t->hashes[n - 1] == (uint32_t)(n - 1));
        CHECK(t->entries[0].input_tokens == 130000);
        sim_trace_destroy(t);
    }
    free(s);
}

static void test_files(void)
{
    const char *src = test_src_dir();
    char path[4096];
    sim_err err = {{0}};
    sim_trace *t = NULL;

    snprintf(path, sizeof path, "%s/tests/data/workload/mooncake_conversation_head.jsonl", src);
    int rc = sim_trace_load(path, SIM_TRACE_MOONCAKE, &t, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (t) {
        CHECK(t->n == 200);
        CHECK(t->n_hashes == 5537);
        CHECK(t->entries[0].input_tokens == 6758 && t->entries[0].output_tokens == 500);
        CHECK(t->entries[0].n_hash == 14 && t->hashes[13] == 13);
        const sim_trace_entry *last = &t->entries[199];
        CHECK_NEAR(last->timestamp_s, 72.0, 1e-12);
        CHECK(last->input_tokens == 19978 && last->output_tokens == 448);
        CHECK(last->n_hash == 40);
        CHECK(last->hash_off + last->n_hash == t->n_hashes);
        CHECK(t->hashes[last->hash_off] == 0 && t->hashes[last->hash_off + 1] == 5176);
        CHECK(t->hashes[t->n_hashes - 1] == 5214);
        int64_t in = 0, outt = 0;
        for (int64_t i = 0; i < t->n; i++) {
            in += t->entries[i].input_tokens;
            outt += t->entries[i].output_tokens;
        }
        CHECK(in == 2782179 && outt == 71379);
        sim_trace_destroy(t);
    }

    snprintf(path, sizeof path, "%s/tests/data/workload/sample.csv", src);
    rc = sim_trace_load(path, SIM_TRACE_CSV, &t, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (t) {
        CHECK(t->n == 4);
        CHECK_NEAR(t->entries[1].timestamp_s, 0.5, 0);
        CHECK(t->entries[1].input_tokens == 2048 && t->entries[1].output_tokens == 128);
        CHECK(t->entries[2].input_tokens == 7 && t->entries[2].output_tokens == 1);
        CHECK_NEAR(t->entries[3].timestamp_s, 12.25, 0);
        CHECK(t->entries[3].input_tokens == 131072 && t->entries[3].output_tokens == 4096);
        sim_trace_destroy(t);
    }
    /* The same CSV read as JSONL fails on its first line. */
    rc = sim_trace_load(path, SIM_TRACE_MOONCAKE, &t, &err);
    CHECK(rc == SIM_EINVAL && t == NULL);
    CHECK_CONTAINS(err.msg, "sample.csv:1:");
}

static const test_case cases[] = {
    {"mooncake_small", test_mooncake_small},
    {"csv_small", test_csv_small},
    {"errors", test_errors},
    {"nul_bytes", test_nul_bytes},
    {"long_line", test_long_line},
    {"files", test_files},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_trace", cases);
}
