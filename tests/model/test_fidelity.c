/* test_fidelity — replays every row of the bundled measured-deployment CSV
 * (tests/data/models/e2e-dev.csv, aiconfigurator silicon samples) through
 * the simulator and holds the TTFT/TPOT MAPE at or below what the model
 * reaches today (plus a small margin), so a change that makes predictions
 * worse fails. Also checks the command's error handling. Its speed is
 * not asserted here (a busy machine must not fail it): the figure is in
 * the README's Speed table. */
#include "sim_fidelity.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reached when this test was written (see docs/cost-model.md), + margin. */
#define MAX_TPOT_MAPE 13.0
#define MAX_TTFT_MAPE 21.0

/* The 484 e2e-dev rows replay within the MAPE bounds; a BACKEND: override moves only that backend's rows. */
static void case_replay(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/models/e2e-dev.csv", test_src_dir());
    sim_fidelity_result r;
    sim_err e = {""};
    /* Two threads take rows in turn; the results do not depend on it
     * (test_fidelity_silicon checks that). */
    sim_fidelity_opts o2 = {0, NULL, 0, 2, NULL};
    int rc = sim_fidelity_run(path, &o2, &r, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc == 0) {
        printf("%d rows: TTFT MAPE %.1f%%, TPOT MAPE %.1f%% (%.1f s)\n", r.n_ok, r.all.ttft_mape, r.all.tpot_mape,
               r.wall_s);
        for (int b = 0; b < r.n_backends; b++)
            printf("  %-7s %3d rows: TTFT %.1f%%, TPOT %.1f%%\n", r.backends[b].backend, r.backends[b].n,
                   r.backends[b].ttft_mape, r.backends[b].tpot_mape);
        CHECK(r.n_rows == 484 && r.n_ok == r.n_rows);
        CHECK(r.n_backends == 3);
        CHECK_MSG(r.all.tpot_mape <= MAX_TPOT_MAPE, "TPOT MAPE %.2f%%", r.all.tpot_mape);
        CHECK_MSG(r.all.ttft_mape <= MAX_TTFT_MAPE, "TTFT MAPE %.2f%%", r.all.ttft_mape);
        /* Every simulated row has a finite, positive prediction. */
        for (int i = 0; i < r.n_rows; i++)
            CHECK(r.rows[i].pred_ttft_ms > 0 && r.rows[i].pred_tpot_ms > 0 && r.rows[i].pred_tpot_ms < 1e4);
    }
    /* Overrides: a BACKEND: prefix touches only that backend's rows. A
     * 100 ms longer vLLM frontend raises every vLLM TTFT, by about 100 ms on
     * average (arrivals also shift against iteration boundaries), and leaves
     * the other backends exactly as they were (the run above is the base). */
    sim_fidelity_result b;
    const char *sets[] = {"vllm:deployment.pools.0.scheduler.frontend_us=145000"};
    sim_fidelity_opts o = {0, sets, 1, 2, NULL};
    if (rc == 0) {
        const sim_fidelity_result *a = &r;
        int rc_b = sim_fidelity_run(path, &o, &b, &e);
        CHECK_MSG(rc_b == 0, "%s", e.msg);
        if (rc_b == 0) {
            CHECK(a->n_rows == b.n_rows);
            double sum = 0;
            int nv = 0;
            for (int i = 0; i < a->n_rows && i < b.n_rows; i++) {
                double d = b.rows[i].pred_ttft_ms - a->rows[i].pred_ttft_ms;
                if (!strcmp(a->rows[i].backend, "vllm")) {
                    CHECK_MSG(d > 0, "row %d: TTFT moved %.1f ms", i, d);
                    sum += d, nv++;
                } else {
                    CHECK_MSG(d == 0, "row %d (%s): TTFT moved %.1f ms", i, a->rows[i].backend, d);
                }
            }
            CHECK(nv == 93);
            CHECK_MSG(nv && sum / nv > 80 && sum / nv < 160, "mean vLLM TTFT shift %.1f ms", nv ? sum / nv : 0);
            sim_fidelity_free(&b);
        }
        sim_fidelity_free(&r);
    }
}

/* A misspelt override key, a missing file and an unknown flag are refused. */
static void case_bad_input(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/models/e2e-dev.csv", test_src_dir());
    sim_fidelity_result r;
    sim_err e = {""};
    const char *bad[] = {"trtllm:deployment.pools.0.scheduler.eager_launch_ms=5"};
    sim_fidelity_opts ob = {0, bad, 1, 1, NULL};
    CHECK(sim_fidelity_run(path, &ob, &r, &e) < 0);
    CHECK_CONTAINS(e.msg, "eager_launch_us");
    CHECK(sim_fidelity_run("/nonexistent/e2e.csv", NULL, &r, &e) == SIM_EIO);
    CHECK_CONTAINS(e.msg, "cannot open");
    char *av[] = {"fidelity", "--bogus"};
    CHECK(sim_cli_fidelity(2, av) == 2);
}

