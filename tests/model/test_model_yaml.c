/* test_model_yaml — the catalogue files' schema loader (model_yaml) on the
 * one YAML reader (sim_yaml): values, units, nested keys and lists land in
 * the struct, and every refusal names file:line:column and the key path. */
#include "model_yaml.h"
#include "test_util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    double bw;
    int32_t n;
    int32_t flag;
    char name[8];
    char tags[16];
    double eff;
} rec;

static const model_yaml_field fields[] = {
    {"bw_gbps", MODEL_YAML_DOUBLE, offsetof(rec, bw), 0, 1e9, 1},
    {"n", MODEL_YAML_INT, offsetof(rec, n), 0, 0, 1},
    {"flag", MODEL_YAML_BOOL, offsetof(rec, flag), 0, 0, 0},
    {"name", MODEL_YAML_STR, offsetof(rec, name), 8, 0, 0},
    {"tags", MODEL_YAML_STRLIST, offsetof(rec, tags), 16, 0, 0},
    {"efficiency.gemm", MODEL_YAML_DOUBLE, offsetof(rec, eff), 0, 0, 0},
};
#define N_FIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Loads text; returns the code and leaves the message in e. */
static int load(const char *text, rec *r, int *seen, sim_err *e)
{
    memset(r, 0, sizeof *r);
    e->msg[0] = 0;
    return model_yaml_load(text, strlen(text), "t.yaml", fields, N_FIELDS, r, seen, e);
}

static void case_values(void)
{
    rec r;
    sim_err e;
    int seen[N_FIELDS] = {0};
    const char *t = "bw_gbps: 2.5\nn: 7\nflag: Yes\nname: abc\ntags: [x, y]\nefficiency:\n  gemm: 0.5\n";
    REQUIRE(load(t, &r, seen, &e) == 0);
    CHECK_NEAR(r.bw, 2.5e9, 1e-3);
    CHECK(r.n == 7 && r.flag == 1);
    CHECK(!strcmp(r.name, "abc"));
    CHECK(!strcmp(r.tags, "x, y"));
    CHECK_NEAR(r.eff, 0.5, 0); /* scale 0 means 1 */
    CHECK(seen[0] && seen[1] && seen[2] && seen[3] && seen[4] && seen[5]);
    REQUIRE(load("bw_gbps: 1\nn: 0\ntags: one\n", &r, seen, &e) == 0);
    CHECK(!strcmp(r.tags, "one"));
    CHECK(!seen[2] && !seen[5]);
}

static void case_value_errors(void)
{
    rec r;
    sim_err e;
    CHECK(load("bw_gbps: fast\nn: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:1:10: bw_gbps: expected a number, got 'fast'");
    CHECK(load("bw_gbps: -1\nn: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:1:10: bw_gbps: must be >= 0, got '-1'");
    CHECK(load("bw_gbps: 1\nn: 2.5\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:2:4: n: expected a non-negative integer, got '2.5'");
    CHECK(load("bw_gbps: 1\nn: 1\nflag: maybe\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:7: flag: expected true or false, got 'maybe'");
    CHECK(load("bw_gbps: 1\nn: 1\nname: abcdefgh\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:7: name: longer than 7 characters");
    CHECK(load("bw_gbps: 1\nn: [1]\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:2:4: n: expected a scalar value");
    CHECK(load("bw_gbps: 1\nn: 1\ntags: a, b\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:7: tags: write several names as a list [a, b]");
    CHECK(load("bw_gbps: 1\nn: 1\ntags: [a, {b: 1}]\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:11: tags: expected a list of names");
    CHECK(load("bw_gbps: 1\nn: 1\ntags: [abcdefgh, ijklmnop]\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:18: tags: list longer than 15 characters");
}

static void case_key_errors(void)
{
    rec r;
    sim_err e;
    CHECK(load("bw_gbps: 1\nn: 1\nefficiency:\n  gemn: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:4:3: unknown key 'efficiency.gemn' (did you mean 'efficiency.gemm'?)");
    CHECK(load("bw_gbps: 1\nn: 1\nzzzzzz: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:1: unknown key 'zzzzzz' (known keys: bw_gbps, n, flag, name, tags, "
                          "efficiency.gemm)");
    CHECK(load("bw_gbps: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml: missing required key 'n'");
    /* the same path spelt nested and dotted */
    CHECK(load("bw_gbps: 1\nn: 1\nefficiency:\n  gemm: 1\nefficiency.gemm: 2\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:5:1: duplicate key 'efficiency.gemm'");
}

/* What the reader refuses, the catalogue refuses with the reader's message. */
static void case_document_errors(void)
{
    rec r;
    sim_err e;
    CHECK(load("bw_gbps: 1\nn: 1\nbw_gbps: 2\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:1: duplicate key 'bw_gbps' at bw_gbps (first defined at line 1, column 1)");
    CHECK(load("bw_gbps: &a 1\nn: *a\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:2:4: YAML aliases (*a) are not supported in catalogues");
    CHECK(load("bw_gbps: 1\nn: 1\n---\nn: 2\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:3:1: a catalogue file holds one YAML document; a second starts here");
    CHECK(load("bw_gbps: [1\nn: 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml:2:");
    CHECK_CONTAINS(e.msg, "YAML syntax error");
    CHECK(load("", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml: expected a mapping of keys at the top level");
    CHECK(load("- 1\n", &r, NULL, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "t.yaml: expected a mapping of keys at the top level");
}

static const test_case cases[] = {
    {"values", case_values},
    {"value_errors", case_value_errors},
    {"key_errors", case_key_errors},
    {"document_errors", case_document_errors},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_model_yaml", cases);
}
