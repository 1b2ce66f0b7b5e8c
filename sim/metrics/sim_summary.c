/* sim_summary — printing a sim_summary as JSON or as a table, and walking
 * its numeric fields (the results store flattens them with this).
 *
 * The JSON keeps a layout of its own rather than a jansson dump: its values
 * go through sim/base's sim_json (the one writer of hand-laid-out JSON), so
 * the number format is fixed: reals as %.9g (enough to round-trip the
 * figures people compare, short enough to read), integers as integers, and
 * never "nan" or "inf" — a non-finite value is written as null. Top-level
 * keys go one per line so tools (and tests) can drop the `wall_time_s` line,
 * the only field that differs between two runs of the same scenario. The C
 * locale is assumed (the library never calls setlocale). */
#include "sim_json.h"
#include "sim_metrics.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const stat_keys[] = {"mean", "p50", "p90", "p99", "p999", "n"};

static double stat_field(const sim_stat *st, int i)
{
    switch (i) {
    case 0: return st->mean;
    case 1: return st->p50;
    case 2: return st->p90;
    case 3: return st->p99;
    case 4: return st->p999;
    default: return (double)st->n;
    }
}

typedef struct {
    const char *key;
    size_t off;
} stat_desc;

static const stat_desc stat_descs[] = {
    {"ttft_ms", offsetof(sim_summary, ttft_ms)}, {"tpot_ms", offsetof(sim_summary, tpot_ms)},
    {"itl_ms", offsetof(sim_summary, itl_ms)},   {"e2e_ms", offsetof(sim_summary, e2e_ms)},
    {"queue_ms", offsetof(sim_summary, queue_ms)},
};
#define N_STATS (sizeof stat_descs / sizeof stat_descs[0])

static const sim_stat *stat_at(const sim_summary *s, size_t i)
{
    return (const sim_stat *)((const char *)s + stat_descs[i].off);
}

/* The six fields of one statistic as "<key>.mean" ... "<key>.n". */
static int emit_stat(sim_summary_metric_fn fn, void *ctx, const char *key, const sim_stat *st)
{
    char name[128];
    int rc;
    for (int j = 0; j < 6; j++) {
        snprintf(name, sizeof name, "%s.%s", key, stat_keys[j]);
        if ((rc = fn(name, stat_field(st, j), ctx))) return rc;
    }
    return 0;
}

/* The metrics of a summary as fn sees them (the results store's rows), one
 * part per function in the order given; EMIT returns fn's non-zero answer. */
#define EMIT(n, v)                                       \
    do {                                                 \
        if ((rc = fn((n), (double)(v), ctx))) return rc; \
    } while (0)

/* Counts, latency statistics, throughput, times and cluster means. */
static int metrics_head(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    int rc;
    EMIT("requests_completed", s->requests_completed);
    EMIT("requests_good", s->requests_good);
    EMIT("requests_rejected", s->requests_rejected);
    if (s->shed_reported) EMIT("requests_shed", s->requests_shed);
    if (s->client_pool > 0) EMIT("requests_client_waited", s->client_waited);
    EMIT("preemptions", s->preemptions);
    for (size_t i = 0; i < N_STATS; i++)
        if ((rc = emit_stat(fn, ctx, stat_descs[i].key, stat_at(s, i)))) return rc;
    EMIT("throughput.req_per_s", s->req_per_s);
    EMIT("throughput.input_tokens_per_s", s->input_tokens_per_s);
    EMIT("throughput.output_tokens_per_s", s->output_tokens_per_s);
    EMIT("throughput.output_tokens_per_s_per_gpu", s->output_tokens_per_s_per_gpu);
    EMIT("goodput_req_per_s", s->goodput_req_per_s);
    EMIT("sim_time_s", s->sim_time_s);
    EMIT("wall_time_s", s->wall_time_s);
    EMIT("events", s->events);
    EMIT("n_gpus", s->n_gpus);
    EMIT("overloaded", s->overloaded ? 1 : 0);
    EMIT("mean_utilization", s->mean_utilization);
    EMIT("mean_kv_occupancy", s->mean_kv_occupancy);
    EMIT("cache_hit_rate", s->cache_hit_rate);
    EMIT("load_cv", s->load_cv);
    return 0;
}

static int metrics_pools(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    char name[64];
    int rc;
    for (int32_t p = 0; p < s->n_pools && p < SIM_MAX_POOLS; p++) {
        snprintf(name, sizeof name, "pools.%d.utilization", (int)p);
        EMIT(name, s->pools[p].utilization);
        snprintf(name, sizeof name, "pools.%d.kv_occupancy", (int)p);
        EMIT(name, s->pools[p].kv_occupancy);
        snprintf(name, sizeof name, "pools.%d.waiting", (int)p);
        EMIT(name, s->pools[p].waiting);
        snprintf(name, sizeof name, "pools.%d.mean_batch", (int)p);
        EMIT(name, s->pools[p].mean_batch);
        snprintf(name, sizeof name, "pools.%d.max_seqs", (int)p);
        EMIT(name, s->pools[p].max_seqs);
        snprintf(name, sizeof name, "pools.%d.instances", (int)p);
        EMIT(name, s->pools[p].instances);
        /* the role as its sim_role number (0 colocated, 1 prefill, 2 decode, 3 attention, 4 ffn) */
        int role = -1;
        for (int r = 0; r <= SIM_ROLE_FFN; r++)
            if (strcmp(sim_role_name((sim_role)r), s->pools[p].role) == 0) role = r;
        snprintf(name, sizeof name, "pools.%d.role", (int)p);
        EMIT(name, role);
    }
    return 0;
}

