/* test_fidelity_roofline — the physics consistency check of `servesim
 * fidelity` (sim_fidelity_roofline_of, sim_fidelity_flag_inconsistent in
 * sim/tools/sim_fidelity_consistency.c): the work a measured row implies by
 * Little's law against its GPUs' peak FLOP/s and HBM bandwidth, worked by
 * hand on constructed Llama-3.1-8B H100 rows, then on real rows of
 * ../shared/validation/silicon-dev.csv copied here (a row of 32 replicas,
 * a disaggregated row beyond HBM bandwidth, rows within the bound), and
 * the benchmark client's connection pool (check 3). */
#include "sim_fidelity.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the op list's activation traffic may add to the hand-counted
 * weights and KV of a Llama-3.1-8B decode step of 32-63 requests. */
#define ACT 1.06

static const char *const header =
    "concurrency,id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,"
    "prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,"
    "prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,"
    "decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n";

/* Writes header + rows to a new temporary CSV named into tmp (a
 * "/tmp/fid_roof_XXXXXX.csv" template); 0 on success. */
static int write_rows(const char *rows, char *tmp)
{
    int fd = mkstemps(tmp, 4);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    fputs(header, f);
    fputs(rows, f);
    fclose(f);
    return 0;
}

/* Writes header + rows to a temporary CSV and reads it; 0 on success. */
static int read_rows(const char *rows, sim_fidelity_result *r)
{
    char tmp[] = "/tmp/fid_roof_XXXXXX.csv";
    if (write_rows(rows, tmp)) return -1;
    sim_err e = {""};
    int rc = sim_fidelity_read(tmp, r, &e);
    if (rc) fprintf(stderr, "%s\n", e.msg);
    unlink(tmp);
    return rc;
}

/* Llama-3.1-8B bf16 on one H100 (3.35 TB/s, 989.4 TFLOP/s bf16), 64
 * clients, exactly 1,024 in and 1,024 out, TTFT 100 ms.
 * Decode: the weights one step reads are the 32 layers' projections and
 * MLP, 4096·(4096 + 2·1024 + 4096) + 3·4096·14336 = 218.1 M parameters a
 * layer, 6.979 G in all, and the LM head's 0.525 G (not the embedding
 * table: a step reads only its rows), 7.505 G × 2 bytes = 15.01 GB. A
 * token's KV is 32 layers × 8 heads × 128 × 2 (K and V) × 2 bytes =
 * 131,072 bytes, at the mean context 1,024 + 512 = 1,536.
 *   TPOT 10 ms: D = 1,023 × 10 ms = 10.23 s, 64 × 10.23 / 10.33 = 63.4
 *   decoding (63 in the op list), KV 63 × 1,536 × 131,072 = 12.68 GB;
 *   27.69 GB × 100 steps/s = 2.77 TB/s = 0.83 of the bandwidth: within.
 *   TPOT 7 ms: D = 7.161 s, 63.1 decoding (63), 27.69 GB × 142.9 = 3.96
 *   TB/s = 1.18 > 10/9: no run of one H100. With batch_size 32 the columns
 *   allow 64 = 2 × 32: at two instances 31.6 decoding each (32), KV 6.44
 *   GB, 21.45 GB × 142.9 = 3.06 TB/s = 0.92: two replicas.
 * Prefill: 8,192-token prompts, osl 2, TTFT 2 s, TPOT 10 ms (D = 10 ms):
 * 2 × 6.979 G × 8,192 = 114.3 TFLOP of projections and MLP plus causal
 * attention 2 × 2 × 32 layers × 4,096 (heads × head dim) × 8,192²/2 =
 * 17.6 TFLOP: 131.9 TFLOP a prompt. 8 clients: 8 / 2.01 s = 3.98 prompts/s,
 * 525 TFLOP/s = 0.53 of the peak; 32 clients 2.12: beyond it. */
