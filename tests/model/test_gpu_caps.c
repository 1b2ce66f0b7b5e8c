/* test_gpu_caps — the GPUs beyond the measured seven: every entry loads and
 * is found by the names serving benchmarks use; the formats each
 * architecture runs (fp8 from Ada on, MX and fp4 on Blackwell only, block
 * fp8 promoted on the CUDA cores wherever there is no tcgen05); and the
 * collectives between GPUs NVLink does not join go over PCIe, finitely and
 * slower than NVLink (model_comm), NVLink bridges joining only their own
 * group. */
#include "model_catalog.h"
#include "model_comm.h"
#include "model_dtype.h"
#include "model_gpu_caps.h"
#include "model_op.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name, *alias, *arch, *icx;
    double bf16_tflops, fp8_tflops;
} new_gpus[] = {
    {"h100-pcie", "h100_pcie", "hopper", "nvlink-bridge", 756.5, 1513},
    {"h100-nvl", "h100_nvl", "hopper", "nvlink-bridge", 835.5, 1670.5},
    {"h200-nvl", "h200_nvl", "hopper", "nvlink-bridge", 835.5, 1670.5},
    {"h800-sxm", "h800", "hopper", "nvlink", 989.4, 1979},
    {"h20", "H20", "hopper", "nvlink", 148, 296},
    {"a100-sxm-40g", "a100_sxm_40gb", "ampere", "nvlink", 312, 0},
    {"a100-pcie-80g", "a100_pcie", "ampere", "nvlink-bridge", 312, 0},
    {"l40s", "L40S", "ada", "pcie", 362.05, 733},
    {"l40", "l40", "ada", "pcie", 181.05, 362},
    {"l4", "nvidia-l4", "ada", "pcie", 121, 242.5},
};
#define N_NEW ((int)(sizeof new_gpus / sizeof new_gpus[0]))

/* Each entry loads by its name and an alias, with its datasheet peaks and a
 * derived copy rate under its HBM rate. */