/* The PD hand-over, the records kept and the AF split. */
static int metrics_pd_af(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    char name[64];
    int rc;
    if (s->pd.enabled) {
        EMIT("pd.moved", s->pd.moved);
        EMIT("pd.kv_bytes_moved", s->pd.kv_bytes_moved);
        /* transfer and back-pressure interleaved, field by field (the DB's row order) */
        for (int j = 0; j < 6; j++) {
            snprintf(name, sizeof name, "pd.transfer_ms.%s", stat_keys[j]);
            EMIT(name, stat_field(&s->pd.transfer_ms, j));
            snprintf(name, sizeof name, "pd.backpressure_ms.%s", stat_keys[j]);
            EMIT(name, stat_field(&s->pd.backpressure_ms, j));
        }
        EMIT("pd.ttft_queue_ms", s->pd.ttft_queue_ms);
        EMIT("pd.ttft_prefill_ms", s->pd.ttft_prefill_ms);
        EMIT("pd.first_decode_ms", s->pd.first_decode_ms);
    }
    if (s->records.capped) {
        EMIT("records.requests_kept", s->records.requests_kept);
        EMIT("records.samples_kept", s->records.samples_kept);
        EMIT("records.samples", s->records.samples);
        EMIT("records.relative_error", s->records.sketch_rel_error);
    }
    if (s->af.enabled) {
        EMIT("af.micro_batches", s->af.micro_batches);
        EMIT("af.attention_util", s->af.attention_util);
        EMIT("af.ffn_util", s->af.ffn_util);
        EMIT("af.comm_fraction", s->af.comm_fraction);
        EMIT("af.activation_bytes", s->af.activation_bytes);
        EMIT("af.transfer_ms_per_iter", s->af.transfer_ms_per_iter);
    }
    return 0;
}

static int metrics_sessions(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    char name[64];
    int rc;
    if (s->sessions.enabled) {
        const sim_session_summary *ss = &s->sessions;
        EMIT("sessions.completed", ss->completed);
        EMIT("sessions.turns", ss->turns);
        EMIT("sessions.sub_requests", ss->sub_requests);
        EMIT("sessions.dropped", ss->dropped);
        EMIT("sessions.turns_per_session", ss->turns_per_session);
        if ((rc = emit_stat(fn, ctx, "sessions.latency_ms", &ss->latency_ms))) return rc;
        for (int32_t t = 0; t < ss->n_turn_bins && t < SIM_SESSION_TURN_BINS; t++) {
            const sim_turn_summary *ts = &ss->by_turn[t];
            snprintf(name, sizeof name, "sessions.turn%d.ttft_ms", (int)t + 1);
            if ((rc = emit_stat(fn, ctx, name, &ts->ttft_ms))) return rc;
            snprintf(name, sizeof name, "sessions.turn%d.cache_hit_rate", (int)t + 1);
            EMIT(name, ts->cache_hit_rate);
            snprintf(name, sizeof name, "sessions.turn%d.cached_tokens_mean", (int)t + 1);
            EMIT(name, ts->cached_tokens_mean);
        }
    }
    return 0;
}

/* The frontend and detokenizer workers, the encoders and the energy model. */
static int metrics_workers_energy(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    int rc;
    if (s->frontend.enabled) {
        EMIT("frontend.workers", s->frontend.workers);
        EMIT("frontend.jobs", s->frontend.jobs);
        EMIT("frontend.wait_ms", s->frontend.wait_ms);
        EMIT("frontend.service_ms", s->frontend.service_ms);
        EMIT("frontend.utilization", s->frontend.utilization);
    }
    if (s->detok.enabled) {
        EMIT("detokenizer.workers", s->detok.workers);
        EMIT("detokenizer.jobs", s->detok.jobs);
        EMIT("detokenizer.tokens", s->detok.tokens);
        EMIT("detokenizer.wait_ms", s->detok.wait_ms);
        EMIT("detokenizer.service_ms", s->detok.service_ms);
        EMIT("detokenizer.utilization", s->detok.utilization);
    }
    if (s->encode.enabled) {
        const sim_encode_summary *en = &s->encode;
        EMIT("encode.pool", en->pool);
        EMIT("encode.encoders", en->encoders);
        EMIT("encode.tokens_per_item", en->tokens_per_item);
        EMIT("encode.requests", en->requests);
        EMIT("encode.items", en->items);
        EMIT("encode.tokens", en->tokens);
        EMIT("encode.encode_ms", en->encode_ms);
        EMIT("encode.wait_ms", en->wait_ms);
        EMIT("encode.transfer_ms", en->transfer_ms);
        EMIT("encode.embedding_bytes", en->embedding_bytes);
        EMIT("encode.utilization", en->utilization);
        EMIT("encode.ttft_share", en->ttft_share);
    }
    if (s->energy.enabled) {
        EMIT("energy.joules", s->energy.joules);
        EMIT("energy.joules_per_output_token", s->energy.joules_per_output_token);
        EMIT("energy.mean_power_w", s->energy.mean_power_w);
        EMIT("energy.joules_per_request", s->energy.joules_per_request);
        EMIT("energy.joules_per_million_tokens", s->energy.joules_per_million_tokens);
        EMIT("energy.kwh_per_million_output_tokens", s->energy.kwh_per_million_output_tokens);
        EMIT("energy.gpu_idle_joules", s->energy.gpu_idle_j);
        EMIT("energy.gpu_dynamic_joules", s->energy.gpu_dynamic_j);
        EMIT("energy.host_joules", s->energy.host_j);
    }
    return 0;
}

