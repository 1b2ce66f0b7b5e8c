/* sim_metrics — see sim_metrics.h.
 *
 * Requests and samples live in growable arrays (amortised doubling, 96 and
 * 48 bytes per entry) up to their caps, so a million requests cost ~96 MB
 * and no per-request allocation. Past the request cap the run is
 * "streamed": the kept records are replayed once into per-metric sketches
 * (sim_sketch) and running sums, every later request goes only there, and
 * the summary is read from them. Below the cap the summary is computed from
 * the records exactly as before (exact percentiles). Sample sums are always
 * running sums (in arrival order, so they equal a pass over the samples).
 * Inter-token latency is not stored per token or per iteration: a run can
 * have tens of millions of iterations, so each iteration adds its duration
 * with weight n_decode into a log-spaced sketch (see ITL_* below) and
 * weighted quantiles are read from it. */
#include "sim_metrics.h"

#include "sim_sketch.h"

#include <gsl/gsl_statistics_double.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ITL sketch: bin 0 holds [0, 1 µs), log bins of ratio r = 1.001 up to
 * 1000 s, and the last bin holds everything >= 1000 s. A quantile is the
 * geometric centre of the bin that holds the requested rank, clamped to the
 * exact observed min/max, so it is within 0.1 % (relative) of the exact
 * weighted quantile between 1 µs and 1000 s, and within 1 µs (absolute)
 * below 1 µs. The mean is exact (the sketch's running sum). */
#define ITL_MIN_NS 1000.0
#define ITL_MAX_NS 1e12
#define ITL_RATIO 1.001

/* Request-metric sketches past the record cap, in ms: 1 ns .. ~11.6 days,
 * ratio 1.001, so a percentile is within sqrt(1.001) − 1 = 0.05 % of the
 * exact one (SIM_METRICS_SKETCH_REL_ERROR). 34,557 bins, 276 kB each. */
#define REQ_MIN_MS 1e-6
#define REQ_MAX_MS 1e9
#define REQ_RATIO 1.001

enum { ST_TTFT, ST_TPOT, ST_E2E, ST_QUEUE, ST_PD_TRANSFER, ST_PD_BACKPRESSURE, N_ST };

/* A statistic streamed past the cap: the sketch and the mean by GSL's own
 * recurrence (gsl_stats_mean), in long double, so the mean is the one a
 * pass over all records would give. */
typedef struct {
    sim_sketch *sk;
    long double mean;
    int64_t n;
} stream_stat;

/* Everything the summary needs from requests, kept by running sums once the
 * records stop. */
typedef struct {
    int64_t n;
    sim_time t0, t1;
    int64_t in_tok, out_tok, good, preempt, cached;
    double *load;        /* tokens served per instance (record.instance) */
    double *routed_load; /* per instance the request was routed to (prefill instance in pd) */
    stream_stat st[N_ST];
    double pd_kv_bytes, pd_q, pd_pf, pd_fd;
    int64_t pd_nfd;
} req_stream;

struct sim_metrics {
    int32_t n_instances;
    sim_req_record *req;
    int64_t n_req, cap_req, max_req; /* kept, allocated, cap (INT64_MAX: no cap) */
    sim_sample *smp;
    int64_t n_smp, cap_smp, max_smp;
    int64_t seen_smp;                /* samples added, kept or not */
    sim_sketch *itl;                 /* token-weighted iteration durations, ns */
    sim_slo_cfg slo;                 /* for the streamed good count */
    int has_slo;
    req_stream *rs;                  /* NULL while every request is kept */
    /* Sample sums in arrival order, overall and per group (pool). */
    double smp_util, smp_kv;
    int32_t n_groups;
    int32_t *group_of;               /* n_instances entries */
    double *g_util, *g_kv, *g_wait, *g_batch;
    int64_t *g_cnt;
    sim_metrics_observer_fn observer;  /* sees every record added (NULL = none) */
    void *observer_ctx;
};

sim_metrics *sim_metrics_create(int32_t n_instances)
{
    sim_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->n_instances = n_instances < 0 ? 0 : n_instances;
    m->max_req = INT64_MAX;
    m->max_smp = INT64_MAX;
    m->itl = sim_sketch_create(ITL_MIN_NS, ITL_MAX_NS, ITL_RATIO);
    if (!m->itl) goto fail;
    return m;
fail:
    sim_metrics_destroy(m);
    return NULL;
}

static void stream_free(req_stream *rs)
{
    if (!rs) return;
    free(rs->load);
    free(rs->routed_load);
    for (int i = 0; i < N_ST; i++) sim_sketch_destroy(rs->st[i].sk);
    free(rs);
}

void sim_metrics_destroy(sim_metrics *m)
{
    if (!m) return;
    free(m->req);
    free(m->smp);
    sim_sketch_destroy(m->itl);
    stream_free(m->rs);
    free(m->group_of);
    free(m->g_util);
    free(m->g_kv);
    free(m->g_wait);
    free(m->g_batch);
    free(m->g_cnt);
    free(m);
}

int sim_metrics_set_limits(sim_metrics *m, int64_t max_requests, int64_t max_samples, const sim_slo_cfg *slo)
{
    if (!m || max_requests < 0 || max_samples < 0 || m->n_req > 0 || m->rs || m->seen_smp > 0)
        return SIM_EINVAL;
    m->max_req = max_requests;
    m->max_smp = max_samples;
    m->has_slo = slo != NULL;
    if (slo) m->slo = *slo;
    return 0;
}

int sim_metrics_set_groups(sim_metrics *m, int32_t n_groups, const int32_t *group_of)
{
    if (!m || n_groups < 1 || !group_of || m->seen_smp > 0 || m->group_of) return SIM_EINVAL;
    for (int32_t i = 0; i < m->n_instances; i++)
        if (group_of[i] < 0 || group_of[i] >= n_groups) return SIM_EINVAL;
    size_t ni = (size_t)(m->n_instances > 0 ? m->n_instances : 1), ng = (size_t)n_groups;
    m->group_of = malloc(ni * sizeof *m->group_of);
    m->g_util = calloc(ng, sizeof *m->g_util);
    m->g_kv = calloc(ng, sizeof *m->g_kv);
    m->g_wait = calloc(ng, sizeof *m->g_wait);
    m->g_batch = calloc(ng, sizeof *m->g_batch);
    m->g_cnt = calloc(ng, sizeof *m->g_cnt);
    if (!m->group_of || !m->g_util || !m->g_kv || !m->g_wait || !m->g_batch || !m->g_cnt) {
        free(m->group_of);
        m->group_of = NULL;
        return SIM_ENOMEM;
    }
    if (m->n_instances > 0) memcpy(m->group_of, group_of, (size_t)m->n_instances * sizeof *group_of);
    m->n_groups = n_groups;
    return 0;
}

/* Grows *arr (elements of size sz) so it holds at least n + 1 entries,
 * never more than max (> n). */
static int grow(void **arr, int64_t *cap, int64_t n, int64_t max, size_t sz)
{
    if (n < *cap) return 0;
    int64_t nc = *cap ? (*cap > max / 2 ? max : *cap * 2) : (max < 1024 ? max : 1024);
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return SIM_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

static double ns_to_ms(sim_time t) { return (double)t / (double)SIM_NS_PER_MS; }

int sim_metrics_request_tpot_ms(const sim_req_record *r, double *out)
{
    if (r->output_tokens < 2) return 0;
    *out = ns_to_ms(sim_req_record_last_seen(r) - sim_req_record_first_seen(r)) / (double)(r->output_tokens - 1);
    return 1;
}

/* A request meets every bound of slo (NULL: no bound); a one-token reply
 * has no TPOT, so it cannot miss a TPOT bound. */
int sim_metrics_request_good(const sim_req_record *r, const sim_slo_cfg *slo)
{
    double ttft_bound = slo && slo->ttft_ms > 0 ? slo->ttft_ms : 0;
    double tpot_bound = slo && slo->tpot_ms > 0 ? slo->tpot_ms : 0;
    double e2e_bound = slo && slo->e2e_ms > 0 ? slo->e2e_ms : 0;
    double ttft = ns_to_ms(sim_req_record_first_seen(r) - r->arrival), tpot = 0;
    int has_tpot = sim_metrics_request_tpot_ms(r, &tpot);
    return (ttft_bound <= 0 || ttft <= ttft_bound) && (tpot_bound <= 0 || !has_tpot || tpot <= tpot_bound) &&
           (e2e_bound <= 0 || ns_to_ms(sim_req_record_last_seen(r) - r->arrival) <= e2e_bound);
}

static int stream_stat_add(stream_stat *st, double v)
{
    st->n++;
    st->mean += (v - st->mean) / (long double)st->n;
    return sim_sketch_add(st->sk, v, 1);
}

/* One request into the running sums (the order of the records). */
static int stream_add(sim_metrics *m, const sim_req_record *r)
{
    req_stream *rs = m->rs;
    rs->n++;
    if (r->arrival < rs->t0) rs->t0 = r->arrival;
    if (sim_req_record_last_seen(r) > rs->t1) rs->t1 = sim_req_record_last_seen(r);
    rs->in_tok += r->input_tokens;
    rs->out_tok += r->output_tokens;
    rs->preempt += r->preemptions;
    rs->cached += r->cached_tokens;
    rs->good += sim_metrics_request_good(r, m->has_slo ? &m->slo : NULL);
    double tokens = (double)r->input_tokens + r->output_tokens;
    if (r->instance >= 0 && r->instance < m->n_instances) rs->load[r->instance] += tokens;
    int32_t k = r->prefill_instance >= 0 ? r->prefill_instance : r->instance;
    if (k >= 0 && k < m->n_instances) rs->routed_load[k] += tokens;
    int rc = stream_stat_add(&rs->st[ST_TTFT], ns_to_ms(sim_req_record_first_seen(r) - r->arrival));
    double tpot;
    if (!rc && sim_metrics_request_tpot_ms(r, &tpot)) rc = stream_stat_add(&rs->st[ST_TPOT], tpot);
    if (!rc) rc = stream_stat_add(&rs->st[ST_E2E], ns_to_ms(sim_req_record_last_seen(r) - r->arrival));
    if (!rc) rc = stream_stat_add(&rs->st[ST_QUEUE], ns_to_ms(r->first_scheduled - r->arrival));
    if (!rc && r->kv_bytes > 0) {
        rc = stream_stat_add(&rs->st[ST_PD_TRANSFER], ns_to_ms(r->kv_arrived - r->kv_reserved));
        if (!rc) rc = stream_stat_add(&rs->st[ST_PD_BACKPRESSURE], ns_to_ms(r->kv_reserved - r->first_token));
        rs->pd_kv_bytes += r->kv_bytes;
        rs->pd_q += ns_to_ms(r->first_scheduled - r->arrival);
        rs->pd_pf += ns_to_ms(r->first_token - r->first_scheduled);
        if (r->decode_first >= 0) {
            rs->pd_fd += ns_to_ms(r->decode_first - r->kv_arrived);
            rs->pd_nfd++;
        }
    }
    return rc;
}

/* The cap is reached: from now on requests are streamed. The kept records
 * go in first, in their order. */
static int stream_begin(sim_metrics *m)
{
    req_stream *rs = calloc(1, sizeof *rs);
    if (!rs) return SIM_ENOMEM;
    m->rs = rs;
    rs->t0 = SIM_TIME_MAX;
    size_t ni = (size_t)(m->n_instances > 0 ? m->n_instances : 1);
    rs->load = calloc(ni, sizeof *rs->load);
    rs->routed_load = calloc(ni, sizeof *rs->routed_load);
    if (!rs->load || !rs->routed_load) return SIM_ENOMEM;
    for (int i = 0; i < N_ST; i++)
        if (!(rs->st[i].sk = sim_sketch_create(REQ_MIN_MS, REQ_MAX_MS, REQ_RATIO))) return SIM_ENOMEM;
    for (int64_t i = 0; i < m->n_req; i++)
        if (stream_add(m, &m->req[i])) return SIM_EINVAL;
    return 0;
}

int sim_metrics_add_request(sim_metrics *m, const sim_req_record *r)
{
    /* A record whose timestamps go backwards would poison every statistic
     * silently; refuse it so the caller sees the bug. */
    if (!m || !r || r->output_tokens < 1 || r->input_tokens < 0 || r->preemptions < 0 ||
        r->first_scheduled < r->arrival || r->first_token < r->first_scheduled ||
        r->finish < r->first_token || r->stream_first < 0 || r->stream_last < 0 ||
        (r->kv_bytes > 0 && (r->kv_reserved < r->first_token || r->kv_arrived < r->kv_reserved)))
        return SIM_EINVAL;
    if (m->observer) m->observer(m->observer_ctx, r);
    if (m->n_req < m->max_req) {
        void *p = m->req;
        if (grow(&p, &m->cap_req, m->n_req, m->max_req, sizeof *r)) return SIM_ENOMEM;
        m->req = p;
        m->req[m->n_req++] = *r;
        return m->rs ? stream_add(m, r) : 0;
    }
    int rc;
    if (!m->rs && (rc = stream_begin(m)) < 0) {
        stream_free(m->rs);
        m->rs = NULL;
        return rc;
    }
    return stream_add(m, r);
}

void sim_metrics_set_observer(sim_metrics *m, sim_metrics_observer_fn fn, void *ctx)
{
    m->observer = fn;
    m->observer_ctx = ctx;
}

int sim_metrics_add_iteration(sim_metrics *m, int32_t instance, sim_time dur, int32_t n_decode)
{
    if (!m || instance < 0 || instance >= m->n_instances || dur < 0 || n_decode < 0)
        return SIM_EINVAL;
    if (n_decode == 0) return 0;
    return sim_sketch_add(m->itl, (double)dur, (uint64_t)n_decode);
}

int sim_metrics_add_sample(sim_metrics *m, const sim_sample *s)
{
    if (!m || !s || s->instance < 0 || s->instance >= m->n_instances) return SIM_EINVAL;
    if (m->n_smp < m->max_smp) {
        void *p = m->smp;
        if (grow(&p, &m->cap_smp, m->n_smp, m->max_smp, sizeof *s)) return SIM_ENOMEM;
        m->smp = p;
        m->smp[m->n_smp++] = *s;
    }
    m->seen_smp++;
    m->smp_util += s->utilization;
    m->smp_kv += s->kv_occupancy;
    if (m->group_of) {
        int32_t g = m->group_of[s->instance];
        m->g_util[g] += s->utilization;
        m->g_kv[g] += s->kv_occupancy;
        m->g_wait[g] += s->waiting;
        m->g_batch[g] += s->batch_size;
        m->g_cnt[g]++;
    }
    return 0;
}

int64_t sim_metrics_requests_seen(const sim_metrics *m)
{
    return !m ? 0 : m->rs ? m->rs->n : m->n_req;
}

int64_t sim_metrics_samples_seen(const sim_metrics *m) { return m ? m->seen_smp : 0; }

int sim_metrics_group_means(const sim_metrics *m, int32_t g, double *util, double *kv, double *waiting,
                            double *batch)
{
    if (!m || !m->group_of || g < 0 || g >= m->n_groups) return SIM_EINVAL;
    if (!m->g_cnt[g]) return 0;
    *util = m->g_util[g] / (double)m->g_cnt[g];
    *kv = m->g_kv[g] / (double)m->g_cnt[g];
    *waiting = m->g_wait[g] / (double)m->g_cnt[g];
    *batch = m->g_batch[g] / (double)m->g_cnt[g];
    return 1;
}

int sim_metrics_routed_load(const sim_metrics *m, double *load)
{
    if (!m || !load) return SIM_EINVAL;
    size_t ni = (size_t)m->n_instances;
    if (m->rs) {
        memcpy(load, m->rs->routed_load, ni * sizeof *load);
        return 0;
    }
    memset(load, 0, ni * sizeof *load);
    for (int64_t i = 0; i < m->n_req; i++) {
        const sim_req_record *r = &m->req[i];
        int32_t k = r->prefill_instance >= 0 ? r->prefill_instance : r->instance;
        if (k >= 0 && k < m->n_instances) load[k] += (double)r->input_tokens + r->output_tokens;
    }
    return 0;
}

const sim_req_record *sim_metrics_requests(const sim_metrics *m, int64_t *n)
{
    if (n) *n = m ? m->n_req : 0;
    return m ? m->req : NULL;
}

const sim_sample *sim_metrics_samples(const sim_metrics *m, int64_t *n)
{
    if (n) *n = m ? m->n_smp : 0;
    return m ? m->smp : NULL;
}

int sim_metrics_itl_quantile_ms(const sim_metrics *m, double q, double *out)
{
    if (!m || !out || !(q >= 0 && q <= 1)) return SIM_EINVAL;
    *out = sim_sketch_quantile(m->itl, q) / 1e6;
    return 0;
}

/* Quantile as gsl_stats_quantile_from_sorted_data defines it (linear
 * interpolation between order statistics floor(q(n-1)) and the next), found
 * with gsl_stats_select in O(n) instead of sorting: the summaries of
 * million-request runs were dominated by sorting. v is reordered. */
static double quantile_select(double *v, size_t n, double q)
{
    double idx = q * (double)(n - 1);
    size_t lhs = (size_t)idx;
    double delta = idx - (double)lhs;
    double lo = gsl_stats_select(v, 1, n, lhs);
    if (lhs + 1 >= n || delta == 0.0) return lo;
    /* After the select, everything right of lhs is >= lo: the next order
     * statistic is their minimum. */
    double hi = v[lhs + 1];
    for (size_t i = lhs + 2; i < n; i++)
        if (v[i] < hi) hi = v[i];
    return (1 - delta) * lo + delta * hi;
}

/* Fills st from v[0..n) (reordered); st is all zero when n == 0. */
static void stat_fill(double *v, size_t n, sim_stat *st)
{
    memset(st, 0, sizeof *st);
    st->n = (int64_t)n;
    if (n == 0) return;
    st->mean = gsl_stats_mean(v, 1, n);
    st->p50 = quantile_select(v, n, 0.5);
    st->p90 = quantile_select(v, n, 0.9);
    st->p99 = quantile_select(v, n, 0.99);
    st->p999 = quantile_select(v, n, 0.999);
}

/* The span and totals both paths feed into the rates. */
typedef struct {
    int64_t n, in_tok, out_tok, good;
    sim_time t0, t1;
} req_totals;

static void load_cv_fill(const double *load, int32_t n_instances, sim_summary *out)
{
    if (!load || n_instances <= 1) return;
    double mean = gsl_stats_mean(load, 1, (size_t)n_instances);
    double sd = gsl_stats_sd_with_fixed_mean(load, 1, (size_t)n_instances, mean);
    out->load_cv = mean > 0 ? sd / mean : 0;
}

/* Prefix-cache hit rate (of in_tok input tokens) and load imbalance across
 * instances. */
static int records_cache_load(const sim_metrics *m, int64_t in_tok, sim_summary *out, sim_err *err)
{
    int64_t n = m->n_req;
    const sim_req_record *r = m->req;
    int64_t cached = 0;
    double *load = m->n_instances > 0 ? calloc((size_t)m->n_instances, sizeof *load) : NULL;
    if (m->n_instances > 0 && !load)
        return sim_err_set(err, SIM_ENOMEM, "metrics: out of memory for the load of %d instances", m->n_instances);
    for (int64_t i = 0; i < n; i++) {
        cached += r[i].cached_tokens;
        if (load && r[i].instance >= 0 && r[i].instance < m->n_instances)
            load[r[i].instance] += (double)r[i].input_tokens + r[i].output_tokens;
    }
    out->cache_hit_rate = in_tok > 0 ? (double)cached / (double)in_tok : 0;
    load_cv_fill(load, m->n_instances, out);
    free(load);
    return 0;
}

/* TTFT, TPOT, end-to-end and queueing percentiles, through the scratch
 * array v (n slots). */
static void records_latencies(const sim_req_record *r, int64_t n, double *v, sim_summary *out)
{
    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(sim_req_record_first_seen(&r[i]) - r[i].arrival);
    stat_fill(v, (size_t)n, &out->ttft_ms);
    size_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (sim_metrics_request_tpot_ms(&r[i], &v[k])) k++;
    stat_fill(v, k, &out->tpot_ms);
    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(sim_req_record_last_seen(&r[i]) - r[i].arrival);
    stat_fill(v, (size_t)n, &out->e2e_ms);
    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(r[i].first_scheduled - r[i].arrival);
    stat_fill(v, (size_t)n, &out->queue_ms);
}

/* Disaggregation: requests whose KV moved between instances, through the
 * scratch array v. */
static void records_pd(const sim_req_record *r, int64_t n, double *v, sim_summary *out)
{
    sim_pd_summary *pd = &out->pd;
    double q = 0, pf = 0, fd = 0;
    int64_t nfd = 0;
    size_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(r[i].kv_bytes > 0)) continue; /* only requests whose KV moved */
        v[k++] = ns_to_ms(r[i].kv_arrived - r[i].kv_reserved);
        pd->kv_bytes_moved += r[i].kv_bytes;
        q += ns_to_ms(r[i].first_scheduled - r[i].arrival);
        pf += ns_to_ms(r[i].first_token - r[i].first_scheduled);
        if (r[i].decode_first >= 0) {
            fd += ns_to_ms(r[i].decode_first - r[i].kv_arrived);
            nfd++;
        }
    }
    pd->moved = (int64_t)k;
    pd->enabled = k > 0;
    if (k > 0) {
        pd->ttft_queue_ms = q / (double)k;
        pd->ttft_prefill_ms = pf / (double)k;
        pd->first_decode_ms = nfd ? fd / (double)nfd : 0;
        stat_fill(v, k, &pd->transfer_ms);
        k = 0;
        for (int64_t i = 0; i < n; i++)
            if (r[i].kv_bytes > 0) v[k++] = ns_to_ms(r[i].kv_reserved - r[i].first_token);
        stat_fill(v, k, &pd->backpressure_ms);
    }
}

