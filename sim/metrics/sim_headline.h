/* sim_headline — the headline figures of a run, by name: what
 * `servesim run --replications` gives an interval for and `servesim
 * sensitivity` compares. Names follow the summary's JSON keys (dotted for
 * nested ones); three are derived:
 *   goodput_tok_s_per_gpu  output tokens/s per GPU over the run (first arrival to
 *                          last completion) × the SLO attainment
 *   slo_attainment         requests within the SLO / requests completed (0..1)
 * Pure functions, no heap, except sim_headline_json's object (the caller's). */
#ifndef SIM_HEADLINE_H
#define SIM_HEADLINE_H

#include "sim_metrics.h"

#include <jansson.h>

typedef enum {
    SIM_HL_TTFT_MEAN = 0, SIM_HL_TTFT_P50, SIM_HL_TTFT_P90, SIM_HL_TTFT_P99, SIM_HL_TTFT_P999,
    SIM_HL_TPOT_MEAN, SIM_HL_TPOT_P50, SIM_HL_TPOT_P90, SIM_HL_TPOT_P99, SIM_HL_TPOT_P999,
    SIM_HL_E2E_MEAN, SIM_HL_E2E_P50, SIM_HL_E2E_P90, SIM_HL_E2E_P99, SIM_HL_E2E_P999,
    SIM_HL_REQ_PER_S, SIM_HL_OUT_TOK_S, SIM_HL_OUT_TOK_S_GPU,
    SIM_HL_GOODPUT_REQ_S, SIM_HL_GOODPUT_TOK_S_GPU, SIM_HL_SLO_ATTAINMENT,
    SIM_HL_COUNT
} sim_headline;

/* JSON-style key ("ttft_ms.p99"), and a label for tables ("TTFT p99 (ms)"). */
const char *sim_headline_key(sim_headline h);
const char *sim_headline_label(sim_headline h);

/* Every figure of s, in sim_headline order, into v[SIM_HL_COUNT]; NAN for
 * a latency with no sample (TPOT when every answer is one token). */
void sim_headline_values(const sim_summary *s, double v[SIM_HL_COUNT]);

/* The SLO attainment of s: requests within the SLO / requests completed
 * (0 when none completed). */
double sim_headline_attainment(const sim_summary *s);

/* v[SIM_HL_COUNT] as one JSON object, key by key in sim_headline order, a
 * non-finite figure as null; a new reference (NULL on ENOMEM). */
json_t *sim_headline_json(const double v[SIM_HL_COUNT]);

#endif