static int metrics_classes(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    char name[64 + SIM_CLASS_NAME_MAX];
    int rc;
    for (int32_t c = 0; c < s->n_classes && c < SIM_MAX_CLASSES; c++) {
        const sim_class_summary *cs = &s->classes[c];
#define CLASS_EMIT(key, v)                                                  \
    do {                                                                    \
        snprintf(name, sizeof name, "classes.%s.%s", cs->name, (key));      \
        EMIT(name, (v));                                                    \
    } while (0)
        CLASS_EMIT("priority", cs->priority);
        CLASS_EMIT("requests_completed", cs->requests_completed);
        CLASS_EMIT("requests_good", cs->requests_good);
        CLASS_EMIT("requests_shed", cs->requests_shed);
        CLASS_EMIT("requests_rejected", cs->requests_rejected);
        CLASS_EMIT("slo_attainment", cs->slo_attainment);
        CLASS_EMIT("goodput_req_per_s", cs->goodput_req_per_s);
        CLASS_EMIT("req_per_s", cs->req_per_s);
        CLASS_EMIT("input_tokens_per_s", cs->input_tokens_per_s);
        CLASS_EMIT("output_tokens_per_s", cs->output_tokens_per_s);
        const sim_stat *cst[4] = {&cs->ttft_ms, &cs->tpot_ms, &cs->e2e_ms, &cs->queue_ms};
        static const char *const ckeys[4] = {"ttft_ms", "tpot_ms", "e2e_ms", "queue_ms"};
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "classes.%s.%s", cs->name, ckeys[i]);
            if ((rc = emit_stat(fn, ctx, name, cst[i]))) return rc;
        }
#undef CLASS_EMIT
    }
    return 0;
}
#undef EMIT

int sim_summary_each_metric(const sim_summary *s, sim_summary_metric_fn fn, void *ctx)
{
    int rc;
    if ((rc = metrics_head(s, fn, ctx)) || (rc = metrics_pools(s, fn, ctx)) || (rc = metrics_pd_af(s, fn, ctx)) ||
        (rc = metrics_sessions(s, fn, ctx)) || (rc = metrics_workers_energy(s, fn, ctx)))
        return rc;
    if (s->autoscale.enabled && (rc = sim_autoscale_each_metric(&s->autoscale, fn, ctx))) return rc;
    return metrics_classes(s, fn, ctx);
}

/* Significant digits of every real in the summary's JSON. */
#define SUMMARY_DIGITS 9

static void put_stat(FILE *f, const char *key, const sim_stat *st)
{
    fprintf(f, "  \"%s\": {", key);
    for (int j = 0; j < 5; j++) {
        fprintf(f, "\"%s\": ", stat_keys[j]);
        sim_json_real(f, NULL, stat_field(st, j), SUMMARY_DIGITS);
        fputs(", ", f);
    }
    fprintf(f, "\"n\": %lld},\n", (long long)st->n);
}

/* "key": {"mean": .., ..., "n": ..} without the trailing separator. */
static void put_stat_inline(FILE *f, const char *key, const sim_stat *st)
{
    fprintf(f, "\"%s\": {", key);
    for (int j = 0; j < 5; j++) {
        fprintf(f, "%s\"%s\": ", j ? ", " : "", stat_keys[j]);
        sim_json_real(f, NULL, stat_field(st, j), SUMMARY_DIGITS);
    }
    fprintf(f, ", \"n\": %lld}", (long long)st->n);
}

/* A run of reals in one object, each printed after its key text (which
 * carries the separator before it; NULL: the value alone). */
typedef struct {
    const char *key;
    double v;
} json_real_kv;
#define PUT_REALS(f, ...)                                                                             \
    put_reals((f), (const json_real_kv[]){__VA_ARGS__},                                                \
              sizeof((const json_real_kv[]){__VA_ARGS__}) / sizeof(json_real_kv))

static void put_reals(FILE *f, const json_real_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) sim_json_real(f, kv[i].key, kv[i].v, SUMMARY_DIGITS);
}

/* run --json, one section per function in the order printed: each section
 * after the first starts with its ",\n" (a section a run does not have
 * prints nothing, so other runs print what they always printed). */

/* Counts, latency statistics, throughput, times and the overload verdict. */
static void json_head(FILE *f, const sim_summary *s)
{
    fputs("{\n", f);
    fprintf(f, "  \"requests_completed\": %lld,\n", (long long)s->requests_completed);
    fprintf(f, "  \"requests_good\": %lld,\n", (long long)s->requests_good);
    fprintf(f, "  \"requests_rejected\": %lld,\n", (long long)s->requests_rejected);
    if (s->shed_reported) fprintf(f, "  \"requests_shed\": %lld,\n", (long long)s->requests_shed);
    if (s->client_pool > 0) {
        fprintf(f, "  \"client_pool\": {\"connections\": %d, \"requests_waited\": %lld, ", s->client_pool,
                (long long)s->client_waited);
        sim_json_real(f, "\"mean_wait_ms\": ", s->client_wait_mean_ms, SUMMARY_DIGITS);
        fputs("},\n", f);
    }
    fprintf(f, "  \"preemptions\": %lld,\n", (long long)s->preemptions);
    for (size_t i = 0; i < N_STATS; i++) put_stat(f, stat_descs[i].key, stat_at(s, i));
    sim_json_real(f, "  \"throughput\": {\"req_per_s\": ", s->req_per_s, SUMMARY_DIGITS);
    sim_json_real(f, ", \"input_tokens_per_s\": ", s->input_tokens_per_s, SUMMARY_DIGITS);
    sim_json_real(f, ", \"output_tokens_per_s\": ", s->output_tokens_per_s, SUMMARY_DIGITS);
    sim_json_real(f, ", \"output_tokens_per_s_per_gpu\": ", s->output_tokens_per_s_per_gpu, SUMMARY_DIGITS);
    sim_json_real(f, "},\n  \"goodput_req_per_s\": ", s->goodput_req_per_s, SUMMARY_DIGITS);
    sim_json_real(f, ",\n  \"sim_time_s\": ", s->sim_time_s, SUMMARY_DIGITS);
    /* wall_time_s sits mid-object (never last) so deleting its line leaves
     * valid JSON. */
    sim_json_real(f, ",\n  \"wall_time_s\": ", s->wall_time_s, SUMMARY_DIGITS);
    fprintf(f, ",\n  \"events\": %llu,\n", (unsigned long long)s->events);
    fprintf(f, "  \"n_gpus\": %d,\n", (int)s->n_gpus);
    fprintf(f, "  \"overloaded\": %s,\n", s->overloaded ? "true" : "false");
    fputs("  \"overload_reason\": ", f);
    if (s->overloaded && s->overload_reason[0]) {
        char reason[sizeof s->overload_reason + 1];
        /* The field may be full without a terminator. */
        memcpy(reason, s->overload_reason, sizeof s->overload_reason);
        reason[sizeof s->overload_reason] = 0;
        sim_json_string(f, reason);
    } else {
        fputs("null", f);
    }
}