static void test_hand_bound(void)
{
    sim_fidelity_result r;
    REQUIRE(read_rows("64,dec10,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,1024,1024,,,64,1,1,1,,1,"
                      ",,,,,,,,,,,,,,100,10\n"
                      "64,dec7,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,1024,1024,,,64,1,1,1,,1,"
                      ",,,,,,,,,,,,,,100,7\n"
                      "64,dec7x2,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,1024,1024,,,32,1,1,1,,1,"
                      ",,,,,,,,,,,,,,100,7\n"
                      "8,pre8,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,8192,2,,,8,1,1,1,,1,"
                      ",,,,,,,,,,,,,,2000,10\n"
                      "32,pre32,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,8192,2,,,32,1,1,1,,1,"
                      ",,,,,,,,,,,,,,2000,10\n",
                      &r) == 0);
    REQUIRE_OR(r.n_rows == 5, sim_fidelity_free(&r); return);
    for (int i = 0; i < 5; i++) CHECK_MSG(r.rows[i].note[0] == 0, "%s: %s", r.rows[i].id, r.rows[i].note);
    sim_fidelity_roofline f;
    sim_err e = {""};
    REQUIRE_MSG_OR(sim_fidelity_roofline_of(&r.rows[0], 1, &f, &e) == 0, sim_fidelity_free(&r); return, "%s", e.msg);
    CHECK_NEAR(f.rate_per_s, 64 / 10.33, 1e-3);
    CHECK_NEAR(f.decoding, 64 * 10.23 / 10.33, 1e-3);
    CHECK_NEAR(f.peak_flops, 989.4e12, 1e9);
    CHECK_NEAR(f.hbm_bw, 3.35e12, 1e9);
    /* 27.69 GB of weights and KV by hand; the op list adds the GEMMs'
     * inputs and outputs, the norms, the KV write and the sampled logits
     * (29.2 GB in all): under ACT of the hand figure. */
    CHECK_MSG(f.decode_bytes > 27.69e9 && f.decode_bytes < ACT * 27.69e9, "%.4g bytes", f.decode_bytes);
    CHECK_MSG(f.memory_load > 0.826 && f.memory_load < ACT * 0.826, "load %.3f", f.memory_load);
    CHECK(r.rows[0].inconsistent[0] == 0 && r.rows[0].replicas <= 1);

    REQUIRE_MSG_OR(sim_fidelity_roofline_of(&r.rows[1], 1, &f, &e) == 0, sim_fidelity_free(&r); return, "%s", e.msg);
    CHECK_MSG(f.memory_load > 1.18 && f.memory_load < ACT * 1.18, "load %.3f", f.memory_load);
    CHECK_CONTAINS(r.rows[1].inconsistent, "Little's law: 64 clients / (0.10 s TTFT + 7.16 s decode) = 8.81 "
                                           "requests/s, 63 decoding a worker:");
    CHECK_CONTAINS(r.rows[1].inconsistent, "x h100-sxm's 3.35 TB/s (bound 1.11x)");
    CHECK(r.rows[1].replicas <= 1);

    CHECK(r.rows[2].inconsistent[0] == 0);
    CHECK(r.rows[2].replicas == 2 && r.rows[2].agg.workers == 2);
    CHECK_CONTAINS(r.rows[2].assumed, "2 replicas of 32 clients (one instance would need 1.");
    REQUIRE_MSG_OR(sim_fidelity_roofline_of(&r.rows[2], 2, &f, &e) == 0, sim_fidelity_free(&r); return, "%s", e.msg);
    CHECK_NEAR(f.decoding, 64 * 7.161 / 7.261 / 2, 1e-3);
    CHECK_MSG(f.memory_load > 0.915 && f.memory_load < ACT * 0.915, "load %.3f", f.memory_load);
    /* The replay spreads the clients over the replicas. */
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE_OR(sc != NULL, sim_fidelity_free(&r); return);
    CHECK_MSG(sim_fidelity_row_scenario(&r.rows[2], NULL, sc, &e) == 0, "%s", e.msg);
    CHECK(sc->deployment.pools[0].instances == 2 && sc->deployment.pools[0].scheduler.max_seqs == 32);
    free(sc);

    REQUIRE_MSG_OR(sim_fidelity_roofline_of(&r.rows[3], 1, &f, &e) == 0, sim_fidelity_free(&r); return, "%s", e.msg);
    CHECK_MSG(f.prefill_flops > 131.9e12 && f.prefill_flops < 1.02 * 131.9e12, "%.4g FLOP", f.prefill_flops);
    CHECK_MSG(f.compute_load > 0.53 && f.compute_load < 0.545, "load %.3f", f.compute_load);
    CHECK(r.rows[3].inconsistent[0] == 0);
    REQUIRE_MSG_OR(sim_fidelity_roofline_of(&r.rows[4], 1, &f, &e) == 0, sim_fidelity_free(&r); return, "%s", e.msg);
    CHECK_MSG(f.compute_load > 2.12 && f.compute_load < 2.18, "load %.3f", f.compute_load);
    CHECK_CONTAINS(r.rows[4].inconsistent, "TFLOP a prompt on each GPU: 2.1x the 989 TFLOP/s peak of h100-sxm");
    sim_fidelity_free(&r);
}

