/* sim_headline — see sim_headline.h. */
#include "sim_headline.h"

#include <math.h>

static const struct {
    const char *key, *label;
} figs[SIM_HL_COUNT] = {
    {"ttft_ms.mean", "TTFT mean (ms)"},
    {"ttft_ms.p50", "TTFT p50 (ms)"},
    {"ttft_ms.p90", "TTFT p90 (ms)"},
    {"ttft_ms.p99", "TTFT p99 (ms)"},
    {"ttft_ms.p999", "TTFT p99.9 (ms)"},
    {"tpot_ms.mean", "TPOT mean (ms)"},
    {"tpot_ms.p50", "TPOT p50 (ms)"},
    {"tpot_ms.p90", "TPOT p90 (ms)"},
    {"tpot_ms.p99", "TPOT p99 (ms)"},
    {"tpot_ms.p999", "TPOT p99.9 (ms)"},
    {"e2e_ms.mean", "E2E mean (ms)"},
    {"e2e_ms.p50", "E2E p50 (ms)"},
    {"e2e_ms.p90", "E2E p90 (ms)"},
    {"e2e_ms.p99", "E2E p99 (ms)"},
    {"e2e_ms.p999", "E2E p99.9 (ms)"},
    {"throughput.req_per_s", "throughput (req/s)"},
    {"throughput.output_tokens_per_s", "output tok/s"},
    {"throughput.output_tokens_per_s_per_gpu", "output tok/s/GPU"},
    {"goodput_req_per_s", "goodput (req/s)"},
    {"goodput_tok_s_per_gpu", "goodput tok/s/GPU"},
    {"slo_attainment", "SLO attainment"},
};

const char *sim_headline_key(sim_headline h) { return (int)h >= 0 && h < SIM_HL_COUNT ? figs[h].key : "?"; }
const char *sim_headline_label(sim_headline h) { return (int)h >= 0 && h < SIM_HL_COUNT ? figs[h].label : "?"; }

static void stat5(const sim_stat *st, double *v)
{
    if (st->n <= 0) {
        for (int i = 0; i < 5; i++) v[i] = NAN;
        return;
    }
    v[0] = st->mean, v[1] = st->p50, v[2] = st->p90, v[3] = st->p99, v[4] = st->p999;
}

double sim_headline_attainment(const sim_summary *s)
{
    return s->requests_completed > 0 ? (double)s->requests_good / (double)s->requests_completed : 0;
}

void sim_headline_values(const sim_summary *s, double v[SIM_HL_COUNT])
{
    stat5(&s->ttft_ms, v + SIM_HL_TTFT_MEAN);
    stat5(&s->tpot_ms, v + SIM_HL_TPOT_MEAN);
    stat5(&s->e2e_ms, v + SIM_HL_E2E_MEAN);
    v[SIM_HL_REQ_PER_S] = s->req_per_s;
    v[SIM_HL_OUT_TOK_S] = s->output_tokens_per_s;
    v[SIM_HL_OUT_TOK_S_GPU] = s->output_tokens_per_s_per_gpu;
    v[SIM_HL_GOODPUT_REQ_S] = s->goodput_req_per_s;
    double att = sim_headline_attainment(s);
    v[SIM_HL_GOODPUT_TOK_S_GPU] = s->output_tokens_per_s_per_gpu * att;
    v[SIM_HL_SLO_ATTAINMENT] = att;
}

json_t *sim_headline_json(const double v[SIM_HL_COUNT])
{
    json_t *o = json_object();
    for (int h = 0; h < SIM_HL_COUNT; h++)
        json_object_set_new(o, figs[h].key, isfinite(v[h]) ? json_real(v[h]) : json_null());
    return o;
}