/* The cluster's means and each pool's. */
static void json_pools(FILE *f, const sim_summary *s)
{
    sim_json_real(f, ",\n  \"mean_utilization\": ", s->mean_utilization, SUMMARY_DIGITS);
    sim_json_real(f, ",\n  \"mean_kv_occupancy\": ", s->mean_kv_occupancy, SUMMARY_DIGITS);
    sim_json_real(f, ",\n  \"cache_hit_rate\": ", s->cache_hit_rate, SUMMARY_DIGITS);
    sim_json_real(f, ",\n  \"load_cv\": ", s->load_cv, SUMMARY_DIGITS);
    fputs(",\n  \"pools\": [", f);
    for (int32_t p = 0; p < s->n_pools && p < SIM_MAX_POOLS; p++) {
        const sim_pool_summary *ps = &s->pools[p];
        fprintf(f, "%s{\"role\": ", p ? ", " : "");
        sim_json_string(f, ps->role);
        fprintf(f, ", \"instances\": %d, \"gpus\": %d, \"utilization\": ", (int)ps->instances, (int)ps->gpus);
        sim_json_real(f, NULL, ps->utilization, SUMMARY_DIGITS);
        sim_json_real(f, ", \"kv_occupancy\": ", ps->kv_occupancy, SUMMARY_DIGITS);
        sim_json_real(f, ", \"waiting\": ", ps->waiting, SUMMARY_DIGITS);
        sim_json_real(f, ", \"mean_batch\": ", ps->mean_batch, SUMMARY_DIGITS);
        fprintf(f, ", \"max_seqs\": %d}", (int)ps->max_seqs);
    }
    fputs("]", f);
}

/* The PD hand-over and the attention-FFN split. */
static void json_pd_af(FILE *f, const sim_summary *s)
{
    if (s->pd.enabled) {
        fprintf(f, ",\n  \"pd\": {\"moved\": %lld, \"kv_bytes_moved\": ", (long long)s->pd.moved);
        sim_json_real(f, NULL, s->pd.kv_bytes_moved, SUMMARY_DIGITS);
        fputs(",\n    ", f);
        put_stat_inline(f, "transfer_ms", &s->pd.transfer_ms);
        fputs(",\n    ", f);
        put_stat_inline(f, "backpressure_ms", &s->pd.backpressure_ms);
        sim_json_real(f, ",\n    \"ttft_queue_ms\": ", s->pd.ttft_queue_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"ttft_prefill_ms\": ", s->pd.ttft_prefill_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"first_decode_ms\": ", s->pd.first_decode_ms, SUMMARY_DIGITS);
        fputs("}", f);
    }
    if (s->af.enabled) {
        fprintf(f, ",\n  \"af\": {\"micro_batches\": %d, \"attention_util\": ", (int)s->af.micro_batches);
        sim_json_real(f, NULL, s->af.attention_util, SUMMARY_DIGITS);
        sim_json_real(f, ", \"ffn_util\": ", s->af.ffn_util, SUMMARY_DIGITS);
        sim_json_real(f, ", \"comm_fraction\": ", s->af.comm_fraction, SUMMARY_DIGITS);
        sim_json_real(f, ", \"activation_bytes\": ", s->af.activation_bytes, SUMMARY_DIGITS);
        sim_json_real(f, ", \"transfer_ms_per_iter\": ", s->af.transfer_ms_per_iter, SUMMARY_DIGITS);
        fputs("}", f);
    }
}

static void json_sessions(FILE *f, const sim_session_summary *ss)
{
    if (!ss->enabled) return;
    fprintf(f, ",\n  \"sessions\": {\"completed\": %lld, \"turns\": %lld, \"sub_requests\": %lld, "
               "\"dropped\": %lld, \"turns_per_session\": ",
            (long long)ss->completed, (long long)ss->turns, (long long)ss->sub_requests, (long long)ss->dropped);
    sim_json_real(f, NULL, ss->turns_per_session, SUMMARY_DIGITS);
    fputs(",\n    ", f);
    put_stat_inline(f, "latency_ms", &ss->latency_ms);
    fputs(",\n    \"by_turn\": [", f);
    for (int32_t t = 0; t < ss->n_turn_bins && t < SIM_SESSION_TURN_BINS; t++) {
        const sim_turn_summary *ts = &ss->by_turn[t];
        fprintf(f, "%s\n      {\"turn\": %d, \"n\": %lld, ", t ? "," : "", (int)t + 1, (long long)ts->n);
        put_stat_inline(f, "ttft_ms", &ts->ttft_ms);
        sim_json_real(f, ", \"cache_hit_rate\": ", ts->cache_hit_rate, SUMMARY_DIGITS);
        sim_json_real(f, ", \"cached_tokens_mean\": ", ts->cached_tokens_mean, SUMMARY_DIGITS);
        sim_json_real(f, ", \"input_tokens_mean\": ", ts->input_tokens_mean, SUMMARY_DIGITS);
        fputs("}", f);
    }
    fputs("]}", f);
}

