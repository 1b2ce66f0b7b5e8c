/* test_gpu_datasheet — the GPUs priced from datasheets alone (no measured
 * per-op tables: the analytic roofline, or a sibling's fitted sets scaled
 * by the specs) run end to end: `servesim estimate` on an Ada PCIe card
 * (L40S) and on a compute-cut Hopper (H20) gives TTFT and TPOT inside a
 * back-of-envelope roofline, and `servesim fidelity` simulates measured rows
 * moved to such GPUs, skipping only the one whose weights do not fit. */
#include "test_util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *bin, *src_dir;

/* Roofline bounds, one request at a time (concurrency 1, ISL 1024, OSL 128).
 *
 * Llama-3.1-8B, bf16, tp1: 8.03e9 parameters, 16.06 GB of weights; a
 * 1024-token prompt is 2 x 8.03e9 x 1024 = 16.4 TFLOP plus ~0.3 of causal
 * attention (32 layers x 4 x 1024^2 / 2 x 4096).
 *   L40S (362 TFLOP/s bf16, 0.864 TB/s): TTFT >= 16.7e12 / 362e12 = 46 ms
 *   at peak, 59 ms at the catalogue's 0.78 GEMM share; TPOT >= 16.06e9 /
 *   0.864e12 = 18.6 ms at peak, 21.9 at 0.85 of it.
 *   H20 (148 TFLOP/s, 4.0 TB/s): TTFT >= 16.7e12 / 148e12 = 113 ms, 157 at
 *   0.72; TPOT >= 16.06e9 / 4.0e12 = 4.0 ms.
 * Qwen3-32B, bf16, tp2: 65.5 GB of weights, 32.8 GB a GPU; a prompt is
 * 2 x 32.8e9 x 1024 = 67.2 TFLOP, 33.6 a GPU; each of 64 layers all-reduces
 * twice: 1024 x 5120 x 2 = 10.5 MB a prompt, 10 KB a decode step.
 *   L40S over PCIe Gen4 (32 GB/s x 0.5, 6.3 us a step): a prompt's 128
 *   all-reduces take 128 x (10.5e6 / 16e9 + 17 us) = 86 ms, so TTFT >=
 *   33.6e12 / 362e12 + 86 ms = 179 ms (205 at 0.78); TPOT >= 32.8e9 /
 *   0.864e12 = 38 ms, + 128 x 17 us = 2 ms of all-reduces.
 *   H20 over NVLink: TTFT >= 33.6e12 / 148e12 = 227 ms (315 at 0.72); TPOT
 *   >= 32.8e9 / 4.0e12 = 8.2 ms.
 * Upper bounds: 1.6x the derated figure (launches, scheduling, the
 * sampler), so a model that lost a factor of two fails. */
static const struct {
    const char *model, *gpu;
    int tp;
    double ttft_lo, ttft_hi, tpot_lo, tpot_hi; /* ms */
} cases_e2e[] = {
    {"llama-3.1-8b", "l40s", 1, 46, 95, 18.6, 35},
    {"llama-3.1-8b", "h20", 1, 113, 250, 4.0, 10},
    {"qwen3-32b", "l40s", 2, 179, 330, 38, 65},
    {"qwen3-32b", "h20", 2, 227, 500, 8.2, 18},
};

static double num(json_t *o, const char *a, const char *b)
{
    return json_number_value(json_object_get(json_object_get(o, a), b));
}

static void test_estimate_roofline(void)
{
    for (size_t i = 0; i < sizeof cases_e2e / sizeof cases_e2e[0]; i++) {
        char cmd[1024], *out = NULL;
        snprintf(cmd, sizeof cmd,
                 "%s estimate --model %s --gpu %s --tp %d --isl 1024 --osl 128 --concurrency 1 --requests 8 "
                 "--no-perf-db --json 2>&1",
                 bin, cases_e2e[i].model, cases_e2e[i].gpu, cases_e2e[i].tp);
        CHECK(test_sh(cmd, &out) == 0);
        json_t *e = out ? json_loads(out, 0, NULL) : NULL;
        CHECK_MSG(e != NULL, "%s", out ? out : "");
        free(out);
        if (!e) continue;
        double ttft = num(e, "ttft_ms", "mean"), tpot = num(e, "tpot_ms", "mean");
        CHECK_MSG(ttft >= cases_e2e[i].ttft_lo && ttft <= cases_e2e[i].ttft_hi, "%s tp%d on %s: TTFT %.1f ms",
                  cases_e2e[i].model, cases_e2e[i].tp, cases_e2e[i].gpu, ttft);
        CHECK_MSG(tpot >= cases_e2e[i].tpot_lo && tpot <= cases_e2e[i].tpot_hi, "%s tp%d on %s: TPOT %.2f ms",
                  cases_e2e[i].model, cases_e2e[i].tp, cases_e2e[i].gpu, tpot);
        json_decref(e);
    }
}

/* tests/data/fidelity/moved-gpus.csv: four silicon-dev.csv rows measured on
 * H100 SXM with their system column moved (the measured columns stay
 * H100's: only the replay is checked here, not its error). Three simulate;
 * Qwen3-32B bf16 at tp1 needs 65.5 GB of weights on a 48 GB L40S and is
 * skipped, saying so. */
static void test_fidelity_moved(void)
{
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s fidelity --csv %s/tests/data/fidelity/moved-gpus.csv --json 2>/dev/null", bin,
             src_dir);
    CHECK(test_sh(cmd, &out) == 0);
    json_t *d = out ? json_loads(out, 0, NULL) : NULL;
    CHECK_MSG(d != NULL, "%s", out ? out : "");
    free(out);
    if (!d) return;
    CHECK(json_integer_value(json_object_get(d, "rows_total")) == 4);
    CHECK(json_integer_value(json_object_get(d, "rows_simulated")) == 3);
    size_t i;
    json_t *r;
    int seen = 0;
    json_array_foreach(json_object_get(d, "rows"), i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        const char *status = json_string_value(json_object_get(r, "status"));
        if (!id || !status) continue;
        seen++;
        if (!strcmp(id, "l40s_qwen32b_tp1_nofit")) {
            CHECK(!strcmp(status, "skipped"));
            CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")), "weights need 65.5 GB per GPU");
            continue;
        }
        CHECK_MSG(!strcmp(status, "ok"), "%s: %s", id, status);
        double ttft = json_number_value(json_object_get(r, "predicted_ttft_ms"));
        double tpot = json_number_value(json_object_get(r, "predicted_tpot_ms"));
        CHECK_MSG(ttft > 0 && ttft < 1e5 && tpot > 0 && tpot < 1e3, "%s: TTFT %g, TPOT %g ms", id, ttft, tpot);
    }
    CHECK(seen == 4);
    json_decref(d);
}

static const test_case cases[] = {
    {"estimate_roofline", test_estimate_roofline},
    {"fidelity_moved", test_fidelity_moved},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    bin = argc > 1 ? argv[1] : "servesim";
    src_dir = argc > 2 ? argv[2] : "..";
    return test_run("test_gpu_datasheet", cases);
}