/* Real rows of silicon-dev.csv (their source column shortened).
 * - TensorRT-LLM 1.3.0rc5 Qwen3-32B NVFP4, TP2, batch 13, 416 clients, 15k
 *   prompts, TTFT 719 ms: 55 prompts/s, 3.7× the FP4 peak of two B200s;
 *   416 = 32 × 13 and 32 TP2 replicas (64 GPUs, as the same export's
 *   disaggregated row of 40 prefill + 6 TP4 decode workers) need 0.20 of
 *   it. Replayed as such it predicts a TTFT within a factor two of the
 *   measured one (one instance: 101.5 s).
 * - vLLM 0.12 Qwen3-32B fp8 PD, 2 TP4 decode workers of 224, TPOT 8.75 ms:
 *   215 decoding a worker need 1.5× an H100's HBM bandwidth.
 * - TensorRT-LLM DeepSeek-V3.1 NVFP4 TP8 at 448 clients (batch 56 = 448/8, a
 *   per-GPU share): 0.52 of the HBM bandwidth with the routed experts at
 *   their floor (0.79 with those a uniform router touches), within the
 *   bound: one instance could have measured it (its 5× TTFT miss is not
 *   the check's). */
#define QWEN_C416                                                                                             \
    "416,qwen_c416,source_file=gap,trtllm,1.3.0rc5,nvidia/Qwen3-32B-NVFP4,b200_sxm,fp4,agg,15000,500,nvfp4,"    \
    "nvfp4,13,2,1,1,1,1,,,,,,,,,,,,,,,719.2756748719952,13.656220276942772\n"

