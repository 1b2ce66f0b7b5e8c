/* model_catalog — see model_catalog.h.
 *
 * Lookup order for a name: each folder of $SERVESIM_CATALOG (colon
 * separated; files in <dir>/gpus/ and <dir>/archs/), then the YAML files
 * embedded at build time. Names compare case-insensitively against the file
 * stem, so a user adds "my-gpu" by writing <dir>/gpus/my-gpu.yaml. */
#include "model_catalog.h"

#include "model_catalog_data.h"
#include "model_hf.h"
#include "model_dtype.h"
#include "model_gpu_caps.h"
#include "model_resolve.h"
#include "model_spec.h"
#include "model_yaml.h"
#include "sim_suggest.h"

#include <ctype.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

/* YAML units → SI: TFLOP/s, GB (1e9), GiB, TB/s, GB/s, MB, KB, µs. */
static const model_yaml_field gpu_fields[] = {
    {"name", MODEL_YAML_STR, offsetof(model_gpu, name), MODEL_NAME_MAX, 0, 0},
    {"arch", MODEL_YAML_STR, offsetof(model_gpu, arch), 32, 0, 1},
    {"cc", MODEL_YAML_DOUBLE, offsetof(model_gpu, cc), 0, 1, 1},
    {"tflops.fp32", MODEL_YAML_DOUBLE, offsetof(model_gpu, flops_fp32), 0, 1e12, 1},
    {"tflops.bf16", MODEL_YAML_DOUBLE, offsetof(model_gpu, flops_bf16), 0, 1e12, 1},
    {"tflops.fp8", MODEL_YAML_DOUBLE, offsetof(model_gpu, flops_fp8), 0, 1e12, 0},
    {"tflops.fp6", MODEL_YAML_DOUBLE, offsetof(model_gpu, flops_fp6), 0, 1e12, 0},
    {"tflops.fp4", MODEL_YAML_DOUBLE, offsetof(model_gpu, flops_fp4), 0, 1e12, 0},
    {"hbm_gb", MODEL_YAML_DOUBLE, offsetof(model_gpu, hbm_bytes), 0, 1e9, 0},
    {"hbm_gib", MODEL_YAML_DOUBLE, offsetof(model_gpu, hbm_bytes), 0, GiB, 0},
    {"hbm_tbps", MODEL_YAML_DOUBLE, offsetof(model_gpu, hbm_bw), 0, 1e12, 1},
    {"hbm_copy_tbps", MODEL_YAML_DOUBLE, offsetof(model_gpu, hbm_copy_bw), 0, 1e12, 0},
    {"nccl_lat_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, coll_lat_s), 0, 1e-6, 0},
    {"l2_mb", MODEL_YAML_DOUBLE, offsetof(model_gpu, l2_bytes), 0, 1e6, 0},
    {"sms", MODEL_YAML_INT, offsetof(model_gpu, sms), 0, 0, 1},
    {"smem_per_sm_kb", MODEL_YAML_DOUBLE, offsetof(model_gpu, smem_per_sm), 0, 1e3, 0},
    {"nvlink_gbps", MODEL_YAML_DOUBLE, offsetof(model_gpu, nvlink_bw), 0, 1e9, 1},
    {"nic_gbps", MODEL_YAML_DOUBLE, offsetof(model_gpu, nic_bw), 0, 1e9, 1},
    {"host_gbps", MODEL_YAML_DOUBLE, offsetof(model_gpu, host_bw), 0, 1e9, 0},
    {"efficiency.gemm", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_gemm), 0, 1, 1},
    {"efficiency.gemm_fp8", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_gemm_fp8), 0, 1, 0},
    {"efficiency.attn", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_attn), 0, 1, 1},
    {"efficiency.mem", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_mem), 0, 1, 1},
    {"efficiency.nvlink", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_nvlink), 0, 1, 1},
    {"efficiency.launch_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, launch_s), 0, 1e-6, 1},
    {"efficiency.gemm_fp4", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_gemm_fp4), 0, 1, 0},
    {"efficiency.comm_base_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, comm_base_s), 0, 1e-6, 0},
    {"efficiency.nvlink_step_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, nvlink_step_s), 0, 1e-6, 0},
    {"efficiency.nic_step_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, nic_step_s), 0, 1e-6, 0},
    {"efficiency.nic", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_nic), 0, 1, 0},
    {"aliases", MODEL_YAML_STRLIST, offsetof(model_gpu, aliases), 256, 0, 0},
    {"nvlink_domain", MODEL_YAML_INT, offsetof(model_gpu, nvlink_domain), 0, 0, 0},
    {"power.idle_w", MODEL_YAML_DOUBLE, offsetof(model_gpu, power_idle_w), 0, 1, 0},
    {"power.max_w", MODEL_YAML_DOUBLE, offsetof(model_gpu, power_max_w), 0, 1, 0},
    {"power.mem_share", MODEL_YAML_DOUBLE, offsetof(model_gpu, power_mem_share), 0, 1, 0},
    {"power.host_w_per_gpu", MODEL_YAML_DOUBLE, offsetof(model_gpu, power_host_w), 0, 1, 0},
    {"interconnect", MODEL_YAML_STR, offsetof(model_gpu, interconnect), 16, 0, 0},
    {"nvlink_bridge_gpus", MODEL_YAML_INT, offsetof(model_gpu, nvlink_bridge_gpus), 0, 0, 0},
    {"efficiency.pcie", MODEL_YAML_DOUBLE, offsetof(model_gpu, eff_pcie), 0, 1, 0},
    {"efficiency.pcie_step_us", MODEL_YAML_DOUBLE, offsetof(model_gpu, pcie_step_s), 0, 1e-6, 0},
};
#define N_GPU_FIELDS ((int)(sizeof gpu_fields / sizeof gpu_fields[0]))

/* Catalogue names compare case-insensitively with '_' and '-' alike. */
static int catalog_name_eq(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = *a == '_' ? '-' : tolower((unsigned char)*a), y = *b == '_' ? '-' : tolower((unsigned char)*b);
        if (x != y) return 0;
        if (!x) return 1;
    }
}

