/* sim_session_stats — see sim_session_stats.h. Sketches share the request
 * latency sketches' ratio (sim_metrics.c), so their percentiles carry the
 * same relative error; their range reaches 1e12 ms (the request sketches
 * stop at 1e9) because a session's latency spans all its think gaps. */
#include "sim_session_stats.h"
#include "sim_sketch.h"

#include <stdlib.h>
#include <string.h>

#define SS_MIN_MS 1e-6
#define SS_MAX_MS 1e12
#define SS_RATIO 1.001

typedef struct {
    sim_sketch *ttft;
    double input, cached;
} ss_bin;

struct sim_session_stats {
    ss_bin bins[SIM_SESSION_TURN_BINS];
    sim_sketch *latency;
    int64_t subs, dropped, turns_of_ended;
};

sim_session_stats *sim_session_stats_create(void)
{
    sim_session_stats *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (!(s->latency = sim_sketch_create(SS_MIN_MS, SS_MAX_MS, SS_RATIO))) goto fail;
    for (int i = 0; i < SIM_SESSION_TURN_BINS; i++)
        if (!(s->bins[i].ttft = sim_sketch_create(SS_MIN_MS, SS_MAX_MS, SS_RATIO))) goto fail;
    return s;
fail:
    sim_session_stats_destroy(s);
    return NULL;
}

void sim_session_stats_destroy(sim_session_stats *s)
{
    if (!s) return;
    sim_sketch_destroy(s->latency);
    for (int i = 0; i < SIM_SESSION_TURN_BINS; i++) sim_sketch_destroy(s->bins[i].ttft);
    free(s);
}

int sim_session_stats_add_turn(sim_session_stats *s, int32_t turn, sim_time arrival, sim_time first_token,
                               int32_t input_tokens, int32_t cached_tokens)
{
    if (turn < 0 || first_token < arrival || input_tokens < 0 || cached_tokens < 0 || cached_tokens > input_tokens)
        return SIM_EINVAL;
    ss_bin *b = &s->bins[turn < SIM_SESSION_TURN_BINS ? turn : SIM_SESSION_TURN_BINS - 1];
    b->input += input_tokens;
    b->cached += cached_tokens;
    return sim_sketch_add(b->ttft, (double)(first_token - arrival) / 1e6, 1);
}

void sim_session_stats_add_sub(sim_session_stats *s)
{
    s->subs++;
}

void sim_session_stats_add_dropped(sim_session_stats *s)
{
    s->dropped++;
}

int sim_session_stats_add_session(sim_session_stats *s, sim_time start, sim_time end, int32_t turns)
{
    if (end < start || turns < 1) return SIM_EINVAL;
    s->turns_of_ended += turns;
    return sim_sketch_add(s->latency, (double)(end - start) / 1e6, 1);
}

static void ss_stat(const sim_sketch *k, sim_stat *st)
{
    memset(st, 0, sizeof *st);
    st->n = (int64_t)sim_sketch_count(k);
    if (st->n == 0) return;
    st->mean = sim_sketch_sum(k) / (double)st->n;
    st->p50 = sim_sketch_quantile_interp(k, 0.5);
    st->p90 = sim_sketch_quantile_interp(k, 0.9);
    st->p99 = sim_sketch_quantile_interp(k, 0.99);
    st->p999 = sim_sketch_quantile_interp(k, 0.999);
}

void sim_session_stats_summarize(const sim_session_stats *s, sim_session_summary *out)
{
    memset(out, 0, sizeof *out);
    out->enabled = 1;
    ss_stat(s->latency, &out->latency_ms);
    out->completed = out->latency_ms.n;
    out->sub_requests = s->subs;
    out->dropped = s->dropped;
    out->turns_per_session = out->completed ? (double)s->turns_of_ended / (double)out->completed : 0;
    for (int i = 0; i < SIM_SESSION_TURN_BINS; i++) {
        const ss_bin *b = &s->bins[i];
        sim_turn_summary *t = &out->by_turn[i];
        ss_stat(b->ttft, &t->ttft_ms);
        t->n = t->ttft_ms.n;
        out->turns += t->n;
        if (t->n == 0) continue;
        out->n_turn_bins = i + 1;
        t->cache_hit_rate = b->input > 0 ? b->cached / b->input : 0;
        t->cached_tokens_mean = b->cached / (double)t->n;
        t->input_tokens_mean = b->input / (double)t->n;
    }
}
