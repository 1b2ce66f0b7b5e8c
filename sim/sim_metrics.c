/* sim_metrics — see sim_metrics.h.
 *
 * Requests and samples live in growable arrays (amortised doubling, 96 and
 * 48 bytes per entry), so a million requests cost ~96 MB and no per-request
 * allocation. Inter-token latency is not stored per token or per iteration:
 * a run can have tens of millions of iterations, so each iteration adds its
 * duration with weight n_decode into a log-spaced histogram (see ITL_* below)
 * and weighted quantiles are read from it. */
#include "sim_metrics.h"

#include <gsl/gsl_statistics_double.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ITL histogram: bin 0 holds [0, 1 µs), bins 1..ITL_NLOG hold
 * [1 µs·r^(i-1), 1 µs·r^i) with r = 1.001, up to 1000 s, and the last bin
 * holds everything >= 1000 s. A quantile is the geometric centre of the bin
 * that holds the requested rank, clamped to the exact observed min/max, so it
 * is within 0.1 % (relative) of the exact weighted quantile between 1 µs and
 * 1000 s, and within 1 µs (absolute) below 1 µs. The mean is exact (kept as
 * a running sum, not read from the bins). */
#define ITL_MIN_NS 1000.0
#define ITL_MAX_NS 1e12
#define ITL_RATIO 1.001
#define ITL_NLOG 20734 /* ceil(ln(1e9) / ln(1.001)) */
#define ITL_NBINS (ITL_NLOG + 2)

struct sim_metrics {
    int32_t n_instances;
    sim_req_record *req;
    int64_t n_req, cap_req;
    sim_sample *smp;
    int64_t n_smp, cap_smp;
    uint64_t *itl_bins;  /* ITL_NBINS token counts */
    uint64_t itl_weight; /* tokens counted */
    double itl_sum_ns;   /* Σ dur·n_decode, for the exact mean */
    sim_time itl_min, itl_max;
};

sim_metrics *sim_metrics_create(int32_t n_instances)
{
    sim_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->n_instances = n_instances < 0 ? 0 : n_instances;
    m->itl_bins = calloc(ITL_NBINS, sizeof *m->itl_bins);
    if (!m->itl_bins) goto fail;
    m->itl_min = SIM_TIME_MAX;
    return m;
fail:
    sim_metrics_destroy(m);
    return NULL;
}

void sim_metrics_destroy(sim_metrics *m)
{
    if (!m) return;
    free(m->req);
    free(m->smp);
    free(m->itl_bins);
    free(m);
}

