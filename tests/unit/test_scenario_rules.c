/* test_scenario_rules — the "0 = default" rules of the scenario written
 * once (sim_scenario.h): GPUs per node and the per-GPU NIC bandwidth; and
 * the pool's typed parallel names and the typed dtypes as the cost model's
 * layout enums (sim_pool_layout). */
#include "sim_pool_layout.h"
#include "sim_scenario.h"
#include "test_util.h"

#include <string.h>

static void case_gpus_per_node(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    CHECK(sc.hardware.gpus_per_node == SIM_DEFAULT_GPUS_PER_NODE);
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
    sc.hardware.gpus_per_node = 4;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 4);
    sc.hardware.gpus_per_node = 0;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
    sc.hardware.gpus_per_node = -3;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
}

static void case_nic(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.network.nic_gbps = 0;
    CHECK(sim_network_nic_Bps(&sc.network, 50e9) == 50e9);
    sc.network.nic_gbps = 400; /* Gb/s → bytes/s */
    CHECK(sim_network_nic_Bps(&sc.network, 50e9) == 400e9 / 8);
    sc.network.nic_gbps = -1;
    CHECK(sim_network_nic_Bps(&sc.network, 25e9) == 25e9);
}

/* Each parallel enum value becomes its cost-model enum of the same name; a
 * value outside the enum (a scenario built in code) is refused with the key. */
/* The defaults' scenario in *sc and its first pool. */
static sim_pool_cfg *defaults_pool(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    return &sc->deployment.pools[0];
}

static void case_pool_layout_enums(void)
{
    sim_scenario sc;
    sim_pool_cfg *p = defaults_pool(&sc);
    model_layout l;
    sim_err e = {""};
    REQUIRE(sim_pool_layout(&sc, p, &l, &e) == 0);
    CHECK(l.sp_kind == MODEL_SP_ULYSSES && l.ep_mode == MODEL_EP_AUTO && l.moe_gemm == MODEL_MOE_GEMM_AUTO);
    for (int i = 0; i < SIM_SP_KINDS; i++) {
        p->parallel.sp_kind = (sim_sp_kind)i;
        CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 &&
              strcmp(model_sp_kind_name(l.sp_kind), sim_sp_kind_name((sim_sp_kind)i)) == 0);
    }
    for (int i = 0; i < SIM_EP_MODES; i++) {
        p->parallel.ep_mode = (sim_ep_mode)i;
        CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 &&
              strcmp(model_ep_mode_name(l.ep_mode), sim_ep_mode_name((sim_ep_mode)i)) == 0);
    }
    for (int i = 0; i < SIM_MOE_GEMMS; i++) {
        p->parallel.moe_gemm = (sim_moe_gemm)i;
        CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 &&
              strcmp(model_moe_gemm_name(l.moe_gemm), sim_moe_gemm_name((sim_moe_gemm)i)) == 0);
    }
    p->parallel.ep_mode = (sim_ep_mode)SIM_EP_MODES;
    CHECK(sim_pool_layout(&sc, p, &l, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "parallel.ep_mode");
}

/* dtype and kv_dtype are typed once by the loader: each name becomes the
 * cost model's dtype of the same name, auto the checkpoint's formats, a kv
 * left 0 in code bf16; a value outside the enum is refused with the key. */
static void case_pool_layout_dtypes(void)
{
    sim_scenario sc;
    sim_pool_cfg *p = defaults_pool(&sc);
    model_layout l;
    sim_err e = {""};
    CHECK(sc.dtype == SIM_DTYPE_AUTO && sc.kv_dtype == SIM_DTYPE_BF16);
    REQUIRE(sim_pool_layout(&sc, p, &l, &e) == 0);
    CHECK(l.dtype_checkpoint == 1 && l.kv_dtype == MODEL_DTYPE_BF16);
    CHECK(strcmp(sim_dtype_name(SIM_DTYPE_AUTO), "auto") == 0);
    for (int i = SIM_DTYPE_BF16; i < SIM_DTYPES; i++) {
        sc.dtype = (sim_dtype)i;
        CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 && l.dtype_checkpoint == 0 &&
              strcmp(model_dtype_name(l.dtype), sim_dtype_name((sim_dtype)i)) == 0);
    }
    sc.dtype = SIM_DTYPE_AUTO;
    for (int i = SIM_DTYPE_BF16; i < SIM_DTYPE_BF16 + SIM_KV_DTYPES; i++) {
        sc.kv_dtype = (sim_dtype)i;
        CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 &&
              strcmp(model_dtype_name(l.kv_dtype), sim_dtype_name((sim_dtype)i)) == 0);
    }
    sc.kv_dtype = SIM_DTYPE_AUTO;
    CHECK(sim_pool_layout(&sc, p, &l, &e) == 0 && l.kv_dtype == MODEL_DTYPE_BF16);
    sc.dtype = (sim_dtype)SIM_DTYPES;
    CHECK(sim_pool_layout(&sc, p, &l, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "dtype: expected one of the dtype names, got value 8");
    sc.dtype = SIM_DTYPE_FP8;
    sc.kv_dtype = (sim_dtype)-1;
    CHECK(sim_pool_layout(&sc, p, &l, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "kv_dtype: expected one of the dtype names, got value -1");
}

/* scheduler.kernels.*: each part's engine goes to the layout by name,
 * "preset" (NONE) leaves the part to the preset's engine, and a part named
 * without an engine preset is refused with its key. */
static void case_pool_layout_kernels(void)
{
    sim_scenario sc;
    sim_pool_cfg *p = defaults_pool(&sc);
    model_layout l;
    sim_err e = {""};
    p->scheduler.preset = SIM_SCHED_PRESET_SGLANG;
    p->scheduler.kernels[SIM_KERNEL_MOE] = SIM_SCHED_PRESET_TRTLLM;
    REQUIRE(sim_pool_layout(&sc, p, &l, &e) == 0);
    CHECK(strcmp(model_layout_kernels(&l, MODEL_KERN_MOE), "trtllm") == 0);
    CHECK(strcmp(model_layout_kernels(&l, MODEL_KERN_GEMM), "sglang") == 0);
    CHECK(strcmp(model_layout_kernels(&l, MODEL_KERN_ATTENTION), "sglang") == 0);
    p->scheduler.preset = SIM_SCHED_PRESET_NONE;
    CHECK(sim_pool_layout(&sc, p, &l, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "scheduler.kernels.moe");
}

static const test_case cases[] = {
    {"gpus_per_node", case_gpus_per_node},
    {"nic", case_nic},
    {"pool_layout_enums", case_pool_layout_enums},
    {"pool_layout_dtypes", case_pool_layout_dtypes},
    {"pool_layout_kernels", case_pool_layout_kernels},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_scenario_rules", cases);
}