/* Is name one of the ", "-joined names of list? */
static int catalog_list_has(const char *list, const char *name)
{
    char one[MODEL_NAME_MAX];
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len < sizeof one) {
            memcpy(one, p, len);
            one[len] = 0;
            if (catalog_name_eq(one, name)) return 1;
        }
        if (!comma) break;
        p = comma + 1;
        while (*p == ' ') p++;
    }
    return 0;
}

/* Was the key at path present? (seen[] is indexed like fields[]) */
static int field_seen(const model_yaml_field *fields, int n, const int *seen, const char *path)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(fields[i].path, path)) return seen[i];
    return 0;
}

/* A catalogue model file: the architecture and its weight formats. */
typedef struct {
    model_spec m;
    char w[5][16]; /* weights.all, .attention, .dense_mlp, .routed_experts, .shared_experts */
} arch_yaml;

static const model_yaml_field arch_fields[] = {
    {"name", MODEL_YAML_STR, offsetof(arch_yaml, m.name), MODEL_NAME_MAX, 0, 0},
    {"layers", MODEL_YAML_INT, offsetof(arch_yaml, m.layers), 0, 0, 1},
    {"hidden", MODEL_YAML_INT, offsetof(arch_yaml, m.hidden), 0, 0, 1},
    {"heads", MODEL_YAML_INT, offsetof(arch_yaml, m.heads), 0, 0, 1},
    {"kv_heads", MODEL_YAML_INT, offsetof(arch_yaml, m.kv_heads), 0, 0, 0},
    {"head_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.head_dim), 0, 0, 0},
    {"intermediate", MODEL_YAML_INT, offsetof(arch_yaml, m.intermediate), 0, 0, 0},
    {"vocab", MODEL_YAML_INT, offsetof(arch_yaml, m.vocab), 0, 0, 1},
    {"experts", MODEL_YAML_INT, offsetof(arch_yaml, m.experts), 0, 0, 0},
    {"top_k", MODEL_YAML_INT, offsetof(arch_yaml, m.top_k), 0, 0, 0},
    {"shared_experts", MODEL_YAML_INT, offsetof(arch_yaml, m.shared_experts), 0, 0, 0},
    {"expert_intermediate", MODEL_YAML_INT, offsetof(arch_yaml, m.expert_intermediate), 0, 0, 0},
    {"first_dense_layers", MODEL_YAML_INT, offsetof(arch_yaml, m.first_dense_layers), 0, 0, 0},
    {"moe_layers", MODEL_YAML_INT, offsetof(arch_yaml, m.moe_layers), 0, 0, 0},
    {"q_lora_rank", MODEL_YAML_INT, offsetof(arch_yaml, m.q_lora_rank), 0, 0, 0},
    {"kv_lora_rank", MODEL_YAML_INT, offsetof(arch_yaml, m.kv_lora_rank), 0, 0, 0},
    {"rope_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.rope_dim), 0, 0, 0},
    {"nope_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.nope_dim), 0, 0, 0},
    {"v_head_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.v_head_dim), 0, 0, 0},
    {"sliding_window", MODEL_YAML_INT, offsetof(arch_yaml, m.sliding_window), 0, 0, 0},
    {"sliding_layers", MODEL_YAML_INT, offsetof(arch_yaml, m.sliding_layers), 0, 0, 0},
    {"tied_embeddings", MODEL_YAML_BOOL, offsetof(arch_yaml, m.tied_embeddings), 0, 0, 0},
    /* Layer kinds (model_catalog.h). */
    {"linear_layers", MODEL_YAML_INT, offsetof(arch_yaml, m.linear_layers), 0, 0, 0},
    {"linear.key_heads", MODEL_YAML_INT, offsetof(arch_yaml, m.lin_k_heads), 0, 0, 0},
    {"linear.value_heads", MODEL_YAML_INT, offsetof(arch_yaml, m.lin_v_heads), 0, 0, 0},
    {"linear.key_head_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.lin_k_dim), 0, 0, 0},
    {"linear.value_head_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.lin_v_dim), 0, 0, 0},
    {"linear.conv_kernel", MODEL_YAML_INT, offsetof(arch_yaml, m.lin_conv), 0, 0, 0},
    {"attn_output_gate", MODEL_YAML_BOOL, offsetof(arch_yaml, m.attn_out_gate), 0, 0, 0},
    {"qk_norm_per_layer", MODEL_YAML_BOOL, offsetof(arch_yaml, m.qk_norm_layer), 0, 0, 0},
    {"attn_sinks", MODEL_YAML_BOOL, offsetof(arch_yaml, m.attn_sinks), 0, 0, 0},
    {"sparse.index_topk", MODEL_YAML_INT, offsetof(arch_yaml, m.index_topk), 0, 0, 0},
    {"sparse.index_heads", MODEL_YAML_INT, offsetof(arch_yaml, m.index_heads), 0, 0, 0},
    {"sparse.index_head_dim", MODEL_YAML_INT, offsetof(arch_yaml, m.index_head_dim), 0, 0, 0},
    /* The checkpoint's weight formats (model_dtype.h names): all parts, or per part. */
    {"weights.all", MODEL_YAML_STR, offsetof(arch_yaml, w[0]), 16, 0, 0},
    {"weights.attention", MODEL_YAML_STR, offsetof(arch_yaml, w[1]), 16, 0, 0},
    {"weights.dense_mlp", MODEL_YAML_STR, offsetof(arch_yaml, w[2]), 16, 0, 0},
    {"weights.routed_experts", MODEL_YAML_STR, offsetof(arch_yaml, w[3]), 16, 0, 0},
    {"weights.shared_experts", MODEL_YAML_STR, offsetof(arch_yaml, w[4]), 16, 0, 0},
};
#define N_ARCH_FIELDS ((int)(sizeof arch_fields / sizeof arch_fields[0]))

/* The PCIe path between GPUs of a node when a file does not give it.
 * Bus bandwidth: NCCL all-reduce over PCIe Gen5 x16 between 8 RTX 5090s
 * reaches 28 GB/s (8 ranks) to 35 GB/s (4 ranks) of 64 (NVIDIA/nccl issue
 * 1639): 0.44-0.55, the middle taken. Per-step latency: an 8-byte NCCL
 * all-reduce over 8 RTX 4090s on PCIe Gen4 takes 42 µs (NVIDIA/nccl issue
 * 1530); the model's tree over 8 ranks takes 2 log2 8 = 6 steps after the
 * 4 µs per-call cost (comm_base_us' default), so (42 − 4) / 6 ≈ 6.3 µs a
 * step. */
#define CATALOG_PCIE_EFF 0.5
#define CATALOG_PCIE_STEP_S 6.3e-6

/* The interconnect keys (model_gpu_caps.h): which link joins the GPUs of a
 * node, what a bridge joins, the PCIe path's efficiency and latency. */
static int catalog_gpu_links(model_gpu *g, const char *origin, int pcie_eff_seen, int pcie_step_seen, sim_err *err)
{
    model_gpu_icx icx;
    int rc = model_gpu_icx_parse(g->interconnect, g->nvlink_bw, origin, &icx, err);
    if (rc) return rc;
    g->interconnect_id = (int32_t)icx;
    snprintf(g->interconnect, sizeof g->interconnect, "%s", model_gpu_icx_name(icx));
    if (icx != MODEL_ICX_PCIE && !(g->nvlink_bw > 0))
        return sim_err_set(err, SIM_EINVAL, "%s: interconnect: %s needs nvlink_gbps > 0", origin, g->interconnect);
    if (icx == MODEL_ICX_PCIE && g->nvlink_bw != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: nvlink_gbps: must be 0 with interconnect pcie, got %g", origin,
                           g->nvlink_bw / 1e9);
    if (icx == MODEL_ICX_NVLINK_BRIDGE ? g->nvlink_bridge_gpus < 2 || g->nvlink_bridge_gpus > 8
                                       : g->nvlink_bridge_gpus != 0)
        return sim_err_set(err, SIM_EINVAL,
                           "%s: nvlink_bridge_gpus: give the GPUs one bridge joins (2..8) with interconnect "
                           "nvlink-bridge, and only then (got %d with %s)",
                           origin, g->nvlink_bridge_gpus, g->interconnect);
    if (icx != MODEL_ICX_NVLINK && !(g->host_bw > 0))
        return sim_err_set(err, SIM_EINVAL, "%s: host_gbps: interconnect %s carries collectives over PCIe, so "
                                            "host_gbps must be > 0", origin, g->interconnect);
    if (!pcie_eff_seen) g->eff_pcie = CATALOG_PCIE_EFF;
    if (!pcie_step_seen) g->pcie_step_s = CATALOG_PCIE_STEP_S;
    if (g->eff_pcie <= 0 || g->eff_pcie > 1.2)
        return sim_err_set(err, SIM_EINVAL, "%s: efficiency.pcie must be in (0, 1.2], got %g", origin, g->eff_pcie);
    if (g->pcie_step_s < 0 || g->pcie_step_s > 1e-3)
        return sim_err_set(err, SIM_EINVAL, "%s: efficiency.pcie_step_us must be in [0, 1000], got %g", origin,
                           g->pcie_step_s * 1e6);
    return 0;
}

static int catalog_gpu_parse(const char *text, size_t len, const char *origin, const char *key, model_gpu *out,
                             sim_err *err)
{
    model_gpu g;
    int seen[N_GPU_FIELDS];
    memset(&g, 0, sizeof g);
    int rc = model_yaml_load(text, len, origin, gpu_fields, N_GPU_FIELDS, &g, seen, err);
    if (rc) return rc;
#define SEEN(path) field_seen(gpu_fields, N_GPU_FIELDS, seen, path)
    if (SEEN("name") && !catalog_name_eq(g.name, key))
        return sim_err_set(err, SIM_EINVAL, "%s: name '%s' does not match the file name '%s'", origin, g.name, key);
    snprintf(g.name, sizeof g.name, "%s", key);
    if (SEEN("hbm_gb") == SEEN("hbm_gib"))
        return sim_err_set(err, SIM_EINVAL, "%s: give exactly one of hbm_gb (decimal) or hbm_gib", origin);
    if (g.flops_bf16 <= 0 || g.hbm_bytes <= 0 || g.hbm_bw <= 0 || g.sms <= 0)
        return sim_err_set(err, SIM_EINVAL, "%s: tflops.bf16, hbm and hbm_tbps and sms must be > 0", origin);
    model_gpu_arch arch;
    if ((rc = model_gpu_arch_parse(g.arch, g.cc, origin, &arch, err))) return rc;
    /* fp8 tensor cores exist from Ada on (cc 8.9), fp4 from Blackwell. */
    if (arch == MODEL_ARCH_AMPERE && g.flops_fp8 > 0)
        return sim_err_set(err, SIM_EINVAL, "%s: tflops.fp8: ampere has no fp8 tensor cores; give 0", origin);
    if (!model_gpu_has_block_scaled_mma(&g) && (g.flops_fp4 > 0 || g.flops_fp6 > 0))
        return sim_err_set(err, SIM_EINVAL, "%s: tflops.fp4/fp6: only Blackwell has fp4/fp6 tensor cores; give 0 on %s",
                           origin, g.arch);
    if ((rc = catalog_gpu_links(&g, origin, SEEN("efficiency.pcie"), SEEN("efficiency.pcie_step_us"), err)))
        return rc;
    const double *effs[] = {&g.eff_gemm, &g.eff_attn, &g.eff_mem, &g.eff_nvlink};
    const char *eff_names[] = {"gemm", "attn", "mem", "nvlink"};
    for (int i = 0; i < 4; i++)
        if (*effs[i] <= 0 || *effs[i] > 1.2)
            return sim_err_set(err, SIM_EINVAL, "%s: efficiency.%s must be in (0, 1.2], got %g", origin,
                               eff_names[i], *effs[i]);
    /* Optional keys: fp8 efficiency as bf16, fp4 as fp8; collective latencies
     * as typical NVLink figures (H100 NCCL LL / custom all-reduce) and a
     * 400G NIC (NCCL busbw 46-48 of 50 GB/s). */
    if (!SEEN("efficiency.gemm_fp8")) g.eff_gemm_fp8 = g.eff_gemm;
    if (!SEEN("efficiency.gemm_fp4")) g.eff_gemm_fp4 = g.eff_gemm_fp8;
    if (!SEEN("efficiency.comm_base_us")) g.comm_base_s = 4e-6;
    if (!SEEN("efficiency.nvlink_step_us")) g.nvlink_step_s = 0.5e-6;
    if (!SEEN("efficiency.nic_step_us")) g.nic_step_s = 5e-6;
    if (!SEEN("efficiency.nic")) g.eff_nic = 0.92;
    if (g.eff_gemm_fp8 <= 0 || g.eff_gemm_fp8 > 1.2 || g.eff_gemm_fp4 <= 0 || g.eff_gemm_fp4 > 1.2 ||
        g.eff_nic <= 0 || g.eff_nic > 1.2)
        return sim_err_set(err, SIM_EINVAL, "%s: efficiency.gemm_fp8, gemm_fp4 and nic must be in (0, 1.2]", origin);
    if (g.comm_base_s < 0 || g.nvlink_step_s < 0 || g.nic_step_s < 0)
        return sim_err_set(err, SIM_EINVAL, "%s: collective latencies must be >= 0", origin);
    if (g.hbm_copy_bw < 0 || g.hbm_copy_bw > g.hbm_bw)
        return sim_err_set(err, SIM_EINVAL, "%s: hbm_copy_tbps must be in [0, hbm_tbps] (0: not measured), got %g",
                           origin, g.hbm_copy_bw / 1e12);
    if (g.coll_lat_s < 0 || g.coll_lat_s > 1e-3)
        return sim_err_set(err, SIM_EINVAL, "%s: nccl_lat_us must be in [0, 1000] (0: not measured), got %g", origin,
                           g.coll_lat_s * 1e6);
    if (g.nvlink_domain == 1 || g.nvlink_domain > 1 << 16)
        return sim_err_set(err, SIM_EINVAL, "%s: nvlink_domain must be 0 (the node) or 2..65536 GPUs, got %d",
                           origin, g.nvlink_domain);
    if (g.power_idle_w < 0 || g.power_host_w < 0 || g.power_mem_share < 0 || g.power_mem_share > 1 ||
        (g.power_max_w > 0 && g.power_max_w < g.power_idle_w) || (g.power_max_w > 0) != (g.power_idle_w > 0))
        return sim_err_set(err, SIM_EINVAL,
                           "%s: power needs idle_w and max_w together with 0 < idle_w <= max_w, mem_share in "
                           "[0, 1] and host_w_per_gpu >= 0 (got idle %g W, max %g W, mem_share %g, host %g W)",
                           origin, g.power_idle_w, g.power_max_w, g.power_mem_share, g.power_host_w);
#undef SEEN
    *out = g;
    return 0;
}

static int catalog_arch_parse(const char *text, size_t len, const char *origin, const char *key,
                              model_spec *out, sim_err *err)
{
    arch_yaml y;
    int seen[N_ARCH_FIELDS];
    memset(&y, 0, sizeof y);
    int rc = model_yaml_load(text, len, origin, arch_fields, N_ARCH_FIELDS, &y, seen, err);
    if (rc) return rc;
    model_spec m = y.m;
    int32_t *parts[] = {&m.wdtype_attn, &m.wdtype_dense, &m.wdtype_expert, &m.wdtype_shared};
    static const char *const wkeys[] = {"weights.all", "weights.attention", "weights.dense_mlp",
                                        "weights.routed_experts", "weights.shared_experts"};
    for (int k = 0; k < 5; k++) {
        if (!y.w[k][0]) continue;
        model_dtype d;
        if ((rc = model_dtype_from_name(y.w[k], &d, err)))
            return sim_err_wrap(err, rc, "%s: %s", origin, wkeys[k]);
        for (int p = 0; p < 4; p++)
            if (k == 0 || p == k - 1) *parts[p] = (int32_t)d;
    }
    if (key) {
        if (field_seen(arch_fields, N_ARCH_FIELDS, seen, "name") && strcasecmp(m.name, key))
            return sim_err_set(err, SIM_EINVAL, "%s: name '%s' does not match the file name '%s'", origin, m.name,
                               key);
        snprintf(m.name, sizeof m.name, "%s", key);
    }
    rc = model_spec_derive(&m, origin, err);
    if (rc) return rc;
    *out = m;
    return 0;
}

/* ---- files ------------------------------------------------------------ */

static int catalog_file_read(const char *path, char **text, size_t *len, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return sim_err_set(err, SIM_EIO, "%s: cannot open", path);
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) goto fail;
    if (n > (1L << 24)) {
        fclose(f);
        return sim_err_set(err, SIM_EINVAL, "%s: larger than 16 MiB", path);
    }
    buf = malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) goto fail;
    buf[n] = 0;
    fclose(f);
    *text = buf;
    *len = (size_t)n;
    return 0;
fail:
    free(buf);
    fclose(f);
    return sim_err_set(err, SIM_EIO, "%s: read error", path);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcasecmp(s + a - b, suffix);
}

static size_t yaml_stem_len(const char *file)
{
    if (ends_with(file, ".yaml")) return strlen(file) - 5;
    if (ends_with(file, ".yml")) return strlen(file) - 4;
    return 0;
}

/* Calls fn(stem, path, ctx) for each YAML file of kind in each
 * $SERVESIM_CATALOG folder; stops when fn returns non-zero. */
typedef int (*catalog_visit_fn)(const char *stem, const char *path, void *ctx);

static int catalog_env_visit(const char *kind, catalog_visit_fn fn, void *ctx)
{
    const char *env = getenv("SERVESIM_CATALOG");
    if (!env || !*env) return 0;
    const char *p = env;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char dir[1024];
        if (n > 0 && n < 900) {
            snprintf(dir, sizeof dir, "%.*s/%s", (int)n, p, kind);
            DIR *d = opendir(dir);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                size_t sl = yaml_stem_len(e->d_name);
                if (sl == 0 || sl >= MODEL_NAME_MAX || e->d_name[0] == '.') continue;
                char stem[MODEL_NAME_MAX], path[2048];
                snprintf(stem, sizeof stem, "%.*s", (int)sl, e->d_name);
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                int r = fn(stem, path, ctx);
                if (r) {
                    closedir(d);
                    return r;
                }
            }
            if (d) closedir(d);
        }
        if (!colon) break;
        p = colon + 1;
    }
    return 0;
}

typedef struct {
    const char *name;
    char path[2048];
    char stem[MODEL_NAME_MAX];
} env_find;

static int env_find_visit(const char *stem, const char *path, void *ctx)
{
    env_find *f = ctx;
    if (!catalog_name_eq(stem, f->name)) return 0;
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->stem, sizeof f->stem, "%s", stem);
    return 1;
}

/* ---- unknown names ---------------------------------------------------- */

_Static_assert(MODEL_NAME_MAX <= SIM_EDIT_MAX, "catalogue names fit sim_edit_distance");

int model_catalog_name_distance(const char *a, const char *b)
{
    if (strlen(a) > MODEL_NAME_MAX || strlen(b) > MODEL_NAME_MAX) return 1 << 20;
    return sim_edit_distance(a, b, 1);
}

typedef struct {
    const char *name;
    char list[1024];
    size_t used;
    char best[MODEL_NAME_MAX];
    int best_score;
} unknown_ctx;

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return n == 0;
}