/* Grows *arr (elements of size sz) so it holds at least n + 1 entries. */
static int grow(void **arr, int64_t *cap, int64_t n, size_t sz)
{
    if (n < *cap) return 0;
    int64_t nc = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return SIM_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

int sim_metrics_add_request(sim_metrics *m, const sim_req_record *r)
{
    /* A record whose timestamps go backwards would poison every statistic
     * silently; refuse it so the caller sees the bug. */
    if (!m || !r || r->output_tokens < 1 || r->input_tokens < 0 || r->preemptions < 0 ||
        r->first_scheduled < r->arrival || r->first_token < r->first_scheduled ||
        r->finish < r->first_token)
        return SIM_EINVAL;
    void *p = m->req;
    if (grow(&p, &m->cap_req, m->n_req, sizeof *r)) return SIM_ENOMEM;
    m->req = p;
    m->req[m->n_req++] = *r;
    return 0;
}

static int itl_bin(sim_time dur)
{
    double d = (double)dur;
    if (d < ITL_MIN_NS) return 0;
    if (d >= ITL_MAX_NS) return ITL_NBINS - 1;
    int i = 1 + (int)(log(d / ITL_MIN_NS) / log(ITL_RATIO));
    if (i < 1) i = 1;
    if (i > ITL_NLOG) i = ITL_NLOG;
    return i;
}

int sim_metrics_add_iteration(sim_metrics *m, int32_t instance, sim_time dur, int32_t n_decode)
{
    if (!m || instance < 0 || instance >= m->n_instances || dur < 0 || n_decode < 0)
        return SIM_EINVAL;
    if (n_decode == 0) return 0;
    m->itl_bins[itl_bin(dur)] += (uint64_t)n_decode;
    m->itl_weight += (uint64_t)n_decode;
    m->itl_sum_ns += (double)dur * (double)n_decode;
    if (dur < m->itl_min) m->itl_min = dur;
    if (dur > m->itl_max) m->itl_max = dur;
    return 0;
}

int sim_metrics_add_sample(sim_metrics *m, const sim_sample *s)
{
    if (!m || !s || s->instance < 0 || s->instance >= m->n_instances) return SIM_EINVAL;
    void *p = m->smp;
    if (grow(&p, &m->cap_smp, m->n_smp, sizeof *s)) return SIM_ENOMEM;
    m->smp = p;
    m->smp[m->n_smp++] = *s;
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

/* Weighted quantile from the ITL histogram, in ns: the value at rank
 * ceil(q·W) of the tokens sorted by latency (inverse CDF). */
static double itl_quantile_ns(const sim_metrics *m, double q)
{
    double rank = ceil(q * (double)m->itl_weight);
    if (rank < 1) rank = 1;
    uint64_t need = (uint64_t)rank, cum = 0;
    int i = 0;
    for (; i < ITL_NBINS; i++) {
        cum += m->itl_bins[i];
        if (cum >= need) break;
    }
    double v;
    if (i == 0)
        v = ITL_MIN_NS / 2;
    else if (i >= ITL_NBINS - 1)
        v = (double)m->itl_max;
    else
        v = ITL_MIN_NS * pow(ITL_RATIO, (double)(i - 1)) * sqrt(ITL_RATIO);
    if (v < (double)m->itl_min) v = (double)m->itl_min;
    if (v > (double)m->itl_max) v = (double)m->itl_max;
    return v;
}

int sim_metrics_itl_quantile_ms(const sim_metrics *m, double q, double *out)
{
    if (!m || !out || !(q >= 0 && q <= 1)) return SIM_EINVAL;
    *out = m->itl_weight ? itl_quantile_ns(m, q) / 1e6 : 0;
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

static double ns_to_ms(sim_time t) { return (double)t / (double)SIM_NS_PER_MS; }

int sim_metrics_request_tpot_ms(const sim_req_record *r, double *out)
{
    if (r->output_tokens < 2) return 0;
    *out = ns_to_ms(r->finish - r->first_token) / (double)(r->output_tokens - 1);
    return 1;
}

int sim_metrics_summarize(const sim_metrics *m, const sim_slo_cfg *slo, int32_t n_gpus,
                          sim_summary *out, sim_err *err)
{
    double *v = NULL;
    if (!m || !out) return sim_err_set(err, SIM_EINVAL, "metrics: summarize: NULL argument");
    memset(out, 0, sizeof *out);
    out->n_gpus = n_gpus;
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
    double ttft_bound = slo && slo->ttft_ms > 0 ? slo->ttft_ms : 0;
    double tpot_bound = slo && slo->tpot_ms > 0 ? slo->tpot_ms : 0;
    for (int64_t i = 0; i < n; i++) {
        if (r[i].arrival < t0) t0 = r[i].arrival;
        if (r[i].finish > t1) t1 = r[i].finish;
        in_tok += r[i].input_tokens;
        out_tok += r[i].output_tokens;
        preempt += r[i].preemptions;
        double ttft = ns_to_ms(r[i].first_token - r[i].arrival), tpot = 0;
        /* A one-token reply has no TPOT, so it cannot miss a TPOT bound. */
        int has_tpot = sim_metrics_request_tpot_ms(&r[i], &tpot);
        if ((ttft_bound <= 0 || ttft <= ttft_bound) &&
            (tpot_bound <= 0 || !has_tpot || tpot <= tpot_bound))
            good++;
    }
    /* Prefix-cache hit rate and load imbalance across instances. */
    int64_t cached = 0;
    double *load = m->n_instances > 0 ? calloc((size_t)m->n_instances, sizeof *load) : NULL;
    for (int64_t i = 0; i < n; i++) {
        cached += r[i].cached_tokens;
        if (load && r[i].instance >= 0 && r[i].instance < m->n_instances)
            load[r[i].instance] += (double)r[i].input_tokens + r[i].output_tokens;
    }
    out->cache_hit_rate = in_tok > 0 ? (double)cached / (double)in_tok : 0;
    if (load && m->n_instances > 1) {
        double mean = gsl_stats_mean(load, 1, (size_t)m->n_instances);
        double sd = gsl_stats_sd_with_fixed_mean(load, 1, (size_t)m->n_instances, mean);
        out->load_cv = mean > 0 ? sd / mean : 0;
    }
    free(load);
    out->requests_completed = n;
    out->requests_good = good;
    out->preemptions = preempt;

    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(r[i].first_token - r[i].arrival);
    stat_fill(v, (size_t)n, &out->ttft_ms);
    size_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (sim_metrics_request_tpot_ms(&r[i], &v[k])) k++;
    stat_fill(v, k, &out->tpot_ms);
    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(r[i].finish - r[i].arrival);
    stat_fill(v, (size_t)n, &out->e2e_ms);
    for (int64_t i = 0; i < n; i++) v[i] = ns_to_ms(r[i].first_scheduled - r[i].arrival);
    stat_fill(v, (size_t)n, &out->queue_ms);

    /* Disaggregation: requests whose KV moved between instances. */
    sim_pd_summary *pd = &out->pd;
    double q = 0, pf = 0, fd = 0;
    int64_t nfd = 0;
    k = 0;
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
    free(v);

    if (m->itl_weight > 0) {
        out->itl_ms.n = (int64_t)m->itl_weight;
        out->itl_ms.mean = m->itl_sum_ns / (double)m->itl_weight / 1e6;
        out->itl_ms.p50 = itl_quantile_ns(m, 0.5) / 1e6;
        out->itl_ms.p90 = itl_quantile_ns(m, 0.9) / 1e6;
        out->itl_ms.p99 = itl_quantile_ns(m, 0.99) / 1e6;
        out->itl_ms.p999 = itl_quantile_ns(m, 0.999) / 1e6;
    }

    /* A zero-length span (empty run, or every request finished at its
     * arrival instant) has no meaningful rate: report 0, never inf. */
    out->sim_time_s = n > 0 ? (double)(t1 - t0) / (double)SIM_NS_PER_S : 0;
    if (out->sim_time_s > 0) {
        double s = out->sim_time_s;
        out->req_per_s = (double)n / s;
        out->input_tokens_per_s = (double)in_tok / s;
        out->output_tokens_per_s = (double)out_tok / s;
        out->output_tokens_per_s_per_gpu = n_gpus > 0 ? out->output_tokens_per_s / n_gpus : 0;
        out->goodput_req_per_s = (double)good / s;
    }

    if (m->n_smp > 0) {
        double su = 0, sk = 0;
        for (int64_t i = 0; i < m->n_smp; i++) {
            su += m->smp[i].utilization;
            sk += m->smp[i].kv_occupancy;
        }
        out->mean_utilization = su / (double)m->n_smp;
        out->mean_kv_occupancy = sk / (double)m->n_smp;
    }
    return 0;
}