/* Every request kept: exact percentiles from the records. */
static int summarize_records(const sim_metrics *m, const sim_slo_cfg *slo, sim_summary *out, req_totals *tot,
                             sim_err *err)
{
    double *v = NULL;
    int64_t n = m->n_req;
    const sim_req_record *r = m->req;

    /* One scratch array, refilled per metric: the records are never
     * reordered and peak extra memory is 8 bytes per request. */
    if (n > 0) {
        v = malloc((size_t)n * sizeof *v);
        if (!v) return sim_err_set(err, SIM_ENOMEM, "metrics: out of memory for %lld requests",
                                   (long long)n);
    }

    sim_time t0 = SIM_TIME_MAX, t1 = 0;
    int64_t in_tok = 0, out_tok = 0, good = 0, preempt = 0;
    for (int64_t i = 0; i < n; i++) {
        if (r[i].arrival < t0) t0 = r[i].arrival;
        if (sim_req_record_last_seen(&r[i]) > t1) t1 = sim_req_record_last_seen(&r[i]);
        in_tok += r[i].input_tokens;
        out_tok += r[i].output_tokens;
        preempt += r[i].preemptions;
        good += sim_metrics_request_good(&r[i], slo);
    }
    int rc = records_cache_load(m, in_tok, out, err);
    if (rc) {
        free(v);
        return rc;
    }
    out->requests_completed = n;
    out->requests_good = good;
    out->preemptions = preempt;
    records_latencies(r, n, v, out);
    records_pd(r, n, v, out);
    free(v);
    *tot = (req_totals){n, in_tok, out_tok, good, t0, t1};
    return 0;
}

