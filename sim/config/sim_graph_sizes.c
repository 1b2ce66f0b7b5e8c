/* sim_graph_sizes — see sim_graph_sizes.h. */
#include "sim_graph_sizes.h"

int32_t sim_graph_sizes_default_max(sim_graph_rule r, int32_t max_seqs, double gpu_mem_gib, int32_t tp)
{
    switch (r) {
    case SIM_GRAPH_VLLM: return max_seqs > 0 && max_seqs < 256 ? 2 * max_seqs : 512;
    case SIM_GRAPH_SGLANG:
        if (gpu_mem_gib < 20) return 8;
        if (gpu_mem_gib < 35) return tp < 4 ? 24 : 80;
        if (gpu_mem_gib < 60) return tp < 4 ? 32 : 160;
        if (gpu_mem_gib < 160) return tp < 4 ? 256 : 512;
        return 512;
    case SIM_GRAPH_TRTLLM: return 128;
    case SIM_GRAPH_NONE: break;
    }
    return 0;
}

/* The smallest size >= n on rule r's grid (ignoring the largest). */
static int32_t grid_ceil(sim_graph_rule r, int32_t n)
{
    if (n <= 2) return n;
    if (n <= 4) return 4;
    switch (r) {
    case SIM_GRAPH_VLLM:
        if (n <= 256) return (n + 7) / 8 * 8;
        return (n + 15) / 16 * 16;
    case SIM_GRAPH_SGLANG:
        if (n <= 8) return 8;
        if (n <= 12) return 12;
        if (n <= 256) return (n + 7) / 8 * 8;
        if (n <= 512) return (n + 15) / 16 * 16; /* 272..496 by 16, then 512 */
        return (n + 31) / 32 * 32;
    case SIM_GRAPH_TRTLLM:
        if (n <= 128) return (n + 7) / 8 * 8;
        return 128 + (n - 128 + 63) / 64 * 64;
    case SIM_GRAPH_NONE: break;
    }
    return n;
}

int32_t sim_graph_sizes_pad(sim_graph_rule r, int32_t max_bs, int32_t n)
{
    if (r == SIM_GRAPH_NONE || n <= 0 || n > max_bs) return n;
    int32_t p = grid_ceil(r, n);
    if (p <= max_bs) return p;
    /* SGLang and TensorRT-LLM capture the largest size too; vLLM only
     * what is on its grid. */
    return r == SIM_GRAPH_VLLM ? n : max_bs;
}