/* The frontend and detokenizer workers, the encoders, the energy model and
 * the records kept. */
static void json_workers_energy(FILE *f, const sim_summary *s)
{
    /* Only with tokenizer_workers, so other runs print what they always printed. */
    if (s->frontend.enabled) {
        fprintf(f, ",\n  \"frontend\": {\"workers\": %d, \"jobs\": %lld, \"wait_ms\": ", (int)s->frontend.workers,
                (long long)s->frontend.jobs);
        sim_json_real(f, NULL, s->frontend.wait_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"service_ms\": ", s->frontend.service_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"utilization\": ", s->frontend.utilization, SUMMARY_DIGITS);
        fputs("}", f);
    }
    /* Only with detokenizer_workers, so other runs print what they always printed. */
    if (s->detok.enabled) {
        fprintf(f, ",\n  \"detokenizer\": {\"workers\": %d, \"jobs\": %lld, \"tokens\": %lld, \"wait_ms\": ",
                (int)s->detok.workers, (long long)s->detok.jobs, (long long)s->detok.tokens);
        sim_json_real(f, NULL, s->detok.wait_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"service_ms\": ", s->detok.service_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"utilization\": ", s->detok.utilization, SUMMARY_DIGITS);
        fputs("}", f);
    }
    /* Only with workload.images, so other runs print what they always printed. */
    if (s->encode.enabled) {
        const sim_encode_summary *en = &s->encode;
        fprintf(f, ",\n  \"encode\": {\"family\": \"%s\", \"pool\": %s, \"encoders\": %d, \"tokens_per_item\": %lld, "
                   "\"requests\": %lld, \"items\": %lld, \"tokens\": %lld, \"encode_ms\": ",
                en->family, en->pool ? "true" : "false", (int)en->encoders, (long long)en->tokens_per_item,
                (long long)en->requests, (long long)en->items, (long long)en->tokens);
        PUT_REALS(f, {NULL, en->encode_ms}, {", \"wait_ms\": ", en->wait_ms}, {", \"transfer_ms\": ", en->transfer_ms},
                  {", \"embedding_bytes\": ", en->embedding_bytes}, {", \"utilization\": ", en->utilization},
                  {", \"ttft_share\": ", en->ttft_share});
        fputs("}", f);
    }
    /* Only with energy.enabled, so other runs print what they always printed. */
    if (s->energy.enabled) {
        const sim_energy_summary *e = &s->energy;
        sim_json_real(f, ",\n  \"energy\": {\"joules\": ", e->joules, SUMMARY_DIGITS);
        sim_json_real(f, ", \"joules_per_output_token\": ", e->joules_per_output_token, SUMMARY_DIGITS);
        sim_json_real(f, ", \"mean_power_w\": ", e->mean_power_w, SUMMARY_DIGITS);
        sim_json_real(f, ",\n    \"joules_per_request\": ", e->joules_per_request, SUMMARY_DIGITS);
        sim_json_real(f, ", \"joules_per_million_tokens\": ", e->joules_per_million_tokens, SUMMARY_DIGITS);
        sim_json_real(f, ", \"kwh_per_million_output_tokens\": ", e->kwh_per_million_output_tokens, SUMMARY_DIGITS);
        sim_json_real(f, ",\n    \"gpu_idle_joules\": ", e->gpu_idle_j, SUMMARY_DIGITS);
        sim_json_real(f, ", \"gpu_dynamic_joules\": ", e->gpu_dynamic_j, SUMMARY_DIGITS);
        sim_json_real(f, ", \"host_joules\": ", e->host_j, SUMMARY_DIGITS);
        fputs("}", f);
    }
    /* Only when something was not kept, so runs under the caps print what
     * they always printed. */
    if (s->records.capped) {
        fprintf(f, ",\n  \"records\": {\"requests_kept\": %lld, \"samples_kept\": %lld, \"samples\": %lld, "
                   "\"percentiles\": \"%s\", \"relative_error\": ",
                (long long)s->records.requests_kept, (long long)s->records.samples_kept,
                (long long)s->records.samples, s->records.sketch_rel_error > 0 ? "sketch" : "exact");
        sim_json_real(f, NULL, s->records.sketch_rel_error, SUMMARY_DIGITS);
        fputs("}", f);
    }
}

static void json_classes(FILE *f, const sim_summary *s)
{
    if (s->n_classes <= 0) return;
    fputs(",\n  \"classes\": {", f);
    for (int32_t c = 0; c < s->n_classes && c < SIM_MAX_CLASSES; c++) {
        const sim_class_summary *cs = &s->classes[c];
        fputs(c ? ",\n    " : "\n    ", f);
        sim_json_string(f, cs->name);
        fprintf(f, ": {\"priority\": %d, \"slo\": {\"ttft_ms\": ", (int)cs->priority);
        sim_json_real(f, NULL, cs->slo.ttft_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"tpot_ms\": ", cs->slo.tpot_ms, SUMMARY_DIGITS);
        sim_json_real(f, ", \"e2e_ms\": ", cs->slo.e2e_ms, SUMMARY_DIGITS);
        fprintf(f, "}, \"requests_completed\": %lld, \"requests_good\": %lld, \"requests_shed\": %lld, "
                   "\"requests_rejected\": %lld,\n      ",
                (long long)cs->requests_completed, (long long)cs->requests_good, (long long)cs->requests_shed,
                (long long)cs->requests_rejected);
        put_stat_inline(f, "ttft_ms", &cs->ttft_ms);
        fputs(",\n      ", f);
        put_stat_inline(f, "tpot_ms", &cs->tpot_ms);
        fputs(",\n      ", f);
        put_stat_inline(f, "e2e_ms", &cs->e2e_ms);
        fputs(",\n      ", f);
        put_stat_inline(f, "queue_ms", &cs->queue_ms);
        PUT_REALS(f, {",\n      \"goodput_req_per_s\": ", cs->goodput_req_per_s},
                  {", \"slo_attainment\": ", cs->slo_attainment}, {", \"req_per_s\": ", cs->req_per_s},
                  {", \"input_tokens_per_s\": ", cs->input_tokens_per_s},
                  {", \"output_tokens_per_s\": ", cs->output_tokens_per_s});
        fputs("}", f);
    }
    fputs("\n  }", f);
}