static void test_entries(void)
{
    for (int i = 0; i < N_NEW; i++) {
        model_gpu g;
        sim_err e = {""};
        REQUIRE_MSG(model_catalog_gpu(new_gpus[i].alias, &g, &e) == 0, "%s: %s", new_gpus[i].alias, e.msg);
        CHECK_MSG(!strcmp(g.name, new_gpus[i].name), "%s -> %s", new_gpus[i].alias, g.name);
        CHECK(!strcmp(g.arch, new_gpus[i].arch));
        CHECK_MSG(!strcmp(g.interconnect, new_gpus[i].icx), "%s: %s", g.name, g.interconnect);
        CHECK_NEAR(g.flops_bf16, new_gpus[i].bf16_tflops * 1e12, 1e9);
        CHECK_NEAR(g.flops_fp8, new_gpus[i].fp8_tflops * 1e12, 1e9);
        CHECK(g.flops_fp4 == 0);
        CHECK_MSG(g.hbm_copy_bw > 0.8 * g.hbm_bw && g.hbm_copy_bw <= g.hbm_bw, "%s", g.name);
        CHECK(g.host_bw > 0 && g.eff_pcie > 0 && g.pcie_step_s > 0);
    }
    /* The shipped seven keep NVLink behind an NVSwitch. */
    model_gpu g;
    sim_err e = {""};
    REQUIRE(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    CHECK(g.interconnect_id == MODEL_ICX_NVLINK && model_gpu_nvswitch(&g));
    CHECK(model_catalog_gpu("h200_nvl", &g, &e) == 0 && g.nvlink_bridge_gpus == 4);
    CHECK(model_catalog_gpu("h800_sxm5", &g, &e) == 0 && g.nvlink_bw == 200e9);
}

/* Formats per architecture: Ada and Hopper run fp8 tensor cores, Ampere
 * runs fp8 weight-only (bf16 peak); none of them MX or fp4; block fp8 is
 * promoted on the CUDA cores except on tcgen05 Blackwell. Op-model sets
 * borrowed only within an architecture with measured tables. */
static void test_formats(void)
{
    model_gpu l40s, h20, a100, b200;
    sim_err e = {""};
    REQUIRE(model_catalog_gpu("l40s", &l40s, &e) == 0 && model_catalog_gpu("h20", &h20, &e) == 0);
    REQUIRE(model_catalog_gpu("a100_pcie", &a100, &e) == 0 && model_catalog_gpu("b200", &b200, &e) == 0);
    CHECK(model_dtype_check(&l40s, MODEL_DTYPE_FP8, "m", &e) == 0);
    CHECK_NEAR(model_dtype_peak(&l40s, MODEL_DTYPE_FP8), 733e12, 1e9);
    CHECK(model_dtype_check(&l40s, MODEL_DTYPE_MXFP8, "m", &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "no MX block-scaled tensor cores");
    CHECK(model_dtype_check(&l40s, MODEL_DTYPE_NVFP4, "m", &e) == SIM_EINVAL);
    CHECK(model_dtype_check(&h20, MODEL_DTYPE_FP8_BLOCK, "m", &e) == 0);
    CHECK(model_dtype_check(&a100, MODEL_DTYPE_FP8, "m", &e) == 0); /* weight-only */
    CHECK_NEAR(model_dtype_peak(&a100, MODEL_DTYPE_FP8), 312e12, 1e9);
    CHECK(model_dtype_promote_frac(&l40s, MODEL_DTYPE_FP8_BLOCK) > 0);
    CHECK(model_dtype_promote_frac(&h20, MODEL_DTYPE_FP8_BLOCK) > 0);
    CHECK(model_dtype_promote_frac(&b200, MODEL_DTYPE_FP8_BLOCK) == 0);
    CHECK(model_dtype_promote_frac(&a100, MODEL_DTYPE_FP8_BLOCK) == 0);
    CHECK(!model_gpu_has_block_scaled_mma(&l40s) && model_gpu_has_block_scaled_mma(&b200));
    CHECK(model_op_table_gpu(&l40s) == NULL);
    CHECK(model_op_table_gpu(&h20) && !strcmp(model_op_table_gpu(&h20), "h100_sxm"));
    CHECK(model_op_table_gpu(&a100) && !strcmp(model_op_table_gpu(&a100), "a100_sxm"));
}

/* Two catalogue GPUs and their networks (8 GPUs a node): 0, or -1 with a
 * failed check. */
static int load_nets(const char *x, const char *y, model_gpu *gx, model_gpu *gy, model_comm_net *nx,
                     model_comm_net *ny)
{
    sim_err e = {""};
    int rc = model_catalog_gpu(x, gx, &e) || model_catalog_gpu(y, gy, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc) return -1;
    model_comm_net_init(nx, gx, 8);
    model_comm_net_init(ny, gy, 8);
    return 0;
}

/* A TP-2 all-reduce between two L40S goes over PCIe: finite, priced as the
 * ring formula over host_gbps × efficiency.pcie (32 GB/s × 0.5) with the
 * PCIe step latency, and slower than between two A100 SXM 40 GB (NVLink,
 * a GPU of like memory and bf16 rate). */
static void test_pcie_all_reduce(void)
{
    model_gpu l40s, a100;
    model_comm_net p, n;
    REQUIRE(load_nets("l40s", "a100-sxm-40g", &l40s, &a100, &p, &n) == 0);
    CHECK(model_comm_group_link(&p, 2, 1) == MODEL_LINK_PCIE);
    CHECK(model_comm_group_link(&p, 16, 1) == MODEL_LINK_NIC);
    CHECK(model_comm_group_link(&n, 2, 1) == MODEL_LINK_NVLINK);
    const double sizes[] = {16e3, 1e6, 10.5e6, 256e6};
    for (int i = 0; i < 4; i++) {
        model_comm_cost cp, cn;
        double tp = model_comm_time(&p, MODEL_COLL_ALL_REDUCE, 2, 1, sizes[i], &cp);
        double tn = model_comm_time(&n, MODEL_COLL_ALL_REDUCE, 2, 1, sizes[i], &cn);
        CHECK_MSG(isfinite(tp) && tp > 0 && tp > tn, "%.0f B: PCIe %.3g s, NVLink %.3g s", sizes[i], tp, tn);
        CHECK(cp.link == MODEL_LINK_PCIE && cn.link == MODEL_LINK_NVLINK);
        /* n = 2: the ring (2 steps, B/bw) is never slower than the tree. */
        double want = l40s.comm_base_s + 2 * 6.3e-6 + sizes[i] / (32e9 * 0.5);
        CHECK_NEAR(tp, want, 1e-12);
    }
    CHECK(!strcmp(model_comm_link_name(MODEL_LINK_PCIE), "pcie"));
    /* Ring-attention steps and all-to-alls take PCIe too. */
    CHECK_NEAR(model_comm_ring_step_time(&p, 4, 1, 1e6, NULL), l40s.comm_base_s + 6.3e-6 + 1e6 / 16e9, 1e-12);
    double a2a = model_comm_time(&p, MODEL_COLL_ALL_TO_ALL, 4, 1, 4e6, NULL);
    CHECK_NEAR(a2a, l40s.comm_base_s + 6.3e-6 + 3.0 / 4 * 4e6 / 16e9, 1e-12);
}

/* NVLink bridges join their own group only: H100 PCIe pairs (a TP-2 group
 * on one bridge, NVLink at the measured 0.39 of 300 GB/s), larger or
 * strided groups over PCIe; H200 NVL's 4-way bridge carries TP-4, not TP-8. */
static void test_bridges(void)
{
    model_gpu h, h2;
    model_comm_net a, b;
    REQUIRE(load_nets("h100_pcie", "h200_nvl", &h, &h2, &a, &b) == 0);
    CHECK(model_comm_group_link(&a, 2, 1) == MODEL_LINK_NVLINK);
    CHECK(model_comm_group_link(&a, 4, 1) == MODEL_LINK_PCIE);
    CHECK(model_comm_group_link(&a, 2, 2) == MODEL_LINK_PCIE); /* attention-DP peers on two bridges */
    CHECK(model_comm_group_link(&b, 4, 1) == MODEL_LINK_NVLINK);
    CHECK(model_comm_group_link(&b, 8, 1) == MODEL_LINK_PCIE);
    double t2 = model_comm_time(&a, MODEL_COLL_ALL_REDUCE, 2, 1, 64e6, NULL);
    CHECK_NEAR(t2, h.comm_base_s + 2 * h.nvlink_step_s + 64e6 / (300e9 * 0.39), 1e-12);
    double t4 = model_comm_time(&a, MODEL_COLL_ALL_REDUCE, 4, 1, 64e6, NULL);
    CHECK_MSG(t4 > t2 && isfinite(t4), "TP-4 over PCIe %.3g s vs TP-2 bridged %.3g s", t4, t2);
}

static const test_case cases[] = {
    {"entries", test_entries},
    {"formats", test_formats},
    {"pcie_all_reduce", test_pcie_all_reduce},
    {"bridges", test_bridges},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_gpu_caps", cases);
}
