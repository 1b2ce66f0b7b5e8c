/* model_layout — see model_layout.h. */
#include "model_layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const sp_names[] = {"ulysses", "ring"};
static const char *const ep_names[MODEL_EP_MODES] = {"auto", "normal", "low_latency", "alltoall", "allgather"};
static const char *const gemm_names[] = {"auto", "contiguous", "masked"};

model_layout model_layout_resolved(const model_layout *in)
{
    model_layout l = *in;
    if (l.dp < 1) l.dp = 1;
    if (l.ep < 1) l.ep = 1;
    if (l.dcp < 1) l.dcp = 1;
    if (l.sp < 1) l.sp = 1;
    if (l.micro_batches < 1) l.micro_batches = l.pp;
    if (l.moe_tp < 1 && l.tp > 0 && (l.tp * l.dp) % l.ep == 0) l.moe_tp = l.tp * l.dp / l.ep;
    if (l.gpus_per_node < 1) l.gpus_per_node = 8;
    for (int f = 0; f < MODEL_FAM_COUNT; f++)
        if (l.op_speedup[f] == 0) l.op_speedup[f] = 1;
    return l;
}

int32_t model_layout_gpus(const model_layout *in)
{
    model_layout l = model_layout_resolved(in);
    return l.tp * l.pp * l.dp * l.sp;
}

const char *model_sp_kind_name(model_sp_kind k)
{
    return (int)k >= 0 && (int)k < 2 ? sp_names[k] : "?";
}

const char *model_ep_mode_name(model_ep_mode m)
{
    return (int)m >= 0 && (int)m < MODEL_EP_MODES ? ep_names[m] : "?";
}

const char *model_moe_gemm_name(model_moe_gemm g)
{
    return (int)g >= 0 && (int)g < 3 ? gemm_names[g] : "?";
}