void sim_summary_print_json(FILE *f, const sim_summary *s)
{
    json_head(f, s);
    json_pools(f, s);
    json_pd_af(f, s);
    json_sessions(f, &s->sessions);
    json_workers_energy(f, s);
    if (s->autoscale.enabled) {
        fputs(",\n  \"autoscale\": ", f);
        sim_autoscale_print_json(f, &s->autoscale);
    }
    json_classes(f, s);
    fputs("\n}\n", f);
}

/* A table cell: fixed width, two decimals, "-" for no data. */
static void put_cell(FILE *f, double v, int have)
{
    if (!have || !isfinite(v))
        fprintf(f, " %10s", "-");
    else
        fprintf(f, " %10.2f", v);
}

static const char *scenario_gpu(const sim_scenario *sc, char *buf, size_t len)
{
    const char *g = sim_scenario_gpu_label(sc, buf, len);
    return g[0] ? g : "-";
}

double sim_summary_batch_headroom(const sim_pool_summary *p)
{
    if (p->max_seqs <= 0) return 0;
    double h = 100.0 * (1.0 - p->mean_batch / p->max_seqs);
    return h < 0 ? 0 : h;
}

int32_t sim_summary_fullest_pool(const sim_summary *s)
{
    int32_t best = 0;
    for (int32_t p = 1; p < s->n_pools && p < SIM_MAX_POOLS; p++)
        if (s->pools[p].max_seqs > 0 &&
            (s->pools[best].max_seqs <= 0 ||
             s->pools[p].mean_batch / s->pools[p].max_seqs > s->pools[best].mean_batch / s->pools[best].max_seqs))
            best = p;
    return best;
}

/* The run's table, one part per function in the order printed. */

/* What ran, the request counts and the latency table. */
static void table_head(FILE *f, const sim_summary *s, const sim_scenario *sc)
{
    if (sc) {
        char gl[4 * SIM_NAME_MAX];
        fprintf(f, "scenario   %s\n", sc->name[0] ? sc->name : "(unnamed)");
        fprintf(f, "model      %s\n", sc->model[0] ? sc->model : "-");
        fprintf(f, "gpu        %s x %d   mode %s\n", scenario_gpu(sc, gl, sizeof gl), (int)s->n_gpus,
                sim_mode_name(sc->deployment.mode));
    } else {
        fprintf(f, "gpus       %d\n", (int)s->n_gpus);
    }
    fprintf(f, "requests   %lld completed, %lld within SLO, %lld preemptions",
            (long long)s->requests_completed, (long long)s->requests_good,
            (long long)s->preemptions);
    if (s->requests_rejected)
        fprintf(f, ", %lld rejected (never fit an instance's KV cache)",
                (long long)s->requests_rejected);
    fputc('\n', f);
    fprintf(f, "sim time   %.3f s   wall %.3f s   events %llu\n\n", s->sim_time_s,
            s->wall_time_s, (unsigned long long)s->events);

    fprintf(f, "%-10s %10s %10s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p99",
            "p99.9", "n");
    static const char *const labels[N_STATS] = {"TTFT", "TPOT", "ITL", "E2E", "queue"};
    for (size_t i = 0; i < N_STATS; i++) {
        const sim_stat *st = stat_at(s, i);
        fprintf(f, "%-10s", labels[i]);
        for (int j = 0; j < 5; j++) put_cell(f, stat_field(st, j), st->n > 0);
        fprintf(f, " %10lld\n", (long long)st->n);
    }
}

/* Throughput and goodput (with the SLO it was judged by), and what
 * `servesim search` would rank the run by. */
static void table_rates(FILE *f, const sim_summary *s, const sim_scenario *sc)
{
    fprintf(f, "\nthroughput %.3f req/s   %.1f input tok/s   %.1f output tok/s   "
               "%.1f output tok/s/GPU\n",
            s->req_per_s, s->input_tokens_per_s, s->output_tokens_per_s,
            s->output_tokens_per_s_per_gpu);
    fprintf(f, "goodput    %.3f req/s", s->goodput_req_per_s);
    if (sc && sc->workload.n_classes > 0) {
        fputs("   (each request judged by its class's SLO: see the classes below)", f);
    } else if (sc && (sc->slo.ttft_ms > 0 || sc->slo.tpot_ms > 0 || sc->slo.e2e_ms > 0)) {
        fputs("   (SLO:", f);
        if (sc->slo.ttft_ms > 0) fprintf(f, " TTFT <= %g ms", sc->slo.ttft_ms);
        if (sc->slo.ttft_ms > 0 && sc->slo.tpot_ms > 0) fputs(",", f);
        if (sc->slo.tpot_ms > 0) fprintf(f, " TPOT <= %g ms", sc->slo.tpot_ms);
        if (sc->slo.e2e_ms > 0) fprintf(f, "%s E2E <= %g ms", sc->slo.ttft_ms + sc->slo.tpot_ms > 0 ? "," : "",
                                        sc->slo.e2e_ms);
        fputs(")", f);
    } else if (sc) {
        fputs("   (no SLO set)", f);
    }
    fputs("\n", f);
    /* What `servesim search` ranks by, beside the measured throughput above
     * (which spans first arrival to last completion: the drain included). */
    if (sc && sc->slo.ttft_ms + sc->slo.tpot_ms > 0 && sc->workload.trace.format == SIM_TRACE_NONE &&
        sc->workload.sessions.count == 0 &&
        sc->workload.n_classes == 0 &&
        (sc->workload.arrival.process == SIM_ARRIVAL_POISSON || sc->workload.arrival.process == SIM_ARRIVAL_GAMMA ||
         sc->workload.arrival.process == SIM_ARRIVAL_CONSTANT) &&
        s->requests_completed > 0 && s->req_per_s > 0 && s->n_gpus > 0)
        fprintf(f, "           %.1f output tok/s/GPU meeting the SLO at the offered %.4g req/s (what `servesim search` "
                   "ranks by; the\n           throughput above spans first arrival to last completion, the drain "
                   "included)\n",
                sc->workload.arrival.rate * (double)s->requests_good / (double)s->requests_completed *
                    (s->output_tokens_per_s / s->req_per_s) / s->n_gpus,
                sc->workload.arrival.rate);
}