static int list_has(const char *list, const char *stem)
{
    size_t n = strlen(stem);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncasecmp(p, stem, n)) return 1;
        if (!comma) break;
        p = comma + 2;
    }
    return 0;
}

static void unknown_add(unknown_ctx *u, const char *stem)
{
    if (list_has(u->list, stem)) return; /* a user file shadowing an embedded one */
    if (u->used + strlen(stem) + 8 < sizeof u->list)
        u->used += (size_t)snprintf(u->list + u->used, sizeof u->list - u->used, "%s%s", u->used ? ", " : "", stem);
    /* A name that contains the query ("h100" → "h100-sxm") beats edits. */
    int score = contains_nocase(stem, u->name) ? 0 : model_catalog_name_distance(u->name, stem);
    if (score < u->best_score) {
        u->best_score = score;
        snprintf(u->best, sizeof u->best, "%s", stem);
    }
}

static int unknown_visit(const char *stem, const char *path, void *ctx)
{
    (void)path;
    unknown_add(ctx, stem);
    return 0;
}

static int catalog_unknown(const char *kind, const char *what, const char *name, sim_err *err)
{
    unknown_ctx u;
    memset(&u, 0, sizeof u);
    u.name = name;
    u.best_score = 1 << 20;
    catalog_env_visit(kind, unknown_visit, &u);
    for (int i = 0; i < model_catalog_n_files; i++)
        if (!strcmp(model_catalog_files[i].kind, kind)) unknown_add(&u, model_catalog_files[i].name);
    int limit = (int)strlen(name) / 3 + 2;
    if (u.best_score <= limit)
        return sim_err_set(err, SIM_EINVAL, "unknown %s '%s' (did you mean '%s'?); known: %s", what, name, u.best,
                           u.list);
    return sim_err_set(err, SIM_EINVAL, "unknown %s '%s'; known: %s", what, name, u.list);
}