/* An override of pool 1 alone (a disaggregated row's decode pool) is
 * accepted: it moves the PD rows' TPOT and leaves the aggregated rows, which
 * have no pool 1, exactly as they were. An unknown key under pool 1 still
 * fails with its key path, and a pool past the decode one is refused. */
static void case_decode_pool_set(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/fidelity/silicon-fixture.csv", test_src_dir());
    sim_fidelity_result a, b;
    sim_err e = {""};
    sim_fidelity_opts o0 = {0, NULL, 0, 2, NULL};
    REQUIRE(sim_fidelity_run(path, &o0, &a, &e) == 0);
    const char *sets[] = {"deployment.pools.1.scheduler.overhead_us=5000"};
    sim_fidelity_opts o = {0, sets, 1, 2, NULL};
    int rc = sim_fidelity_run(path, &o, &b, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc == 0) {
        int pd = 0, agg = 0;
        for (int i = 0; i < a.n_rows && i < b.n_rows; i++) {
            CHECK_MSG(a.rows[i].ok == b.rows[i].ok, "row %s: %s", b.rows[i].id, b.rows[i].note);
            if (!a.rows[i].ok || !b.rows[i].ok) continue; /* the fixture's unknown model */
            double d = b.rows[i].pred_tpot_ms - a.rows[i].pred_tpot_ms;
            if (a.rows[i].disagg) {
                CHECK_MSG(d > 3, "PD row %s: TPOT moved %.2f ms", a.rows[i].id, d);
                pd++;
            } else {
                CHECK_MSG(d == 0 && b.rows[i].pred_ttft_ms == a.rows[i].pred_ttft_ms, "row %s moved", a.rows[i].id);
                agg++;
            }
        }
        CHECK(pd >= 1 && agg >= 1);
        sim_fidelity_free(&b);
    }
    sim_fidelity_free(&a);
    const char *bad[] = {"deployment.pools.1.scheduler.overhead_usec=5000"};
    sim_fidelity_opts ob = {0, bad, 1, 1, NULL};
    CHECK(sim_fidelity_run(path, &ob, &b, &e) < 0);
    CHECK_CONTAINS(e.msg, "deployment.pools.1.scheduler.overhead_usec");
    const char *past[] = {"deployment.pools.2.scheduler.overhead_us=5000"};
    sim_fidelity_opts op = {0, past, 1, 1, NULL};
    CHECK(sim_fidelity_run(path, &op, &b, &e) < 0);
    CHECK_CONTAINS(e.msg, "pools 0 (aggregated or prefill) and 1 (decode) only");
}

static void case_unrunnable_rows(void)
{
    /* Rows that cannot run are skipped with a reason; none at all is exit 1. */
    char tmp[] = "/tmp/servesim-fid-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (f) {
        fputs("concurrency,backend,backend_version,model_path,system,precision,mode,isl,osl,batch_size,tp_size,"
              "pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
              "16,sglang,0.5,Qwen/Unknown-7B,h100_sxm,,agg,1024,128,16,2,1,,1,1,840,16\n"
              "16,sglang,0.5,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,16,3,1,,1,1,840,16\n",
              f);
        fclose(f);
        char *av2[] = {"fidelity", "--csv", tmp};
        CHECK(sim_cli_fidelity(3, av2) == 1);
        unlink(tmp);
    }
}

/* vLLM's async scheduling is its default from v0.14.0: a row of 0.14 or
 * later (or a nightly build) replays with scheduler.async_scheduling, older,
 * unknown and other engines' versions without. */
static void case_engine_versions(void)
{
    CHECK(!sim_fidelity_async_scheduling("vllm", "0.11.2"));
    CHECK(!sim_fidelity_async_scheduling("vllm", "0.12.0"));
    CHECK(!sim_fidelity_async_scheduling("vllm", "0.13.9"));
    CHECK(sim_fidelity_async_scheduling("vllm", "0.14.0"));
    CHECK(sim_fidelity_async_scheduling("vllm", "0.15.1"));
    CHECK(sim_fidelity_async_scheduling("VLLM", "0.19.0"));
    CHECK(sim_fidelity_async_scheduling("vllm", "1.0"));
    CHECK(sim_fidelity_async_scheduling("vllm", "nightly-5b8c30d62b754b57"));
    CHECK(!sim_fidelity_async_scheduling("vllm", ""));
    CHECK(!sim_fidelity_async_scheduling("vllm", NULL));
    CHECK(!sim_fidelity_async_scheduling("vllm", "main"));
    CHECK(!sim_fidelity_async_scheduling("sglang", "0.5.9"));
    CHECK(!sim_fidelity_async_scheduling("trtllm", "1.2.0rc6"));
}

/* Reads CSV rows (after the silicon columns' header) through a temporary
 * file; 0 or sim_fidelity_read's failure. */
static int read_rows(const char *rows, sim_fidelity_result *r, sim_err *e)
{
    char tmp[] = "/tmp/servesim-fid-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f) return -1;
    fputs("concurrency,id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
          "batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n",
          f);
    fputs(rows, f);
    fclose(f);
    int rc = sim_fidelity_read(tmp, r, e);
    unlink(tmp);
    return rc;
}