static void stream_stat_fill(const stream_stat *st, sim_stat *out)
{
    memset(out, 0, sizeof *out);
    out->n = st->n;
    if (st->n == 0) return;
    out->mean = (double)st->mean;
    out->p50 = sim_sketch_quantile_interp(st->sk, 0.5);
    out->p90 = sim_sketch_quantile_interp(st->sk, 0.9);
    out->p99 = sim_sketch_quantile_interp(st->sk, 0.99);
    out->p999 = sim_sketch_quantile_interp(st->sk, 0.999);
}

static int same_slo(const sim_slo_cfg *a, const sim_slo_cfg *b)
{
    double at = a && a->ttft_ms > 0 ? a->ttft_ms : 0, ap = a && a->tpot_ms > 0 ? a->tpot_ms : 0;
    double bt = b && b->ttft_ms > 0 ? b->ttft_ms : 0, bp = b && b->tpot_ms > 0 ? b->tpot_ms : 0;
    double ae = a && a->e2e_ms > 0 ? a->e2e_ms : 0, be = b && b->e2e_ms > 0 ? b->e2e_ms : 0;
    return at == bt && ap == bp && ae == be;
}

/* Past the record cap: the running sums and the sketches. */
static int summarize_stream(const sim_metrics *m, const sim_slo_cfg *slo, sim_summary *out, req_totals *tot,
                            sim_err *err)
{
    const req_stream *rs = m->rs;
    if (!same_slo(slo, m->has_slo ? &m->slo : NULL))
        return sim_err_set(err, SIM_EINVAL,
                           "metrics: the run kept %lld of %lld request records, so goodput was counted while it "
                           "ran, under the SLO given to sim_metrics_set_limits; it cannot be recounted under another",
                           (long long)m->n_req, (long long)rs->n);
    out->cache_hit_rate = rs->in_tok > 0 ? (double)rs->cached / (double)rs->in_tok : 0;
    load_cv_fill(m->n_instances > 0 ? rs->load : NULL, m->n_instances, out);
    out->requests_completed = rs->n;
    out->requests_good = rs->good;
    out->preemptions = rs->preempt;
    stream_stat_fill(&rs->st[ST_TTFT], &out->ttft_ms);
    stream_stat_fill(&rs->st[ST_TPOT], &out->tpot_ms);
    stream_stat_fill(&rs->st[ST_E2E], &out->e2e_ms);
    stream_stat_fill(&rs->st[ST_QUEUE], &out->queue_ms);
    sim_pd_summary *pd = &out->pd;
    int64_t k = rs->st[ST_PD_TRANSFER].n;
    pd->moved = k;
    pd->enabled = k > 0;
    if (k > 0) {
        pd->kv_bytes_moved = rs->pd_kv_bytes;
        pd->ttft_queue_ms = rs->pd_q / (double)k;
        pd->ttft_prefill_ms = rs->pd_pf / (double)k;
        pd->first_decode_ms = rs->pd_nfd ? rs->pd_fd / (double)rs->pd_nfd : 0;
        stream_stat_fill(&rs->st[ST_PD_TRANSFER], &pd->transfer_ms);
        stream_stat_fill(&rs->st[ST_PD_BACKPRESSURE], &pd->backpressure_ms);
    }
    out->records.capped = 1;
    out->records.sketch_rel_error = sim_sketch_rel_error(rs->st[ST_TTFT].sk);
    *tot = (req_totals){rs->n, rs->in_tok, rs->out_tok, rs->good, rs->t0, rs->t1};
    return 0;
}

