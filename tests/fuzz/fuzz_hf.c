/* fuzz_hf — libFuzzer target for the Hugging Face config loader: the bytes
 * up to the first 0x01 are a config.json, the rest (when present) its
 * ModelOpt hf_quant.json. Neither may crash or leak; a loaded model must be
 * self-consistent (positive sizes, active <= total parameters, finite
 * weight and KV bytes) and every error must say something. */
#include "model_hf.h"
#include "model_spec.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *quant = memchr(buf, 0x01, size);
    if (quant) *quant++ = 0;
    model_spec m;
    sim_err err;
    err.msg[0] = 0;
    int rc = model_hf_parse_quant(buf, quant, "fuzz.json", &m, &err);
    if (rc == 0) {
        if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.vocab < 1) abort();
        if (!(m.params > 0) || !(m.active_params > 0) || m.active_params > m.params * (1 + 1e-12)) abort();
        if (m.linear_layers < 0 || m.linear_layers >= m.layers || m.moe_layers > m.layers) abort();
        double w = model_spec_weight_bytes(&m, -1, NULL);
        if (!isfinite(w) || !(w > 0)) abort();
        if (!isfinite(model_spec_kv_bytes_per_token(&m, 2.0)) || !isfinite(model_spec_state_bytes_per_seq(&m)))
            abort();
    } else if (err.msg[0] == '\0') {
        abort();
    }
    free(buf);
    return 0;
}