/* Utilisation, KV, cache hits, load imbalance, batch and the pools. */
static void table_pools(FILE *f, const sim_summary *s)
{
    fprintf(f, "utilization %.1f %%   KV occupancy %.1f %% (means over instances and time)\n",
            100 * s->mean_utilization, 100 * s->mean_kv_occupancy);
    if (s->cache_hit_rate > 0)
        fprintf(f, "prefix cache hit rate %.1f %% of prompt tokens\n", 100 * s->cache_hit_rate);
    fprintf(f, "load imbalance (CV of tokens per instance) %.3f\n", s->load_cv);
    if (s->n_pools == 1)
        fprintf(f, "batch      mean %.1f of max_seqs %d running requests per instance (headroom %.0f %%)\n",
                s->pools[0].mean_batch, (int)s->pools[0].max_seqs, sim_summary_batch_headroom(&s->pools[0]));
    if (s->n_pools > 1) {
        fputs("\npool        role        instances  GPUs   util   KV occ  queued      batch\n", f);
        for (int32_t p = 0; p < s->n_pools && p < SIM_MAX_POOLS; p++)
            fprintf(f, "%-11d %-11s %9d %5d %5.1f%% %6.1f%% %7.1f %5.0f/%-4d\n", (int)p, s->pools[p].role,
                    (int)s->pools[p].instances, (int)s->pools[p].gpus, 100 * s->pools[p].utilization,
                    100 * s->pools[p].kv_occupancy, s->pools[p].waiting, s->pools[p].mean_batch,
                    (int)s->pools[p].max_seqs);
    }
}

/* The PD hand-over and the sessions. */
static void table_pd_sessions(FILE *f, const sim_summary *s)
{
    if (s->pd.enabled) {
        fprintf(f, "\nKV moved   %lld requests, %.3f GB; transfer ms mean %.2f p50 %.2f p99 %.2f; "
                   "back-pressure ms mean %.2f p99 %.2f\n",
                (long long)s->pd.moved, s->pd.kv_bytes_moved / 1e9, s->pd.transfer_ms.mean,
                s->pd.transfer_ms.p50, s->pd.transfer_ms.p99, s->pd.backpressure_ms.mean,
                s->pd.backpressure_ms.p99);
        fprintf(f, "TTFT       = queue %.2f + prefill %.2f ms (means); then back-pressure %.2f + "
                   "transfer %.2f + first decode step %.2f ms\n",
                s->pd.ttft_queue_ms, s->pd.ttft_prefill_ms, s->pd.backpressure_ms.mean,
                s->pd.transfer_ms.mean, s->pd.first_decode_ms);
    }
    if (s->sessions.enabled) {
        const sim_session_summary *ss = &s->sessions;
        fprintf(f, "\nsessions   %lld ended, %.2f turns each; %lld turns, %lld sub-requests", (long long)ss->completed,
                ss->turns_per_session, (long long)ss->turns, (long long)ss->sub_requests);
        if (ss->dropped) fprintf(f, ", %lld dropped (never fit)", (long long)ss->dropped);
        fprintf(f, "\n%-10s %10s %10s %10s %10s %10s %10s\n", "session ms", "mean", "p50", "p90", "p99", "p99.9",
                "n");
        fprintf(f, "%-10s", "latency");
        for (int j = 0; j < 5; j++) put_cell(f, stat_field(&ss->latency_ms, j), ss->latency_ms.n > 0);
        fprintf(f, " %10lld\n", (long long)ss->latency_ms.n);
        fprintf(f, "%-10s %10s %10s %10s %10s %10s %10s %10s\n", "turn", "n", "TTFT mean", "p50", "p90", "p99",
                "hit %", "prompt");
        for (int32_t t = 0; t < ss->n_turn_bins && t < SIM_SESSION_TURN_BINS; t++) {
            const sim_turn_summary *ts = &ss->by_turn[t];
            char lab[16];
            snprintf(lab, sizeof lab, t == SIM_SESSION_TURN_BINS - 1 ? "%d+" : "%d", (int)t + 1);
            fprintf(f, "%-10s %10lld", lab, (long long)ts->n);
            for (int j = 0; j < 4; j++) put_cell(f, stat_field(&ts->ttft_ms, j), ts->n > 0);
            put_cell(f, 100 * ts->cache_hit_rate, ts->n > 0);
            fprintf(f, " %10.0f\n", ts->input_tokens_mean);
        }
    }
}

/* The AF split, the frontend and detokenizer workers, the encoders and the
 * energy model. */
