/* fuzz_trace — libFuzzer target for the trace parsers: the same bytes are
 * parsed as Mooncake JSONL and as CSV. Neither may crash, leak or leave a
 * half-built trace behind on error; a parsed trace must be self-consistent. */
#include "sim_trace.h"

#include <stdint.h>
#include <stdlib.h>

static void fuzz_check(const sim_trace *t)
{
    int64_t hashes = 0;
    if (t->n < 1) abort();
    for (int64_t i = 0; i < t->n; i++) {
        const sim_trace_entry *e = &t->entries[i];
        if (e->input_tokens < 1 || e->output_tokens < 1 || e->n_hash < 0) abort();
        if (!(e->timestamp_s >= 0) || (i > 0 && e->timestamp_s < t->entries[i - 1].timestamp_s)) abort();
        if (e->hash_off != hashes) abort();
        hashes += e->n_hash;
    }
    if (hashes != t->n_hashes) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sim_trace_format fmts[2] = {SIM_TRACE_MOONCAKE, SIM_TRACE_CSV};
    for (int i = 0; i < 2; i++) {
        sim_err err;
        sim_trace *t = NULL;
        int rc = sim_trace_parse((const char *)data, size, "fuzz", fmts[i], &t, &err);
        if ((rc == 0) != (t != NULL)) abort();
        if (rc == 0) {
            fuzz_check(t);
            sim_trace_destroy(t);
        } else if (err.msg[0] == '\0') {
            abort(); /* every error must say something */
        }
    }
    return 0;
}