static void test_real_rows(void)
{
    sim_fidelity_result r;
    REQUIRE(read_rows(
        QWEN_C416 "448,qwen_pd,source_file=gap,vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp8,disagg,4000,1000,fp8,fp8,,,,,,,1,8,1,"
        "1,1,0,0,224,2,4,1,1,0,0,367.7027398125,8.745754870954954\n"
        "448,dsv31,source_file=gap,trtllm,1.3.0rc5,nvidia/DeepSeek-V3.1-NVFP4,b200_sxm,fp4,agg,4000,1000,nvfp4,"
        "nvfp4,56,8,1,,1,8,,,,,,,,,,,,,,,428.382795222433,21.209442447837755\n",
        &r) == 0);
    REQUIRE_OR(r.n_rows == 3, sim_fidelity_free(&r); return);
    for (int i = 0; i < 3; i++) CHECK_MSG(r.rows[i].note[0] == 0, "%s: %s", r.rows[i].id, r.rows[i].note);
    sim_fidelity_roofline f;
    sim_err e = {""};
    const sim_fidelity_row *q = &r.rows[0];
    CHECK(q->replicas == 32 && q->inconsistent[0] == 0);
    CHECK_CONTAINS(q->assumed, "32 replicas of 13 clients (one instance would need 3.7x its roofline)");
    CHECK(sim_fidelity_roofline_of(q, 1, &f, &e) == 0 && f.compute_load > 3.0 && f.prefill_load > 3.0);
    CHECK(sim_fidelity_roofline_of(q, 32, &f, &e) == 0 && f.compute_load < 0.25 && f.memory_load < 0.25);
    /* The row keeps the loads of the layout it replays (--json "roofline"). */
    CHECK(q->roof_checked && q->roof_compute == f.compute_load && q->roof_memory == f.memory_load);
    CHECK(r.rows[1].roof_checked && r.rows[1].roof_memory > 1.4);
    CHECK(r.rows[1].replicas <= 1);
    CHECK_CONTAINS(r.rows[1].inconsistent, "215 decoding a worker:");
    CHECK_CONTAINS(r.rows[1].inconsistent, "1.5x h100-sxm's 3.35 TB/s");
    CHECK(sim_fidelity_roofline_of(&r.rows[1], 1, &f, &e) == 0 && f.memory_load > 1.4 && f.memory_load < 1.6);
    CHECK(r.rows[2].inconsistent[0] == 0 && r.rows[2].replicas <= 1);
    CHECK(sim_fidelity_roofline_of(&r.rows[2], 1, &f, &e) == 0 && f.memory_load > 0.45 && f.memory_load < 0.6);
    /* The repaired row replays close to its measurement. */
    sim_fidelity_explain_out x;
    sim_fidelity_row row;
    char tmp[] = "/tmp/fid_roof_XXXXXX.csv";
    REQUIRE_OR(write_rows(QWEN_C416, tmp) == 0, sim_fidelity_free(&r); return);
    int rc = sim_fidelity_explain(tmp, "qwen_c416", NULL, &row, &x, &e);
    unlink(tmp);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc == 0) {
        printf("qwen_c416 as 32 replicas: TTFT %.1f ms (measured 719.3), TPOT %.2f ms (13.66)\n", x.ttft_ms, x.tpot_ms);
        CHECK(x.ttft_ms > 719.3 / 2 && x.ttft_ms < 719.3 * 2);
        CHECK(x.tpot_ms > 13.66 / 2 && x.tpot_ms < 13.66 * 2);
    }
    sim_fidelity_free(&r);
}

/* Check 3 on real rows: vLLM 0.11.2 gpt-oss-120b H100 at 512 clients
 * (8k/1k, TP 2): TPOT 26.89 ms, D = (921 − 1) × 26.89 ms = 24.7 s, TTFT
 * 113.5 s: 512 × 24.7 / 138.2 = 92 decoding, and the wait a 100-connection
 * pool forces, (5.12 − 1) × 24.7 = 102 s ≤ 113.5 s: replayed with the pool.
 * SGLang Qwen3-32B H100 1k/128 at 128 clients decodes 77 of them (a slow
 * prefill, no cap): under 2 × 100 clients, left alone. A constructed run of
 * 512 clients decoding 92 with a short TTFT (no wait for connections) and
 * one decoding 400 are left alone too. */
#define GPTOSS_C512                                                                                            \
    "512,gptoss_c512,measured=2025-12-08; wip=False,vllm,0.11.2,openai/gpt-oss-120b,h100_sxm,fp4,agg,8192,1024," \
    "nvfp4,nvfp4,512,2,1,1,2,1,,,,,,,,,,,,,,,113500.08868261648,26.891840868572956\n"

