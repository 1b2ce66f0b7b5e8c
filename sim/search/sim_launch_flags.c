/* sim_launch_flags — the one table of engine flags and config keys that the
 * launch writers (sim_launch.c, sim_launch_k8s.c) may emit, per program,
 * with the release whose documentation the names were checked against.
 * A writer that needs a new flag adds it here first, so tests can reject a
 * misspelt or stale flag in a generated file. See sim_launch.h. */
#include "sim_launch.h"

#include <string.h>

static const char *const vllm_serve[] = {
    "--host", "--port", "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
    "--enable-expert-parallel", "--decode-context-parallel-size", "--max-num-seqs", "--max-num-batched-tokens",
    "--enable-chunked-prefill", "--long-prefill-token-threshold", "--gpu-memory-utilization", "--block-size",
    "--quantization", "--kv-cache-dtype", "--enable-prefix-caching", "--no-enable-prefix-caching",
    "--kv-transfer-config", "--distributed-executor-backend", NULL};

/* vLLM's NIXL example proxy (tests/v1/kv_connector/nixl_integration/ in the vLLM source tree). */
static const char *const vllm_toy_proxy[] = {"--host", "--port", "--prefiller-hosts", "--prefiller-ports",
                                             "--decoder-hosts", "--decoder-ports", NULL};

static const char *const sglang_server[] = {
    "--model-path", "--host", "--port", "--tp-size", "--dp-size", "--enable-dp-attention", "--ep-size", "--pp-size",
    "--max-running-requests", "--max-prefill-tokens", "--chunked-prefill-size", "--mem-fraction-static",
    "--page-size", "--quantization", "--kv-cache-dtype", "--disable-radix-cache", "--enable-mixed-chunk",
    "--schedule-policy", "--disaggregation-mode", "--disaggregation-transfer-backend",
    "--disaggregation-bootstrap-port", "--dist-init-addr", "--nnodes", "--node-rank", NULL};

static const char *const sglang_router[] = {"--worker-urls", "--policy", "--cache-threshold",
                                            "--balance-abs-threshold", "--balance-rel-threshold",
                                            "--pd-disaggregation", "--prefill", "--decode", "--prefill-policy",
                                            "--decode-policy", "--host", "--port", NULL};

static const char *const trtllm_serve[] = {"--host", "--port", "--backend", "--tp_size", "--pp_size", "--ep_size",
                                           "--max_batch_size", "--max_num_tokens", "--extra_llm_api_options",
                                           NULL};

/* Top-level keys of the LLM API options file given to --extra_llm_api_options. */
static const char *const trtllm_config[] = {"enable_chunked_prefill", "kv_cache_config", "scheduler_config",
                                            "enable_attention_dp", "cache_transceiver_config",
                                            "disable_overlap_scheduler", NULL};

/* Top-level keys of `trtllm-serve disaggregated -c FILE`. */
static const char *const trtllm_disagg[] = {"hostname", "port", "backend", "context_servers", "generation_servers",
                                            NULL};

static const char *const dynamo_frontend[] = {"--http-port", "--router-mode", "--kv-overlap-score-weight",
                                              "--router-temperature", NULL};

/* Dynamo's vLLM worker also takes every `vllm serve` engine flag. */
static const char *const dynamo_vllm[] = {"--model", "--disaggregation-mode", NULL};

static const sim_launch_flagset table[] = {
    {"vllm serve", "vLLM 0.11.0", vllm_serve},
    {"toy_proxy_server.py", "vLLM 0.11.0", vllm_toy_proxy},
    {"sglang.launch_server", "SGLang 0.5.4", sglang_server},
    {"sglang_router.launch_router", "sglang-router 0.2.1", sglang_router},
    {"trtllm-serve", "TensorRT-LLM 1.1.0", trtllm_serve},
    {"trtllm config", "TensorRT-LLM 1.1.0", trtllm_config},
    {"trtllm disagg config", "TensorRT-LLM 1.1.0", trtllm_disagg},
    {"dynamo.frontend", "Dynamo 1.6 (nvidia.com/v1beta1)", dynamo_frontend},
    {"dynamo.vllm", "Dynamo 1.6 (nvidia.com/v1beta1)", dynamo_vllm},
};

const sim_launch_flagset *sim_launch_flagsets(int *n)
{
    if (n) *n = (int)(sizeof table / sizeof table[0]);
    return table;
}

static const sim_launch_flagset *find(const char *program)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].program, program) == 0) return &table[i];
    return NULL;
}

int sim_launch_flag_known(const char *program, const char *flag)
{
    const sim_launch_flagset *s = find(program);
    if (!s) return -1;
    for (const char *const *p = s->flags; *p; p++)
        if (strcmp(*p, flag) == 0) return 1;
    return 0;
}

const char *sim_launch_flag_version(const char *program)
{
    const sim_launch_flagset *s = find(program);
    return s ? s->version : "";
}
