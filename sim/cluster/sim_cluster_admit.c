/* sim_cluster_admit — SLO classes at the cluster: admission control at a
 * request's arrival, the per-class metrics and their summaries (part of the
 * cluster, sim_cluster_impl.h).
 *
 * Admission runs after routing, so the predicted TTFT is the one of the
 * instance the request would join: the prefill tokens queued or part-done
 * there that would be served before it (with priority scheduling, not
 * those of waiting requests of a less urgent class) plus its own, at the
 * pool's prefill rate per token (the full-chunk probe the cache-aware
 * router prices queues with), plus the frontend delay. A linear estimate:
 * it ignores decode steps interleaved with the prefills. A request whose prediction exceeds workload.admission.slo_factor ×
 * its class's TTFT bound is shed; otherwise it must find a token in its
 * class's bucket and in the global one (both when both are set), and takes
 * one from each. A shed request is counted (overall and per class), never
 * served, and takes no token. Buckets are full at t = 0 and refill
 * continuously. The per-class metrics are sim_metrics objects of their own
 * (one per class, fed by the instances with every finished record), so
 * every figure per class is computed exactly as the overall one. */
#include "sim_cluster_impl.h"

static void bucket_refill(sim_bucket_state *b, const sim_bucket_cfg *cfg, sim_time now)
{
    b->level += cfg->rate * (double)(now - b->last) / (double)SIM_NS_PER_S;
    if (b->level > cfg->burst) b->level = cfg->burst;
    b->last = now;
}

int sim_cluster_admit_init(sim_cluster *c, sim_err *err)
{
    const sim_workload_cfg *w = &c->sc.workload;
    c->admission = sim_admission_enabled(w);
    c->bucket.level = w->admission.bucket.burst;
    c->n_classes = w->n_classes;
    int distinct = 0;
    for (int32_t i = 0; i < c->n_classes; i++) {
        c->class_bucket[i].level = w->classes[i].admission.burst;
        if (w->classes[i].priority != w->classes[0].priority) distinct = 1;
        sim_slo_cfg slo = sim_class_slo(&c->sc, i);
        if (!(c->class_metrics[i] = sim_metrics_create(c->n_inst)) ||
            sim_metrics_set_limits(c->class_metrics[i], c->sc.output.request_records, 0, &slo) < 0)
            return sim_err_set(err, SIM_ENOMEM, "out of memory building the metrics of workload.classes.%d",
                               (int)i);
    }
    for (int32_t k = 0; k < c->n_inst && c->n_classes > 0; k++) {
        sim_instance_set_class_metrics(c->inst[k], c->class_metrics, c->n_classes);
        /* One priority for every class is first come first served. */
        sim_instance_set_priority(c->inst[k], distinct);
    }
    return 0;
}

void sim_cluster_admit_fini(sim_cluster *c)
{
    for (int32_t i = 0; i < SIM_MAX_CLASSES; i++) sim_metrics_destroy(c->class_metrics[i]);
}

double sim_cluster_predicted_ttft_ms(const sim_cluster *c, const sim_req *r, int32_t k)
{
    const sim_sched_cfg *s = &c->sc.deployment.pools[c->inst_pool[k]].scheduler;
    return (double)(sim_instance_pending_prefill_before(c->inst[k], r->spec.priority) + r->spec.input_tokens) *
               c->prefill_ms_per_token[k] +
           s->frontend_us * 1e-3;
}

int sim_cluster_admit(sim_cluster *c, const sim_req *r, int32_t k)
{
    const sim_workload_cfg *w = &c->sc.workload;
    sim_time now = sim_engine_now(c->eng);
    int32_t cls = c->n_classes > 0 ? r->spec.cls : -1;
    int ok = 1;
    if (w->admission.slo_factor > 0) {
        double bound = sim_class_slo(&c->sc, cls).ttft_ms;
        if (bound > 0 && sim_cluster_predicted_ttft_ms(c, r, k) > w->admission.slo_factor * bound) ok = 0;
    }
    const sim_bucket_cfg *gb = &w->admission.bucket, *cb = cls >= 0 ? &w->classes[cls].admission : NULL;
    if (gb->rate > 0) bucket_refill(&c->bucket, gb, now);
    if (cb && cb->rate > 0) bucket_refill(&c->class_bucket[cls], cb, now);
    if (ok && gb->rate > 0 && c->bucket.level < 1) ok = 0;
    if (ok && cb && cb->rate > 0 && c->class_bucket[cls].level < 1) ok = 0;
    if (!ok) {
        c->shed++;
        if (cls >= 0) c->class_shed[cls]++;
        return 0;
    }
    if (gb->rate > 0) c->bucket.level -= 1;
    if (cb && cb->rate > 0) c->class_bucket[cls].level -= 1;
    return 1;
}

int sim_cluster_class_summaries(const sim_cluster *c, sim_summary *out, sim_err *err)
{
    out->shed_reported = c->admission || c->n_classes > 0;
    out->requests_shed = c->shed;
    out->n_classes = c->n_classes;
    if (c->n_classes == 0) return 0;
    sim_summary *tmp = malloc(sizeof *tmp);
    if (!tmp) return sim_err_set(err, SIM_ENOMEM, "out of memory summarising the classes");
    int64_t good = 0;
    for (int32_t i = 0; i < c->n_classes; i++) {
        sim_class_summary *cs = &out->classes[i];
        const sim_class_cfg *cl = &c->sc.workload.classes[i];
        sim_slo_cfg slo = sim_class_slo(&c->sc, i);
        int rc = sim_metrics_summarize(c->class_metrics[i], &slo, c->n_gpus, tmp, err);
        if (rc < 0) {
            free(tmp);
            return rc;
        }
        memset(cs, 0, sizeof *cs);
        snprintf(cs->name, sizeof cs->name, "%s", cl->name);
        cs->priority = cl->priority;
        cs->slo = slo;
        cs->requests_completed = tmp->requests_completed;
        cs->requests_good = tmp->requests_good;
        cs->requests_shed = c->class_shed[i];
        cs->requests_rejected = c->class_rejected[i];
        cs->ttft_ms = tmp->ttft_ms;
        cs->tpot_ms = tmp->tpot_ms;
        cs->e2e_ms = tmp->e2e_ms;
        cs->queue_ms = tmp->queue_ms;
        cs->slo_attainment = tmp->requests_completed > 0 ? (double)tmp->requests_good / (double)tmp->requests_completed : 0;
        /* Rates over the run's span (not the class's own first arrival to
         * last completion), so the classes add up to the headline. */
        if (out->sim_time_s > 0) {
            cs->goodput_req_per_s = (double)tmp->requests_good / out->sim_time_s;
            cs->req_per_s = (double)tmp->requests_completed / out->sim_time_s;
            cs->input_tokens_per_s = tmp->input_tokens_per_s * tmp->sim_time_s / out->sim_time_s;
            cs->output_tokens_per_s = tmp->output_tokens_per_s * tmp->sim_time_s / out->sim_time_s;
        }
        good += tmp->requests_good;
    }
    free(tmp);
    /* The headline judges each request by its own class's SLO. */
    out->requests_good = good;
    out->goodput_req_per_s = out->sim_time_s > 0 ? (double)good / out->sim_time_s : 0;
    return 0;
}
