/* model_gpu_caps — see model_gpu_caps.h. */
#include "model_gpu_caps.h"

#include <string.h>

static const char *const arch_names[MODEL_ARCH_COUNT] = {"ampere", "ada", "hopper", "blackwell", "rtx-blackwell"};

/* Compute capabilities of each architecture, [lo, hi). */
static const double arch_cc[MODEL_ARCH_COUNT][2] = {{8.0, 8.8}, {8.9, 9.0}, {9.0, 10.0}, {10.0, 12.0}, {12.0, 13.0}};

static const char *const icx_names[MODEL_ICX_COUNT] = {"nvlink", "nvlink-bridge", "pcie"};

int model_gpu_arch_parse(const char *name, double cc, const char *origin, model_gpu_arch *out, sim_err *err)
{
    for (int a = 0; a < MODEL_ARCH_COUNT; a++) {
        if (strcmp(name, arch_names[a])) continue;
        /* cc is written with one decimal (8.9): compare in tenths. */
        long t = (long)(cc * 10.0 + 0.5), lo = (long)(arch_cc[a][0] * 10.0 + 0.5),
             hi = (long)(arch_cc[a][1] * 10.0 + 0.5);
        if (t < lo || t >= hi)
            return sim_err_set(err, SIM_EINVAL, "%s: cc: %.1f is not a compute capability of arch %s ([%.1f, %.1f))",
                               origin, cc, name, arch_cc[a][0], arch_cc[a][1]);
        *out = (model_gpu_arch)a;
        return 0;
    }
    return sim_err_set(err, SIM_EINVAL,
                       "%s: arch: expected ampere, ada, hopper, blackwell or rtx-blackwell, got '%s'", origin, name);
}

const char *model_gpu_arch_name(model_gpu_arch a)
{
    return (int)a >= 0 && a < MODEL_ARCH_COUNT ? arch_names[a] : "?";
}

int model_gpu_icx_parse(const char *name, double nvlink_bw, const char *origin, model_gpu_icx *out, sim_err *err)
{
    if (!name[0]) {
        *out = nvlink_bw > 0 ? MODEL_ICX_NVLINK : MODEL_ICX_PCIE;
        return 0;
    }
    for (int i = 0; i < MODEL_ICX_COUNT; i++)
        if (!strcmp(name, icx_names[i])) {
            *out = (model_gpu_icx)i;
            return 0;
        }
    return sim_err_set(err, SIM_EINVAL, "%s: interconnect: expected nvlink, nvlink-bridge or pcie, got '%s'", origin,
                       name);
}

const char *model_gpu_icx_name(model_gpu_icx i)
{
    return (int)i >= 0 && i < MODEL_ICX_COUNT ? icx_names[i] : "?";
}

model_gpu_arch model_gpu_arch_of(const model_gpu *g)
{
    for (int a = 0; a < MODEL_ARCH_COUNT; a++)
        if (!strcmp(g->arch, arch_names[a])) return (model_gpu_arch)a;
    return MODEL_ARCH_COUNT;
}

int model_gpu_has_tcgen05(const model_gpu *g)
{
    return model_gpu_arch_of(g) == MODEL_ARCH_BLACKWELL;
}

int model_gpu_has_block_scaled_mma(const model_gpu *g)
{
    model_gpu_arch a = model_gpu_arch_of(g);
    return a == MODEL_ARCH_BLACKWELL || a == MODEL_ARCH_RTX_BLACKWELL;
}

int model_gpu_nvswitch(const model_gpu *g)
{
    return g->interconnect_id == MODEL_ICX_NVLINK && g->nvlink_bw > 0;
}

double model_gpu_pcie_bw(const model_gpu *g)
{
    return g->host_bw * g->eff_pcie;
}

double model_gpu_peer_link_bw(const model_gpu *g)
{
    return model_gpu_nvswitch(g) ? g->nvlink_bw : g->host_bw;
}