int sim_metrics_summarize(const sim_metrics *m, const sim_slo_cfg *slo, int32_t n_gpus,
                          sim_summary *out, sim_err *err)
{
    if (!m || !out) return sim_err_set(err, SIM_EINVAL, "metrics: summarize: NULL argument");
    memset(out, 0, sizeof *out);
    out->n_gpus = n_gpus;
    req_totals tot = {0};
    int rc = m->rs ? summarize_stream(m, slo, out, &tot, err) : summarize_records(m, slo, out, &tot, err);
    if (rc < 0) return rc;
    out->records.requests_kept = m->n_req;
    out->records.samples_kept = m->n_smp;
    out->records.samples = m->seen_smp;
    if (m->n_smp < m->seen_smp) out->records.capped = 1;

    uint64_t itl_n = sim_sketch_count(m->itl);
    if (itl_n > 0) {
        out->itl_ms.n = (int64_t)itl_n;
        out->itl_ms.mean = sim_sketch_sum(m->itl) / (double)itl_n / 1e6;
        out->itl_ms.p50 = sim_sketch_quantile(m->itl, 0.5) / 1e6;
        out->itl_ms.p90 = sim_sketch_quantile(m->itl, 0.9) / 1e6;
        out->itl_ms.p99 = sim_sketch_quantile(m->itl, 0.99) / 1e6;
        out->itl_ms.p999 = sim_sketch_quantile(m->itl, 0.999) / 1e6;
    }

    /* A zero-length span (empty run, or every request finished at its
     * arrival instant) has no meaningful rate: report 0, never inf. */
    int64_t n = tot.n;
    out->sim_time_s = n > 0 ? (double)(tot.t1 - tot.t0) / (double)SIM_NS_PER_S : 0;
    if (out->sim_time_s > 0) {
        double s = out->sim_time_s;
        out->req_per_s = (double)n / s;
        out->input_tokens_per_s = (double)tot.in_tok / s;
        out->output_tokens_per_s = (double)tot.out_tok / s;
        out->output_tokens_per_s_per_gpu = n_gpus > 0 ? out->output_tokens_per_s / n_gpus : 0;
        out->goodput_req_per_s = (double)tot.good / s;
    }

    /* Running sums in arrival order: the same figures as a pass over every
     * sample, kept or not. */
    if (m->seen_smp > 0) {
        out->mean_utilization = m->smp_util / (double)m->seen_smp;
        out->mean_kv_occupancy = m->smp_kv / (double)m->seen_smp;
    }
    return 0;
}
