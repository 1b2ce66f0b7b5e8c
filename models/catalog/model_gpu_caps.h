/* model_gpu_caps — what a catalogue GPU's architecture and interconnect
 * allow: the `arch` and `interconnect` keys of the GPU catalogue files (models/gpus), parsed
 * and checked against the compute capability, and the feature questions
 * the cost model asks of them (which tensor-core paths exist, which link
 * carries a collective between GPUs of one node).
 *
 * Architectures (CUDA compute capability in brackets):
 *   ampere         A100 (8.0; 8.6/8.7 parts): bf16 tensor cores, no fp8.
 *   ada            L40S, L40, L4 (8.9): fp8 tensor cores through mma.sync,
 *                  no wgmma, no TMA multicast, no block-scaled MMA.
 *   hopper         H100, H200, H800, H20 (9.0): fp8 through wgmma; the fp8
 *                  MMA has no scale operands (block fp8 promotes on the
 *                  CUDA cores, model_dtype_promote_frac).
 *   blackwell      B200, B300, GB200, GB300 (10.x): tcgen05 MMAs with
 *                  tensor memory, block-scaled fp8/fp6/fp4 (MX, NVFP4).
 *   rtx-blackwell  RTX PRO Blackwell (12.x): block-scaled fp8/fp4 through
 *                  mma.sync, no tcgen05 and no tensor memory, so none of
 *                  the kernels written for it (TensorRT-LLM-gen, FlashMLA,
 *                  DeepGEMM's SM100 path) run.
 *
 * Interconnects (between the GPUs of one node):
 *   nvlink         every GPU reaches every other over NVLink (NVSwitch);
 *   nvlink-bridge  NVLink bridges join groups of nvlink_bridge_gpus GPUs
 *                  (H100 PCIe/NVL: pairs; H200 NVL: 2 or 4); a group of
 *                  more GPUs, or one strided across bridges, goes over PCIe;
 *   pcie           no NVLink: GPUs talk over PCIe at host_gbps.
 *
 * Pure functions over model_gpu; no heap, no state. Parse functions return
 * 0 or SIM_EINVAL with a message naming the key. */
#ifndef MODEL_GPU_CAPS_H
#define MODEL_GPU_CAPS_H

#include "model_catalog.h"
#include "sim_err.h"

typedef enum {
    MODEL_ARCH_AMPERE = 0,
    MODEL_ARCH_ADA = 1,
    MODEL_ARCH_HOPPER = 2,
    MODEL_ARCH_BLACKWELL = 3,
    MODEL_ARCH_RTX_BLACKWELL = 4,
    MODEL_ARCH_COUNT
} model_gpu_arch;

typedef enum {
    MODEL_ICX_NVLINK = 0,
    MODEL_ICX_NVLINK_BRIDGE = 1,
    MODEL_ICX_PCIE = 2,
    MODEL_ICX_COUNT
} model_gpu_icx;

/* `arch` of origin's file into *out; an unknown name or a cc outside the
 * architecture's range (ampere 8.0-8.7, ada 8.9, hopper 9.x, blackwell
 * 10.x-11.x, rtx-blackwell 12.x) is SIM_EINVAL naming the key. */
int model_gpu_arch_parse(const char *name, double cc, const char *origin, model_gpu_arch *out, sim_err *err);
const char *model_gpu_arch_name(model_gpu_arch a);

/* `interconnect` ("" = nvlink when nvlink_gbps > 0, else pcie) into *out. */
int model_gpu_icx_parse(const char *name, double nvlink_bw, const char *origin, model_gpu_icx *out, sim_err *err);
const char *model_gpu_icx_name(model_gpu_icx i);

/* g->arch as an enum (MODEL_ARCH_COUNT for a name the loader would refuse:
 * a model_gpu built by hand). */
model_gpu_arch model_gpu_arch_of(const model_gpu *g);

/* tcgen05 tensor cores with tensor memory (datacenter Blackwell): block
 * scales consumed by the MMA, the kernels written for SM100. */
int model_gpu_has_tcgen05(const model_gpu *g);

/* Block-scaled (MX / NVFP4) tensor-core MMAs: Blackwell, both kinds. */
int model_gpu_has_block_scaled_mma(const model_gpu *g);

/* Every GPU of a node reaches every other over NVLink (an NVSwitch
 * fabric): the measured collective tables and fitted collective sets,
 * all taken on such nodes, apply. */
int model_gpu_nvswitch(const model_gpu *g);

/* Bytes/s one GPU sends to a peer of its node that its NVLink does not
 * reach (or any peer, without NVLink): the PCIe link, one direction, at
 * the PCIe bus-bandwidth efficiency. */
double model_gpu_pcie_bw(const model_gpu *g);

/* The link rate (one direction, datasheet) to any peer of the node:
 * NVLink behind an NVSwitch, else PCIe (host_gbps): the cluster network's
 * intra-node GPU links (sim_net_topo). */
double model_gpu_peer_link_bw(const model_gpu *g);

#endif