/* ---- lookups ---------------------------------------------------------- */

typedef int (*catalog_parse_fn)(const char *text, size_t len, const char *origin, const char *key, void *out,
                                sim_err *err);

static int gpu_parse_any(const char *text, size_t len, const char *origin, const char *key, void *out, sim_err *err)
{
    return catalog_gpu_parse(text, len, origin, key, out, err);
}

static int arch_parse_any(const char *text, size_t len, const char *origin, const char *key, void *out,
                          sim_err *err)
{
    return catalog_arch_parse(text, len, origin, key, out, err);
}

/* 1 and *out filled when kind has a file named name ($SERVESIM_CATALOG
 * first, then the embedded ones), 0 when none, < 0 on a parse error. */
static int catalog_find(const char *kind, const char *name, catalog_parse_fn parse, void *out, sim_err *err)
{
    env_find f;
    memset(&f, 0, sizeof f);
    f.name = name;
    if (catalog_env_visit(kind, env_find_visit, &f)) {
        char *text = NULL;
        size_t len = 0;
        int rc = catalog_file_read(f.path, &text, &len, err);
        if (rc) return rc;
        rc = parse(text, len, f.path, f.stem, out, err);
        free(text);
        return rc ? rc : 1;
    }
    for (int i = 0; i < model_catalog_n_files; i++) {
        const model_catalog_file *e = &model_catalog_files[i];
        if (strcmp(e->kind, kind) || !catalog_name_eq(e->name, name)) continue;
        char origin[256];
        snprintf(origin, sizeof origin, "<embedded>/models/%s/%s.yaml", e->kind, e->name);
        int rc = parse(e->text, e->len, origin, e->name, out, err);
        return rc ? rc : 1;
    }
    return 0;
}