static void table_workers_energy(FILE *f, const sim_summary *s)
{
    if (s->af.enabled)
        fprintf(f, "\nAF         %d micro-batches: attention side busy %.1f %%, FFN side busy %.1f %%, "
                   "activation transfers %.1f %% of iteration time (%.3f ms/iteration, %.3f GB)\n",
                (int)s->af.micro_batches, 100 * s->af.attention_util, 100 * s->af.ffn_util,
                100 * s->af.comm_fraction, s->af.transfer_ms_per_iter, s->af.activation_bytes / 1e9);
    if (s->frontend.enabled)
        fprintf(f, "\nfrontend   %d API-server workers: %lld requests, wait for a worker %.3f ms + service %.3f ms "
                   "(means, in TTFT), workers busy %.1f %%\n",
                (int)s->frontend.workers, (long long)s->frontend.jobs, s->frontend.wait_ms, s->frontend.service_ms,
                100 * s->frontend.utilization);
    if (s->detok.enabled)
        fprintf(f, "%sdetokenizer %d workers: %lld jobs (%lld tokens), wait for a worker %.3f ms + service %.3f ms "
                   "(means per job, in TTFT/TPOT/E2E), workers busy %.1f %%\n",
                s->frontend.enabled ? "" : "\n", (int)s->detok.workers, (long long)s->detok.jobs,
                (long long)s->detok.tokens, s->detok.wait_ms,
                s->detok.service_ms, 100 * s->detok.utilization);
    if (s->encode.enabled) {
        const sim_encode_summary *en = &s->encode;
        fprintf(f, "\nencode     %s tower %s: %lld requests, %lld items x %lld tokens; encoder pass %.3f ms per request",
                en->family, en->pool ? "in an encode pool" : "in the instance", (long long)en->requests,
                (long long)en->items, (long long)en->tokens_per_item, en->encode_ms);
        if (en->pool)
            fprintf(f, " + wait %.3f ms + embedding transfer %.3f ms (%.3f GB); %d encoders busy %.1f %%",
                    en->wait_ms, en->transfer_ms, en->embedding_bytes / 1e9, (int)en->encoders,
                    100 * en->utilization);
        fprintf(f, "\n           %.1f %% of mean TTFT\n", 100 * en->ttft_share);
    }
    if (s->energy.enabled) {
        const sim_energy_summary *e = &s->energy;
        const double T = e->span_s > 0 ? e->span_s : 1;
        fprintf(f, "\nenergy     %.4g kJ over %.3f s: mean %.0f W (GPUs idle %.0f + dynamic %.0f W, hosts %.0f W)\n",
                e->joules / 1e3, e->span_s, e->mean_power_w, e->gpu_idle_j / T, e->gpu_dynamic_j / T, e->host_j / T);
        fprintf(f, "           %.4g J per output token, %.4g kWh per million output tokens, %.4g J per request\n",
                e->joules_per_output_token, e->kwh_per_million_output_tokens, e->joules_per_request);
    }
}

/* What was not kept, what was shed, the classes and the overload verdict. */
static void table_records_classes(FILE *f, const sim_summary *s)
{
    if (s->records.capped && s->records.sketch_rel_error > 0)
        fprintf(f, "\nrecords    %lld of %lld requests kept (output.request_records): percentiles from a sketch, "
                   "within %.2g %%; counts, means and rates exact\n",
                (long long)s->records.requests_kept, (long long)s->requests_completed,
                100 * s->records.sketch_rel_error);
    if (s->records.capped && s->records.samples_kept < s->records.samples)
        fprintf(f, "%ssamples    %lld of %lld kept for the time series (output.sample_records); means over all\n",
                s->records.sketch_rel_error > 0 ? "" : "\n", (long long)s->records.samples_kept,
                (long long)s->records.samples);
    if (s->shed_reported)
        fprintf(f, "admission  %lld requests shed (workload.admission, class buckets)\n", (long long)s->requests_shed);
    if (s->client_pool > 0)
        fprintf(f, "clients    %lld requests waited for one of the %d connections (workload.arrival.max_connections), "
                   "%.2f ms on average, in their TTFT and E2E\n",
                (long long)s->client_waited, s->client_pool, s->client_wait_mean_ms);
    if (s->n_classes > 0) {
        fprintf(f, "\n%-14s %4s %9s %6s %8s %9s %6s %8s %10s %10s %10s %10s\n", "class", "prio", "completed", "shed",
                "req/s", "out tok/s", "SLO %", "goodput", "TTFT p50", "TTFT p99", "TPOT p50", "E2E p99");
        for (int32_t c = 0; c < s->n_classes && c < SIM_MAX_CLASSES; c++) {
            const sim_class_summary *cs = &s->classes[c];
            fprintf(f, "%-14s %4d %9lld %6lld %8.3f %9.1f %6.1f %8.3f", cs->name, (int)cs->priority,
                    (long long)cs->requests_completed, (long long)cs->requests_shed, cs->req_per_s,
                    cs->output_tokens_per_s, 100 * cs->slo_attainment, cs->goodput_req_per_s);
            put_cell(f, cs->ttft_ms.p50, cs->ttft_ms.n > 0);
            put_cell(f, cs->ttft_ms.p99, cs->ttft_ms.n > 0);
            put_cell(f, cs->tpot_ms.p50, cs->tpot_ms.n > 0);
            put_cell(f, cs->e2e_ms.p99, cs->e2e_ms.n > 0);
            fputc('\n', f);
        }
        fputs("(ms; req/s completed, output tok/s and goodput (req/s within the class's SLO) over the run's span)\n",
              f);
    }
    if (s->overloaded)
        fprintf(f, "WARNING: overloaded, run stopped early: %.*s\n",
                (int)sizeof s->overload_reason,
                s->overload_reason[0] ? s->overload_reason : "queues grew without bound");
}

void sim_summary_print_table(FILE *f, const sim_summary *s, const sim_scenario *sc)
{
    table_head(f, s, sc);
    table_rates(f, s, sc);
    table_pools(f, s);
    table_pd_sessions(f, s);
    table_workers_energy(f, s);
    if (s->autoscale.enabled) sim_autoscale_print_table(f, &s->autoscale, s->requests_completed, s->requests_good);
    table_records_classes(f, s);
}
