/* test_gpu_catalog — GPU names as serving benchmarks write them (aliases
 * declared in models/gpus/ YAML files, '_' and '-' alike), the GB300 entry,
 * the measured HBM copy rates (hbm_copy_tbps, refused above hbm_tbps), the
 * NCCL latencies (nccl_lat_us, refused outside [0, 1000] µs), the arch,
 * cc and interconnect checks (an RTX Blackwell user GPU among them), and
 * rack-scale NVLink domains: in the collectives' link choice (model_comm)
 * and in the cluster network's routing (sim_net_topo). */
#include "model_catalog.h"
#include "model_comm.h"
#include "model_dtype.h"
#include "model_gpu_caps.h"
#include "model_op.h"
#include "sim_net.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_aliases(void)
{
    static const char *const pairs[][2] = {
        {"h100_sxm", "h100-sxm"}, {"H100_SXM", "h100-sxm"}, {"h200_sxm", "h200-sxm"}, {"b200_sxm", "b200"},
        {"b300_sxm", "b300"},     {"gb200", "gb200"},       {"gb300", "gb300"},       {"a100_sxm", "a100-sxm-80g"},
        {"GB200_NVL72", "gb200"}, {"dgx-b200", "b200"},     {"hgx-h100", "h100-sxm"},
        /* The GPUs priced from datasheets (test_gpu_caps). */
        {"h100_pcie", "h100-pcie"}, {"h100_nvl", "h100-nvl"}, {"h200_nvl", "h200-nvl"}, {"h800", "h800-sxm"},
        {"h20", "h20"}, {"l40s", "l40s"}, {"l40", "l40"}, {"L4", "l4"}, {"a100_pcie", "a100-pcie-80g"},
        {"a100_sxm_40gb", "a100-sxm-40g"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        model_gpu g;
        sim_err e = {""};
        int rc = model_catalog_gpu(pairs[i][0], &g, &e);
        CHECK_MSG(rc == 0, "%s: %s", pairs[i][0], e.msg);
        if (rc == 0) CHECK_MSG(!strcmp(g.name, pairs[i][1]), "%s -> %s", pairs[i][0], g.name);
    }
    /* An alias is a whole name, not a prefix; the error still suggests. */
    model_gpu g;
    sim_err e = {""};
    CHECK(model_catalog_gpu("b200_sx", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown GPU 'b200_sx'");
    CHECK(model_catalog_gpu("h100-sx", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "did you mean 'h100-sxm'");
    CHECK(model_catalog_gpu(NULL, &g, NULL) == SIM_EINVAL);
}

/* Writes sub/NAME.yaml: keys (arch, cc, links, extras) at the top, tflops
 * (after bf16) and eff (after launch_us) inside their blocks. */
static void put_gpu(const char *sub, const char *name, const char *keys, const char *tflops, const char *eff)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.yaml", sub, name);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f,
            "name: %s\n%s\ntflops:\n  fp32: 60\n  bf16: 900\n%shbm_gb: 96\nhbm_tbps: 4\nsms: 120\nnic_gbps: 50\n"
            "efficiency:\n  gemm: 0.7\n  attn: 0.5\n  mem: 0.8\n  nvlink: 0.9\n  launch_us: 4\n%s",
            name, keys, tflops, eff);
    fclose(f);
}

#define HOPPER_KEYS "arch: hopper\ncc: 9.0\nnvlink_gbps: 400\n"

/* A user file may declare aliases too; a malformed list is a located error. */
static void test_user_aliases(void)
{
    char dir[] = "/tmp/servesim-gpucat-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char sub[256], path[320];
    snprintf(sub, sizeof sub, "%s/gpus", dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(path, sizeof path, "%s/my-gpu.yaml", sub);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("name: my-gpu\naliases: [lab_card_v2, lab-card]\narch: hopper\ncc: 9.0\n"
          "tflops:\n  fp32: 60\n  bf16: 900\nhbm_gb: 96\nhbm_tbps: 4\nsms: 120\nnvlink_gbps: 400\nnic_gbps: 50\n"
          "efficiency:\n  gemm: 0.7\n  attn: 0.5\n  mem: 0.8\n  nvlink: 0.9\n  launch_us: 4\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/bad-gpu.yaml", sub);
    f = fopen(path, "w");
    if (f) {
        fputs("name: bad-gpu\naliases: \"x, y\"\n", f);
        fclose(f);
    }
    /* A measured copy rate above the datasheet's HBM rate is refused, and
     * an NCCL latency of milliseconds (a unit slip). */
    put_gpu(sub, "fast-copy", HOPPER_KEYS "hbm_copy_tbps: 4.5", "", "");
    put_gpu(sub, "bad-lat", HOPPER_KEYS "nccl_lat_us: 2000", "", "");
    setenv("SERVESIM_CATALOG", dir, 1);
    model_gpu g;
    sim_err e = {""};
    CHECK_MSG(model_catalog_gpu("LAB-CARD-V2", &g, &e) == 0, "%s", e.msg);
    CHECK(!strcmp(g.name, "my-gpu"));
    CHECK(g.hbm_copy_bw == 0); /* not measured: the op model takes 0.9 of hbm_tbps */
    CHECK(g.coll_lat_s == 0);  /* not measured: the op model takes the ring estimate */
    CHECK(model_catalog_gpu("b200_sxm", &g, &e) == 0 && !strcmp(g.name, "b200"));
    CHECK(model_catalog_gpu("bad-gpu", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "bad-gpu.yaml:2:10: aliases: write several names as a list");
    CHECK(model_catalog_gpu("fast-copy", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "hbm_copy_tbps must be in [0, hbm_tbps]");
    CHECK(model_catalog_gpu("bad-lat", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "nccl_lat_us must be in [0, 1000]");
    unsetenv("SERVESIM_CATALOG");
    snprintf(path, sizeof path, "%s/my-gpu.yaml", sub);
    unlink(path);
    snprintf(path, sizeof path, "%s/bad-gpu.yaml", sub);
    unlink(path);
    snprintf(path, sizeof path, "%s/fast-copy.yaml", sub);
    unlink(path);
    snprintf(path, sizeof path, "%s/bad-lat.yaml", sub);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

/* Every shipped GPU names its measured HBM copy rate (the op model's GEMM
 * bandwidth reference), at most its datasheet rate: H200's and B200's
 * measured, the others their architecture's share; and its NCCL latency
 * (the op model's collective time unit): H100's, B200's and A100's
 * measured (2-rank all-reduce of 512 bytes), the others their NVLink
 * generation's. */
static void test_copy_rates(void)
{
    static const struct {
        const char *name;
        double tbps, lat_us;
    } want[] = {{"h100-sxm", 3.0, 6.2}, {"h200-sxm", 4.3, 6.2}, {"b200", 6.0, 10.3},
                {"gb200", 6.0, 10.3},   {"b300", 6.0, 10.3},    {"gb300", 6.0, 10.3},
                {"a100-sxm-80g", 1.8, 10.0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        model_gpu g;
        sim_err e = {""};
        REQUIRE_MSG(model_catalog_gpu(want[i].name, &g, &e) == 0, "%s", e.msg);
        CHECK_NEAR(g.hbm_copy_bw, want[i].tbps * 1e12, 1e6);
        CHECK_MSG(g.hbm_copy_bw <= g.hbm_bw, "%s: copy %.3g above HBM %.3g", want[i].name, g.hbm_copy_bw, g.hbm_bw);
        CHECK_NEAR(g.coll_lat_s, want[i].lat_us * 1e-6, 1e-12);
    }
}

/* GB300: the B300 GPU in an NVL72 rack (figures from gpu-specs.md). */
static void test_gb300(void)
{
    model_gpu g, b;
    sim_err e = {""};
    CHECK_MSG(model_catalog_gpu("gb300", &g, &e) == 0, "%s", e.msg);
    CHECK(model_catalog_gpu("b300", &b, &e) == 0);
    CHECK(!strcmp(g.arch, "blackwell") && g.cc == 10.3);
    CHECK_NEAR(g.flops_bf16, b.flops_bf16, 1);
    CHECK_NEAR(g.flops_fp4, 13000e12, 1e9);
    CHECK_NEAR(g.hbm_bytes, 288e9, 1);
    CHECK_NEAR(g.nvlink_bw, 900e9, 1);
    CHECK(g.nvlink_domain == 72);
    CHECK_NEAR(g.host_bw, 900e9, 1);
    model_gpu gb;
    CHECK(model_catalog_gpu("gb200", &gb, &e) == 0 && gb.nvlink_domain == 72);
    CHECK(b.nvlink_domain == 0);
}

/* A 64-rank group spans 8 HGX nodes (NICs) but one NVL72 rack (NVLink). */
static void test_comm_domain(void)
{
    model_gpu hgx, nvl;
    sim_err e = {""};
    CHECK(model_catalog_gpu("b200", &hgx, &e) == 0);
    CHECK(model_catalog_gpu("gb200", &nvl, &e) == 0);
    model_comm_net a, b;
    model_comm_net_init(&a, &hgx, 8);
    model_comm_net_init(&b, &nvl, 8);
    CHECK(model_comm_group_link(&a, 64, 1) == MODEL_LINK_NIC);
    CHECK(model_comm_group_link(&b, 64, 1) == MODEL_LINK_NVLINK);
    CHECK(model_comm_group_link(&b, 8, 1) == MODEL_LINK_NVLINK);
    CHECK(model_comm_group_link(&b, 2, 72) == MODEL_LINK_NIC); /* across racks */
    double ta = model_comm_time(&a, MODEL_COLL_ALL_GATHER, 64, 1, 64e6, NULL);
    double tb = model_comm_time(&b, MODEL_COLL_ALL_GATHER, 64, 1, 64e6, NULL);
    CHECK_MSG(tb < ta / 5, "NVL72 all-gather %.3g s vs HGX %.3g s", tb, ta);
    /* A ring over 8 HGX nodes crosses a NIC once per node: 63 hops at the
     * hop-weighted mean of 8 NIC and 56 NVLink latencies; the tree keeps
     * the NIC latency on each of its 2*log2(64) steps. */
    double ring_a = (8 * hgx.nic_step_s + 56 * hgx.nvlink_step_s) / 64;
    CHECK_NEAR(model_comm_time(&a, MODEL_COLL_ALL_GATHER, 64, 1, 1, NULL), hgx.comm_base_s + 63 * ring_a, 1e-9);
    model_comm_cost cc;
    double tr = model_comm_time(&a, MODEL_COLL_ALL_REDUCE, 64, 1, 1, &cc);
    double ring = hgx.comm_base_s + 126 * ring_a, tree = hgx.comm_base_s + 12 * hgx.nic_step_s;
    CHECK_NEAR(tr, ring < tree ? ring : tree, 1e-9);
    /* Ranks a node apart: every hop is a NIC hop. */
    CHECK_NEAR(model_comm_time(&a, MODEL_COLL_ALL_GATHER, 4, 8, 1, NULL), hgx.comm_base_s + 3 * hgx.nic_step_s, 1e-9);
}

/* Routing: two nodes of one NVLink domain talk over NVLink, no latency. */
static void test_topo_domain(void)
{
    sim_err e = {""};
    sim_net_topo *t = NULL;
    REQUIRE_MSG(sim_net_topo_build(4, 4, 900e9, 50e9, 5e-6, 0, 0, &t, &e) == 0 && t, "%s", e.msg);
    int links[SIM_NET_MAX_PATH];
    sim_time lat = -1;
    int a = sim_net_topo_gpu(t, 0, 0), b = sim_net_topo_gpu(t, 1, 0), c = sim_net_topo_gpu(t, 2, 0);
    int n = sim_net_topo_route(t, a, b, links, &lat, &e);
    CHECK(n == 2 && lat == 5000);
    CHECK_NEAR(sim_net_topo_link_capacity(t, links[0]), 50e9, 1);
    CHECK(sim_net_topo_set_nvlink_domain(t, 2, &e) == 0);
    n = sim_net_topo_route(t, a, b, links, &lat, &e);
    CHECK(n == 2 && lat == 0);
    CHECK_NEAR(sim_net_topo_link_capacity(t, links[0]), 900e9, 1);
    n = sim_net_topo_route(t, a, c, links, &lat, &e); /* next domain: NIC */
    CHECK(n == 2 && lat == 5000);
    CHECK(sim_net_topo_set_nvlink_domain(t, -1, &e) == SIM_EINVAL);
    sim_net_topo_destroy(t);
}

/* The catalogue refuses an unknown arch, a cc outside its arch, fp8 on
 * Ampere, fp4 before Blackwell, an unknown interconnect and links that
 * contradict it, naming the key. A user GPU of RTX Blackwell (CC 12.0;
 * test figures, not a datasheet's): fp4 and MX formats run, block fp8 is
 * promoted (no tcgen05), no sibling's fitted sets. */
static void test_arch_links(void)
{
    char dir[] = "/tmp/servesim-gpucaps-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char sub[300], path[400];
    snprintf(sub, sizeof sub, "%s/gpus", dir);
    REQUIRE(mkdir(sub, 0700) == 0);
    static const struct {
        const char *name, *keys, *tflops, *eff, *want;
    } bad[] = {
        {"volta", "arch: volta\ncc: 7.0\nnvlink_gbps: 150", "", "",
         "arch: expected ampere, ada, hopper, blackwell or rtx-blackwell, got 'volta'"},
        {"ada-90", "arch: ada\ncc: 9.0\nnvlink_gbps: 0\nhost_gbps: 32", "", "",
         "cc: 9.0 is not a compute capability of arch ada"},
        {"amp-fp8", "arch: ampere\ncc: 8.0\nnvlink_gbps: 300", "  fp8: 1\n", "", "tflops.fp8: ampere has no fp8"},
        {"hop-fp4", "arch: hopper\ncc: 9.0\nnvlink_gbps: 450", "  fp4: 1\n", "", "tflops.fp4/fp6: only Blackwell"},
        {"ib", "arch: hopper\ncc: 9.0\nnvlink_gbps: 450\ninterconnect: infiniband", "", "",
         "interconnect: expected nvlink, nvlink-bridge or pcie, got 'infiniband'"},
        {"pcie-nvl", "arch: ada\ncc: 8.9\nnvlink_gbps: 400\ninterconnect: pcie\nhost_gbps: 32", "", "",
         "nvlink_gbps: must be 0 with interconnect pcie"},
        {"no-host", "arch: ada\ncc: 8.9\nnvlink_gbps: 0", "", "",
         "host_gbps: interconnect pcie carries collectives over PCIe"},
        {"bridge-n", "arch: hopper\ncc: 9.0\nnvlink_gbps: 300\ninterconnect: nvlink-bridge\nhost_gbps: 64", "", "",
         "nvlink_bridge_gpus: give the GPUs one bridge joins (2..8)"},
        {"bad-pcie", "arch: ada\ncc: 8.9\nnvlink_gbps: 0\nhost_gbps: 32", "", "  pcie: 0\n",
         "efficiency.pcie must be in (0, 1.2]"},
    };
    const int n_bad = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < n_bad; i++) put_gpu(sub, bad[i].name, bad[i].keys, bad[i].tflops, bad[i].eff);
    put_gpu(sub, "rtx-bw", "arch: rtx-blackwell\ncc: 12.0\nnvlink_gbps: 0\nhost_gbps: 64", "  fp8: 1800\n  fp4: 3600\n",
            "");
    setenv("SERVESIM_CATALOG", dir, 1);
    for (int i = 0; i < n_bad; i++) {
        model_gpu g;
        sim_err e = {""};
        CHECK_MSG(model_catalog_gpu(bad[i].name, &g, &e) == SIM_EINVAL, "%s loaded", bad[i].name);
        CHECK_CONTAINS(e.msg, bad[i].want);
        snprintf(path, sizeof path, "%s/%s.yaml", sub, bad[i].name);
        unlink(path);
    }
    model_gpu g;
    sim_err e = {""};
    CHECK_MSG(model_catalog_gpu("rtx-bw", &g, &e) == 0, "%s", e.msg);
    CHECK(model_gpu_arch_of(&g) == MODEL_ARCH_RTX_BLACKWELL && g.interconnect_id == MODEL_ICX_PCIE);
    CHECK(model_dtype_check(&g, MODEL_DTYPE_NVFP4, "m", &e) == 0);
    CHECK(model_dtype_check(&g, MODEL_DTYPE_MXFP8, "m", &e) == 0);
    CHECK(!model_gpu_has_tcgen05(&g) && model_dtype_promote_frac(&g, MODEL_DTYPE_FP8_BLOCK) > 0);
    CHECK(model_op_table_gpu(&g) == NULL);
    unsetenv("SERVESIM_CATALOG");
    snprintf(path, sizeof path, "%s/rtx-bw.yaml", sub);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

static const test_case cases[] = {
    {"aliases", test_aliases},
    {"user_aliases", test_user_aliases},
    {"gb300", test_gb300},
    {"copy_rates", test_copy_rates}, /* and the NCCL latencies */
    {"arch_links", test_arch_links}, /* arch, cc and interconnect checks */
    {"comm_domain", test_comm_domain},
    {"topo_domain", test_topo_domain},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_gpu_catalog", cases);
}