static int catalog_lookup(const char *kind, const char *what, const char *name, catalog_parse_fn parse, void *out,
                          sim_err *err)
{
    if (!name || !*name) return sim_err_set(err, SIM_EINVAL, "no %s name given", what);
    int rc = catalog_find(kind, name, parse, out, err);
    if (rc) return rc < 0 ? rc : 0;
    return catalog_unknown(kind, what, name, err);
}

/* ---- GPU aliases -------------------------------------------------------- */

typedef struct {
    const char *name;
    model_gpu *out;
    int found;
} alias_find;

/* Parses one GPU file and keeps it when it declares name as an alias; files
 * that do not parse are left to their own lookup's error. */
static int alias_try(alias_find *a, const char *text, size_t len, const char *origin, const char *stem)
{
    model_gpu g;
    sim_err e = {""};
    if (catalog_gpu_parse(text, len, origin, stem, &g, &e) || !catalog_list_has(g.aliases, a->name)) return 0;
    *a->out = g;
    a->found = 1;
    return 1;
}

static int alias_env_visit(const char *stem, const char *path, void *ctx)
{
    char *text = NULL;
    size_t len = 0;
    sim_err e = {""};
    if (catalog_file_read(path, &text, &len, &e)) return 0;
    int r = alias_try(ctx, text, len, path, stem);
    free(text);
    return r;
}

