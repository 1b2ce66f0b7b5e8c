/* sim_fidelity_consistency — flags the measured aggregated rows that
 * contradict their own deployment's other rows (sim_fidelity.h,
 * sim_fidelity_flag_inconsistent). Owns nothing; writes only the rows'
 * `inconsistent` reasons. Cannot fail.
 *
 * The physics: in a closed loop of c clients a request spends TTFT waiting
 * for its first token and D = (mean output length − 1) × TPOT decoding, so
 * (Little's law) c·D / (TTFT + D) requests are decoding at any time. A
 * decode step of a larger batch is never faster than one of a smaller batch
 * of the same deployment (same backend, model, GPU, dtype, layout, input and
 * output lengths and client). A row whose measured TPOT is below
 * FID_TPOT_FLOOR of the TPOT the same deployment measured with fewer clients
 * than that decoding count cannot be a run of c clients all served: on
 * silicon-dev.csv these are vLLM gpt-oss-120b H100 runs at 512 clients
 * (20–24 s TTFT with a TPOT of 4.5–5.6 ms, the speed of 4–8 clients, where
 * 88–92 must have been decoding and 64 clients measured 9.7–16.7 ms). The
 * bound leaves run-to-run noise and configuration drift between runs of one
 * sweep alone: at 0.7 it would also take TensorRT-LLM B200 DeepSeek-R1 pairs
 * whose 4-client run decodes 1.4–1.7× slower than its 8-client run (an MTP
 * setting that differs between the runs, which nothing in the CSV marks).
 * Such rows are simulated and scored apart (their error is the run's, not
 * the model's), never dropped. */
#include "sim_fidelity.h"

#include <stdio.h>
#include <string.h>

/* A batch at least as large decoding in under this fraction of the smaller
 * batch's step time is no measurement of that batch. */
#define FID_TPOT_FLOOR 0.5

static int same_deployment(const sim_fidelity_row *a, const sim_fidelity_row *b)
{
    return !strcmp(a->backend, b->backend) && !strcmp(a->model, b->model) && !strcmp(a->gpu, b->gpu) &&
           !strcmp(a->dtype, b->dtype) && a->isl == b->isl && a->osl == b->osl && a->len_lo == b->len_lo &&
           a->agg.tp == b->agg.tp && a->agg.pp == b->agg.pp && a->agg.dp == b->agg.dp &&
           a->agg.moe_tp == b->agg.moe_tp && a->agg.ep == b->agg.ep;
}

/* Requests decoding at once in the row's closed loop (Little's law). */
static double decoding(const sim_fidelity_row *r)
{
    double mean_osl = r->osl * (1.0 + r->len_lo) / 2.0;
    double d = (mean_osl > 1 ? mean_osl - 1 : 0) * r->meas_tpot_ms;
    return d > 0 ? r->concurrency * d / (r->meas_ttft_ms + d) : 0;
}

void sim_fidelity_flag_inconsistent(sim_fidelity_result *out)
{
    for (int32_t i = 0; i < out->n_rows; i++) {
        sim_fidelity_row *r = &out->rows[i];
        if (r->disagg || r->note[0] || !(r->meas_tpot_ms > 0) || !(r->meas_ttft_ms > 0)) continue;
        double n = decoding(r);
        const sim_fidelity_row *worst = NULL;
        for (int32_t k = 0; k < out->n_rows; k++) {
            const sim_fidelity_row *s = &out->rows[k];
            if (k == i || s->disagg || s->note[0] || s->concurrency >= r->concurrency || s->concurrency > n ||
                !same_deployment(r, s) || !(r->meas_tpot_ms < FID_TPOT_FLOOR * s->meas_tpot_ms))
                continue;
            if (!worst || s->concurrency > worst->concurrency) worst = s;
        }
        if (worst)
            snprintf(r->inconsistent, sizeof r->inconsistent,
                     "TPOT %.2f ms with %.0f of %d clients decoding (Little's law) is under half the %.2f ms "
                     "this deployment measured with %d clients",
                     r->meas_tpot_ms, n, r->concurrency, worst->meas_tpot_ms, worst->concurrency);
    }
}