static void test_client_pool(void)
{
    sim_fidelity_result r;
    REQUIRE(read_rows(GPTOSS_C512 "128,qwen_c128,src,sglang,0.5.1.post1,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,,,128,8,1,,1,"
                                  "1,,,,,,,,,,,,,,,1678.7721794774998,20.0802253635\n"
                                  "512,short_wait,measured=2025-12-08; wip=False,vllm,0.11.2,openai/gpt-oss-120b,h100_sxm,"
                                  "fp4,agg,8192,1024,nvfp4,nvfp4,512,2,1,1,2,1,,,,,,,,,,,,,,,40000,26.89\n"
                                  "512,decoding_400,measured=2025-12-08; wip=False,vllm,0.11.2,openai/gpt-oss-120b,"
                                  "h100_sxm,fp4,agg,8192,1024,nvfp4,nvfp4,512,2,1,1,2,1,,,,,,,,,,,,,,,6000,26.89\n",
                      &r) == 0);
    REQUIRE_OR(r.n_rows == 4, sim_fidelity_free(&r); return);
    CHECK(r.rows[0].client_pool == 100 && r.rows[0].inconsistent[0] == 0);
    CHECK_CONTAINS(r.rows[0].assumed, "the client's 100 connections (92 of 512 clients decoding, TTFT 114 s)");
    for (int i = 1; i < 4; i++) CHECK_MSG(r.rows[i].client_pool == 0, "%s: pool %d", r.rows[i].id, r.rows[i].client_pool);
    sim_fidelity_free(&r);
    /* Replayed with the pool, the clients wait for connections as measured
     * (without it the replay's TTFT is 0.4 % of the measured one). */
    sim_fidelity_explain_out x;
    sim_fidelity_row row;
    sim_err e = {""};
    char tmp[] = "/tmp/fid_roof_XXXXXX.csv";
    REQUIRE(write_rows(GPTOSS_C512, tmp) == 0);
    int rc = sim_fidelity_explain(tmp, "gptoss_c512", NULL, &row, &x, &e);
    unlink(tmp);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc == 0) {
        printf("gptoss_c512 over 100 connections: TTFT %.0f ms (measured 113500), TPOT %.2f ms (26.89)\n", x.ttft_ms,
               x.tpot_ms);
        CHECK(x.ttft_ms > 113500 * 0.7 && x.ttft_ms < 113500 * 1.4);
        CHECK(x.tpot_ms > 26.89 * 0.7 && x.tpot_ms < 26.89 * 1.4);
    }
}

/* Rows the check cannot build a cost model for are left unchecked (their
 * replay reports the error), and a row's own note is returned. */
static void test_unchecked(void)
{
    sim_fidelity_result r;
    REQUIRE(read_rows("64,nomodel,src,vllm,,no-such-model,h100_sxm,bf16,agg,1024,1024,,,64,1,1,1,,1,"
                      ",,,,,,,,,,,,,,100,1\n"
                      "64,badtp,src,vllm,,llama-3.1-8b,h100_sxm,bf16,agg,1024,1024,,,64,3,1,1,,1,"
                      ",,,,,,,,,,,,,,100,1\n",
                      &r) == 0);
    REQUIRE_OR(r.n_rows == 2, sim_fidelity_free(&r); return);
    sim_fidelity_roofline f;
    sim_err e = {""};
    CHECK(sim_fidelity_roofline_of(&r.rows[0], 1, &f, &e) != 0);
    CHECK(r.rows[0].inconsistent[0] == 0 && r.rows[1].inconsistent[0] == 0);
    CHECK(sim_fidelity_roofline_of(&r.rows[1], 1, &f, &e) != 0);
    CHECK(e.msg[0] != 0);
    sim_fidelity_free(&r);
}

static const test_case cases[] = {
    {"hand_bound", test_hand_bound},
    {"real_rows", test_real_rows},
    {"unchecked", test_unchecked},
    {"client_pool", test_client_pool},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_fidelity_roofline", cases);
}