int model_catalog_gpu(const char *name, model_gpu *out, sim_err *err)
{
    sim_err first = {""};
    int rc = catalog_lookup("gpus", "GPU", name, gpu_parse_any, out, &first);
    if (rc == 0) return 0;
    if (rc != SIM_EINVAL || !name || !*name || strncmp(first.msg, "unknown GPU", 11)) {
        if (err) *err = first;
        return rc;
    }
    /* No file of that name: the first file (user folders, then embedded)
     * listing it under aliases. */
    alias_find a = {name, out, 0};
    catalog_env_visit("gpus", alias_env_visit, &a);
    for (int i = 0; i < model_catalog_n_files && !a.found; i++) {
        const model_catalog_file *e = &model_catalog_files[i];
        if (strcmp(e->kind, "gpus")) continue;
        char origin[256];
        snprintf(origin, sizeof origin, "<embedded>/models/gpus/%s.yaml", e->name);
        alias_try(&a, e->text, e->len, origin, e->name);
    }
    if (a.found) return 0;
    if (err) *err = first;
    return rc;
}

/* A catalogue YAML given as a path. */
static int catalog_model_yaml_path(const char *path, model_spec *out, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = catalog_file_read(path, &text, &len, err);
    if (rc) return rc;
    model_spec m;
    rc = catalog_arch_parse(text, len, path, NULL, &m, err);
    free(text);
    if (rc) return rc;
    if (!m.name[0]) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        snprintf(m.name, sizeof m.name, "%.*s", (int)yaml_stem_len(base), base);
    }
    *out = m;
    return 0;
}