/* A row of exact lengths that re-records an InferenceX run's measurement
 * (TTFT and TPOT rounded to two decimals) replays that run's client and
 * recipe; a row whose measurement differs by more than the rounding, or
 * whose concurrency differs, keeps its own. */
static void case_same_measurement_client(void)
{
    sim_fidelity_result r;
    sim_err e = {""};
    int rc = read_rows("64,run,source_file=x.csv; wip=False,sglang,0.5.9,Qwen/Qwen3-32B,h100_sxm,bf16,agg,1024,1024,64,2,1,1,2,1,"
          "2178.3912,33.1703\n"
          "64,copy,source_file=gap.csv,sglang,0.5.9,Qwen/Qwen3-32B,h100_sxm,bf16,agg,1024,1024,64,2,1,1,2,1,"
          "2178.39,33.17\n"
          "64,other,source_file=gap.csv,sglang,0.5.9,Qwen/Qwen3-32B,h100_sxm,bf16,agg,1024,1024,64,2,1,1,2,1,"
          "2178.40,33.17\n"
          "32,conc,source_file=gap.csv,sglang,0.5.9,Qwen/Qwen3-32B,h100_sxm,bf16,agg,1024,1024,32,2,1,1,2,1,"
          "2178.39,33.17\n", &r, &e);
    REQUIRE_MSG(rc == 0 && r.n_rows == 4, "%s", e.msg);
    CHECK(r.rows[0].len_lo < 1);
    CHECK_NEAR(r.rows[1].len_lo, r.rows[0].len_lo, 0);
    CHECK_CONTAINS(r.rows[1].assumed, "client and recipe of run (same measurement)");
    CHECK(r.rows[2].len_lo == 1 && !r.rows[2].assumed[0]); /* 0.0088 ms apart: not the same record */
    CHECK(r.rows[3].len_lo == 1);
    sim_fidelity_free(&r);
}

/* The KV cache's format is the recipe's: fp8 for fp8 checkpoints on vLLM,
 * but vLLM's MiniMax-M2.5 H100 recipe passes no --kv-cache-dtype (bf16),
 * where its B200 recipe passes fp8; TensorRT-LLM quantises it either way.
 * gpt-oss (MXFP4) keeps a bf16 cache on vLLM but for its B200 recipe,
 * which writes kv-cache-dtype: fp8. */
#define GPT_OSS_ROW(id, version, system)                                                                        \
    "32," id ",source_file=x.csv; wip=False,vllm," version ",openai/gpt-oss-120b," system                           \
    ",fp4,agg,1024,1024,32,2,1,1,2,1,55.3,5.7\n"
static void case_recipe_kv_dtype(void)
{
    sim_fidelity_result r;
    sim_err e = {""};
    int rc = read_rows("64,h100,source_file=x.csv; wip=False,vllm,0.18.0,MiniMaxAI/MiniMax-M2.5,h100_sxm,fp8,agg,1024,8192,64,4,1,1,1,"
          "4,20026,32.0\n"
          "64,b200,source_file=x.csv; wip=False,vllm,0.19.0,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,8192,64,4,1,1,1,"
          "4,200,20.0\n"
          "64,llama,source_file=x.csv; wip=False,vllm,,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1024,1024,64,4,1,1,4,"
          "1,230,13.6\n" GPT_OSS_ROW("oss_b200", "0.15.1", "b200_sxm") GPT_OSS_ROW("oss_h100", "0.18.0", "h100_sxm"),
                       &r, &e);
    REQUIRE_MSG(rc == 0 && r.n_rows == 5, "%s", e.msg);
    CHECK_MSG(!strcmp(r.rows[0].kv_dtype, "bf16"), "MiniMax H100: %s", r.rows[0].kv_dtype);
    CHECK_MSG(!strcmp(r.rows[1].kv_dtype, "fp8"), "MiniMax B200: %s", r.rows[1].kv_dtype);
    CHECK_MSG(!strcmp(r.rows[2].kv_dtype, "fp8"), "Llama H100: %s", r.rows[2].kv_dtype);
    CHECK_MSG(!strcmp(r.rows[3].dtype, "mxfp4"), "gpt-oss B200 weights: %s", r.rows[3].dtype);
    CHECK_MSG(!strcmp(r.rows[3].kv_dtype, "fp8"), "gpt-oss B200: %s", r.rows[3].kv_dtype);
    CHECK_MSG(!strcmp(r.rows[4].kv_dtype, "bf16"), "gpt-oss H100: %s", r.rows[4].kv_dtype);
    sim_fidelity_free(&r);
}

static const test_case cases[] = {
    {"recipe_kv_dtype", case_recipe_kv_dtype},
    {"replay", case_replay},
    {"bad_input", case_bad_input},
    {"decode_pool_set", case_decode_pool_set},
    {"unrunnable_rows", case_unrunnable_rows},
    {"engine_versions", case_engine_versions},
    {"same_measurement_client", case_same_measurement_client},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_fidelity", cases);
}
