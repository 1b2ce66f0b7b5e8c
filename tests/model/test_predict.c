/* test_predict — the `predict` command (sim_cli_predict) in-process:
 * table and JSON output, flags, scenario input, and clear exit-2 errors. */
#include "sim_cli_predict.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUT_MAX (1 << 16)
static char *out;

/* Runs predict with stdout captured into out; returns its exit code. */
static int run(int argc, char **argv)
{
    char tmpl[] = "/tmp/test_predict_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return -1;
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    int rc = sim_cli_predict(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, out, OUT_MAX - 1);
    out[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(tmpl);
    return rc;
}

/* The op table of a TP4 prefill and decode step. */
static void case_table(void)
{
    char *a1[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "4", "--prefill", "1024@512",
                  "--decode", "16", "--context", "2000"};
    CHECK(run(13, a1) == 0);
    CHECK_CONTAINS(out, "qkv_proj");
    CHECK_CONTAINS(out, "attn_prefill");
    CHECK_CONTAINS(out, "attn_decode");
    CHECK_CONTAINS(out, "tp_reduce_mlp");
    CHECK_CONTAINS(out, "iteration bound:");
    CHECK_CONTAINS(out, "roofline");
}

/* JSON, with decode context parallelism and block FP8. */
static void case_json(void)
{
    char *a2[] = {"predict", "--model", "deepseek-v3", "--gpu", "b200", "--tp", "8", "--dcp", "8", "--dtype",
                  "fp8_block", "--decode", "32", "--context", "8000", "--json"};
    CHECK(run(16, a2) == 0);
    CHECK_CONTAINS(out, "\"op\": \"dcp_gather\"");
    CHECK_CONTAINS(out, "\"dtype\": \"fp8_block\"");
    CHECK_CONTAINS(out, "\"total_s\":");
    CHECK_CONTAINS(out, "\"kv_capacity_tokens\":");
}

static void case_errors(void)
{
    /* Errors exit 2 with the reason on stderr. */
    char *e1[] = {"predict", "--model", "nope", "--gpu", "h100-sxm"};
    CHECK(run(5, e1) == 2);
    char *e2[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "3"};
    CHECK(run(7, e2) == 2);
    char *e3[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--sp", "3", "--sp-kind", "ulysses",
                  "--tp", "8"};
    CHECK(run(11, e3) == 2);
    char *e4[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--dtype", "int3"};
    CHECK(run(7, e4) == 2);
    /* An enum flag takes the scenario key's names, exactly as the loader does. */
    char *e6[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--sp-kind", "Ring"};
    CHECK(run(7, e6) == 2);
    char *e7[] = {"predict", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--ep-mode", "fast"};
    CHECK(run(7, e7) == 2);
    char *e5[] = {"predict", "--wat"};
    CHECK(run(2, e5) == 2);
    char *h[] = {"predict", "--help"};
    CHECK(run(2, h) == 0);
    CHECK_CONTAINS(out, "usage: servesim predict");
}

static void case_scenario(void)
{
    /* From a scenario file, with --set. */
    const char *src = test_src_dir();
    char path[2048];
    snprintf(path, sizeof path, "%s/scenarios/quickstart.yaml", src);
    char *s1[] = {"predict", path, "--set", "deployment.pools.0.parallel.tp=2", "--decode", "8"};
    int rc = run(6, s1);
    CHECK_MSG(rc == 0, "predict %s", path);
    CHECK_CONTAINS(out, "tp=2");
}

static const test_case cases[] = {
    {"table", case_table},
    {"json", case_json},
    {"errors", case_errors},
    {"scenario", case_scenario},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    out = calloc(1, OUT_MAX);
    REQUIRE_OR(out != NULL, return test_finish("test_predict"));
    int rc = test_run("test_predict", cases);
    free(out);
    return rc;
}