int model_catalog_arch(const char *name, model_spec *out, sim_err *err)
{
    return catalog_find("archs", name, arch_parse_any, out, err);
}

void model_catalog_model_candidates(void (*fn)(const char *name, void *ctx), void *ctx)
{
    unknown_ctx u;
    memset(&u, 0, sizeof u);
    u.name = "";
    u.best_score = 1 << 20;
    catalog_env_visit("archs", unknown_visit, &u);
    for (int i = 0; i < model_catalog_n_files; i++)
        if (!strcmp(model_catalog_files[i].kind, "archs")) unknown_add(&u, model_catalog_files[i].name);
    for (const char *p = u.list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[MODEL_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        fn(name, ctx);
        if (!comma) break;
        p = comma + 2;
    }
}

int model_catalog_model(const char *name_or_path, model_spec *out, sim_err *err)
{
    if (!name_or_path || !*name_or_path) return sim_err_set(err, SIM_EINVAL, "no model name given");
    if (yaml_stem_len(name_or_path) > 0) return catalog_model_yaml_path(name_or_path, out, err);
    return model_resolve(name_or_path, out, err);
}

static int catalog_names(const char *kind, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < model_catalog_n_files; i++) {
        if (strcmp(model_catalog_files[i].kind, kind)) continue;
        if (names && n < max) names[n] = model_catalog_files[i].name;
        n++;
    }
    return n;
}

int model_catalog_gpu_names(const char **names, int max)
{
    return catalog_names("gpus", names, max);
}

int model_catalog_model_names(const char **names, int max)
{
    return catalog_names("archs", names, max);
}
