/* sim_search_report — what a search prints and writes (see sim_search.h):
 * the summary and top-k tables with why each runner-up lost, the Pareto
 * frontiers, JSON and CSV, the recommended deployment as a scenario YAML
 * (written from the loader's schema table, keys that differ from the
 * defaults only, so `servesim run` reads back exactly the scenario the
 * search simulated) and the launch files of a candidate (sim_launch.h). */
#include "sim_search_impl.h"

#include "sim_launch.h"
#include "sim_schema.h"
#include "sim_yaml.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *pct_name(double p)
{
    return p >= 99.85 ? "p99.9" : p >= 98.5 ? "p99" : p >= 85 ? "p90" : "p50";
}

static int32_t winner(const sim_search *s)
{
    int32_t w = -1;
    return sim_search_ranking(s, &w, 1) > 0 ? w : -1;
}

void sim_search_why_lost(const sim_search *s, int32_t i, char *buf, size_t len)
{
    int32_t w = winner(s);
    buf[0] = '\0';
    if (w < 0 || i == w) return;
    const sim_search_cand *a = &s->cands[i], *b = &s->cands[w];
    const sim_search_result *ra = &s->res[i], *rb = &s->res[w];
    size_t n = 0;
#define PUT(...)                                                              \
    do {                                                                      \
        if (n < len) n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);    \
    } while (0)
    if (ra->status != SIM_CAND_OK) {
        PUT("%s", ra->reason);
        return;
    }
    if (s->objective_energy)
        PUT("%+.1f%% J/token", 100.0 * (ra->joules_per_token / rb->joules_per_token - 1));
    else if (s->objective_cost)
        PUT("%+.1f%% cost/Mtok", 100.0 * (ra->cost_per_mtok / rb->cost_per_mtok - 1));
    else
        PUT("%+.1f%% goodput/GPU", 100.0 * (ra->goodput_per_gpu / rb->goodput_per_gpu - 1));
    if (ra->reason[0]) PUT("; limit %s", ra->reason);
    /* What differs from the winner. */
    char d[256] = "";
    size_t m = 0;
#define DIFF(...)                                                               \
    do {                                                                        \
        if (m < sizeof d) m += (size_t)snprintf(d + m, sizeof d - m, __VA_ARGS__); \
    } while (0)
    if (strcmp(a->gpu, b->gpu) != 0 && !s->hetero) DIFF(", %s", a->gpu);
    if (a->mode != b->mode) {
        DIFF(", %s not %s", sim_mode_name(a->mode), sim_mode_name(b->mode));
        if (s->hetero && strcmp(a->gpu, b->gpu) != 0) DIFF(", %s", a->gpu);
    } else {
        for (int32_t p = 0; p < a->n_pools; p++) {
            char la[48], lb[48];
            sim_search_layout_name(&a->pools[p], la, sizeof la);
            sim_search_layout_name(&b->pools[p], lb, sizeof lb);
            const char *role = sim_role_name(a->pools[p].role);
            if (strcmp(la, lb) != 0) DIFF(", %s %s not %s", role, la, lb);
            char ca[32], cb[32];
            sim_search_autoscale_count(s, a, p, ca, sizeof ca);
            sim_search_autoscale_count(s, b, p, cb, sizeof cb);
            if (strcmp(ca, cb) != 0) DIFF(", %s %s not %s", ca, role, cb);
            if (strcmp(a->pools[p].gpu, b->pools[p].gpu) != 0)
                DIFF(", %s on %s not %s", role, a->pools[p].gpu, b->pools[p].gpu);
        }
    }
    if (a->max_seqs != b->max_seqs) DIFF(", max_seqs %d", (int)a->max_seqs);
    if (a->max_batched_tokens != b->max_batched_tokens) DIFF(", mbt %d", (int)a->max_batched_tokens);
    if (a->chunk_tokens != b->chunk_tokens) DIFF(", chunk %d", (int)a->chunk_tokens);
    if (a->lambda != b->lambda) DIFF(", lambda %g", a->lambda);
    if (a->draft_tokens != b->draft_tokens) DIFF(", draft %d not %d", (int)a->draft_tokens, (int)b->draft_tokens);
    if (a->encode_instances != b->encode_instances)
        DIFF(", %d encoders not %d", (int)a->encode_instances, (int)b->encode_instances);
    if (d[0]) PUT("; differs:%s", d + 1);
#undef DIFF
#undef PUT
}

static void reasons_summary(const sim_search *s, FILE *f, sim_cand_status st, const char *title)
{
    /* Distinct reasons with counts, most common first (at most 6). */
    int32_t nr = 0, cnt[64];
    const char *rs[64];
    for (int32_t i = 0; i < s->n; i++) {
        if (s->res[i].status != st || (st == SIM_CAND_SLO_MISSED && s->res[i].n_probes > 0)) continue;
        int32_t k = 0;
        while (k < nr && strcmp(rs[k], s->res[i].reason) != 0) k++;
        if (k == nr) {
            if (nr == 64) continue;
            rs[nr] = s->res[i].reason;
            cnt[nr++] = 0;
        }
        cnt[k]++;
    }
    if (nr == 0) return;
    fprintf(f, "%s:\n", title);
    for (int32_t shown = 0; shown < 6 && shown < nr; shown++) {
        int32_t b = 0;
        for (int32_t k = 1; k < nr; k++)
            if (cnt[k] > cnt[b]) b = k;
        fprintf(f, "  %5d × %s\n", (int)cnt[b], rs[b]);
        cnt[b] = -1;
    }
}

/* Which source priced the simulated candidates, per GPU type, and a
 * warning when measured and analytic prices meet in one ranking. */
static void prices_summary(const sim_search *s, FILE *f)
{
    const char *seen_gpu[16], *seen_prices[16];
    int32_t n = 0, measured = 0, analytic = 0;
    for (int32_t i = 0; i < s->n; i++) {
        const char *p = s->res[i].prices;
        if (!p[0]) continue;
        if (strncmp(p, "perf-db", 7) == 0) measured++;
        else analytic++;
        int known = 0;
        for (int32_t k = 0; k < n && !known; k++)
            known = strcmp(seen_gpu[k], s->cands[i].gpu) == 0 && strcmp(seen_prices[k], p) == 0;
        if (!known && n < 16) seen_gpu[n] = s->cands[i].gpu, seen_prices[n++] = p;
    }
    if (n == 0) return;
    fprintf(f, "prices:");
    for (int32_t k = 0; k < n; k++) fprintf(f, "%s %s %s", k ? ";" : "", seen_gpu[k], seen_prices[k]);
    if (measured && analytic)
        fprintf(f, " (measured and analytic prices are mixed in this ranking; --no-perf-db prices every candidate "
                   "alike)");
    fputc('\n', f);
}

/* One table row; var >= 0: the count of SLO-meeting scheduler variants of
 * this deployment (the top list), -1: no such column value (Pareto). */
static void row(const sim_search *s, FILE *f, int rank, int32_t i, int why, int32_t var)
{
    const sim_search_cand *c = &s->cands[i];
    const sim_search_result *r = &s->res[i];
    char cost[16] = "-", vs[16] = "";
    if (s->objective_energy) {
        if (r->joules_per_token > 0) snprintf(cost, sizeof cost, "%.4f", r->joules_per_token);
    } else if (r->cost_per_mtok > 0) {
        snprintf(cost, sizeof cost, "%.3f", r->cost_per_mtok);
    }
    if (var >= 0) snprintf(vs, sizeof vs, "%d", (int)var);
    fprintf(f, "%3d  %-62.62s %4d %8.3f %9.1f %7.1f %7.1f %8.0f %8.1f %7s %3s  %-*s", rank, c->label, (int)c->gpus,
            r->rate, r->goodput_per_gpu, r->run_tok_s_gpu, r->tok_s_user, r->ttft_ms, r->tpot_ms, cost, vs,
            why ? 8 : 0, strncmp(r->prices, "perf-db", 7) == 0 ? "perf-db" : r->prices[0] ? r->prices : "-");
    if (why) {
        char w[512];
        sim_search_why_lost(s, i, w, sizeof w);
        fprintf(f, "  %s", rank == 1 ? (r->reason[0] ? r->reason : "") : w);
    }
    fputc('\n', f);
}

static void header(const sim_search *s, FILE *f, int why)
{
    const char *pn = pct_name(s->percentile);
    fprintf(f, "%3s  %-62s %4s %8s %9s %7s %7s %5s %3s %5s %3s %7s %3s  %-*s%s\n", "#", "deployment", "GPUs", "req/s",
            "tok/s/GPU", "run/GPU", "tok/s/u", "TTFT", pn, "TPOT", pn, s->objective_energy ? "J/tok" : "$/Mtok", "var", why ? 8 : 0, "prices",
            why ? "  limit / why it ranks lower" : "");
}

/* Fills buf with "2 × prefill tp4 on h100-sxm (8 GPUs) + ..." for candidate c. */
static void fleet_name(const sim_search_cand *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t p = 0; p < c->n_pools && n < len; p++) {
        char ln[48];
        const sim_search_pool *pp = &c->pools[p];
        sim_search_layout_name(pp, ln, sizeof ln);
        n += (size_t)snprintf(buf + n, len - n, "%s%d × %s %s on %s (%d GPUs)", p ? " + " : "", (int)pp->instances,
                              sim_role_name(pp->role), ln, pp->gpu, (int)(pp->instances * pp->gpus));
    }
    if (c->encode_instances > 0 && n < len)
        snprintf(buf + n, len - n, " + %d × encoder on %s (%d GPUs)", (int)c->encode_instances, c->encode_gpu,
                 (int)c->encode_instances);
}

/* Heterogeneous searches: each top fleet's GPU type and count per role and
 * what it costs (search.prices). */
static void fleets_table(const sim_search *s, FILE *f, const int32_t *top, int32_t n)
{
    fprintf(f, "\nfleets (GPU type and count per role; USD/h = Σ GPUs × search.prices; $/Mtok at the SLO-meeting "
               "rate):\n");
    fprintf(f, "  %-3s %10s %8s  %s\n", "#", "USD/h", "$/Mtok", "fleet");
    for (int32_t q = 0; q < n; q++) {
        const sim_search_cand *c = &s->cands[top[q]];
        const sim_search_result *r = &s->res[top[q]];
        char fl[400], usd[24] = "-", mt[24] = "-";
        fleet_name(c, fl, sizeof fl);
        if (r->price > 0) snprintf(usd, sizeof usd, "%.2f", r->price * c->gpus);
        if (r->cost_per_mtok > 0) snprintf(mt, sizeof mt, "%.3f", r->cost_per_mtok);
        fprintf(f, "  %-3d %10s %8s  %s\n", (int)q + 1, usd, mt, fl);
    }
}

/* search.autoscale: what each top fleet held over the run against its
 * max, the requests it served outside the SLO and, priced, what it cost. */
static void autoscale_table(const sim_search *s, FILE *f, const int32_t *top, int32_t n)
{
    fprintf(f, "\nGPUs held over the run (t = 0 to its end; GPUs: the fleet's max; held: the time-weighted mean; "
               "saved: against holding the max; missed: requests outside the SLO):\n");
    fprintf(f, "  %-3s %-58s %5s %7s %9s %7s %8s %10s\n", "#", "deployment", "GPUs", "held", "GPU-h", "saved",
            "missed", "USD");
    for (int32_t q = 0; q < n; q++) {
        const sim_search_cand *c = &s->cands[top[q]];
        const sim_search_result *r = &s->res[top[q]];
        char usd[24] = "-";
        if (r->price > 0) snprintf(usd, sizeof usd, "%.2f", r->price * r->gpu_hours);
        fprintf(f, "  %-3d %-58.58s %5d %7.2f %9.3f %6.1f%% %8lld %10s\n", (int)q + 1, c->label, (int)c->gpus,
                r->gpus_held, r->gpu_hours, c->gpus > 0 ? 100.0 * (1 - r->gpus_held / c->gpus) : 0,
                (long long)r->requests_missed, usd);
    }
}

/* search.replications: the top deployments' objective over the seeds. */
static void replications_table(const sim_search *s, FILE *f, const int32_t *top, int32_t n)
{
    if (s->sc.search.replications < 2 || n <= 0 || s->res[top[0]].rep_n < 2) return;
    const char *unit = s->objective_energy ? "output tokens per joule"
                       : s->objective_cost ? "tok/s/GPU per USD/GPU-h" : "tok/s/GPU";
    fprintf(f, "\nreplications: each re-run with %d independent seeds at its rate; the ranking above follows the means "
               "(95 %% intervals, %s)\n",
            (int)s->sc.search.replications, unit);
    fprintf(f, "  %-3s %-58s %10s %10s %9s %21s\n", "#", "deployment", "one seed", "mean", "± half", "interval");
    for (int32_t q = 0; q < n; q++) {
        const sim_search_result *r = &s->res[top[q]];
        if (r->rep_n < 2) continue;
        char iv[64];
        snprintf(iv, sizeof iv, "[%.1f, %.1f]", r->rep_low, r->rep_high);
        fprintf(f, "  %-3d %-58.58s %10.1f %10.1f %9.1f %21s%s\n", (int)q + 1, s->cands[top[q]].label, r->score,
                r->rep_mean, r->rep_half, iv, r->rep_tied ? "  indistinguishable from #1" : "");
    }
}

/* The search's one-line tally, the SLO and the objective. */
static void print_heading(const sim_search *s, const sim_search_stats *st, FILE *f)
{
    const sim_slo_cfg *slo = &s->sc.slo;
    const char *pn = pct_name(s->percentile);
    fprintf(f, "search: %lld candidates — %lld infeasible, %lld pruned by bound, %lld simulated (%lld meet the SLO); "
               "%lld simulations in %.1f s on %d worker%s%s\n",
            (long long)st->candidates, (long long)st->infeasible, (long long)st->pruned, (long long)st->evaluated,
            (long long)st->ok, (long long)st->simulations, st->wall_s, (int)st->workers, st->workers == 1 ? "" : "s",
            st->ranks > 1 ? " (MPI)" : "");
    char tb[32] = "any", db[32] = "any";
    if (slo->ttft_ms > 0) snprintf(tb, sizeof tb, "%g ms", slo->ttft_ms);
    if (slo->tpot_ms > 0) snprintf(db, sizeof db, "%g ms", slo->tpot_ms);
    if (s->classes) fprintf(f, "SLO: every class's own (workload.classes.*.slo) at %s; ", pn);
    else fprintf(f, "SLO: TTFT %s <= %s, TPOT %s <= %s; ", pn, tb, pn, db);
    fprintf(f, "%s; objective: %s\n",
            s->fixed ? (s->classes  ? "evaluated at the classes' own arrival rates"
                       : s->n_as > 0 ? "evaluated at the scenario's own arrivals"
                       : s->closed ? "evaluated at the scenario's closed-loop concurrency"
                                   : "evaluated at search.rate")
                     : "highest SLO-meeting rate per candidate",
            s->objective_energy ? "fewest joules per output token at the highest SLO-meeting rate"
            : s->objective_cost ? (s->n_as > 0 ? "lowest USD per million output tokens (per GPU-hour held)"
                                               : "lowest USD per million output tokens")
            : s->n_as > 0 ? "most SLO-meeting output tokens/s per GPU held (mean over the run)"
                          : "most SLO-meeting output tokens/s per GPU");
}

/* When no candidate meets the SLO: the first few that missed it, and why. */
static void print_none_meets(const sim_search *s, FILE *f)
{
    fprintf(f, "\nno candidate meets the SLO");
    int32_t shown = 0;
    for (int32_t i = 0; i < s->n && shown < 5; i++)
        if (s->res[i].status == SIM_CAND_SLO_MISSED || s->res[i].status == SIM_CAND_ERROR) {
            fprintf(f, "%s\n  %s: %s", shown ? "" : ":", s->cands[i].label, s->res[i].reason);
            shown++;
        }
    fputc('\n', f);
}

/* The two Pareto frontiers: goodput/GPU against tokens/s per user, and
 * against TTFT. */
static void print_pareto(const sim_search *s, FILE *f)
{
    const char *pn = pct_name(s->percentile);
    int32_t *par = malloc((size_t)s->n * sizeof *par);
    if (!par) return;
    int32_t np = sim_search_pareto(s, 0, par, s->n);
    fprintf(f, "\nPareto frontier: goodput/GPU vs tokens/s per user (%d points)\n", (int)np);
    header(s, f, 0);
    for (int32_t q = 0; q < np && q < 20; q++) row(s, f, q + 1, par[q], 0, -1);
    np = sim_search_pareto(s, 1, par, s->n);
    fprintf(f, "\nPareto frontier: goodput/GPU vs TTFT %s (%d points)\n", pn, (int)np);
    header(s, f, 0);
    for (int32_t q = 0; q < np && q < 20; q++) row(s, f, q + 1, par[q], 0, -1);
    free(par);
}

void sim_search_print_tables(const sim_search *s, FILE *f)
{
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    print_heading(s, &st, f);
    if (st.undecided > 0)
        fprintf(f, "INCOMPLETE: %lld of %lld candidates undecided (%s); the tables cover the %lld decided\n",
                (long long)st.undecided, (long long)st.candidates,
                st.interrupted ? "the search was interrupted" : "the search is still running",
                (long long)(st.candidates - st.undecided));
    if (st.notes[0]) fprintf(f, "notes: %s\n", st.notes);
    prices_summary(s, f);
    reasons_summary(s, f, SIM_CAND_INFEASIBLE, "infeasible (most common reasons)");
    reasons_summary(s, f, SIM_CAND_SLO_MISSED, "SLO unreachable analytically");
    int32_t k = s->sc.search.top_k, top[100], var[100];
    int32_t n = sim_search_ranking_distinct(s, top, var, k > 100 ? 100 : k);
    if (n == 0) {
        print_none_meets(s, f);
        return;
    }
    fprintf(f, "\ntop %d of %d distinct deployments meeting the SLO (%lld candidates with their scheduler variants; "
               "all in candidates.csv)\n%s"
               "  run/GPU: output tokens/s per GPU as `servesim run` reports the same simulation (first arrival to "
               "last completion,\n"
               "  the drain after the last arrival included); tok/s/u: decode speed per user; var: SLO-meeting "
               "scheduler variants\n",
            (int)(n < k ? n : k), (int)n, (long long)st.ok,
            s->n_as > 0 ? "  req/s: the rate served over the run; tok/s/GPU: SLO-meeting output tokens/s per GPU held "
                          "(the mean over the run: ranks);\n"
            : s->closed ? "  req/s: the rate served over the run (the scenario's own arrivals); tok/s/GPU: SLO-meeting "
                          "output tokens/s per GPU over the run (ranks);\n"
            : s->fixed  ? "  req/s: search.rate, the rate offered; tok/s/GPU: SLO-meeting output tokens/s per GPU at that "
                          "offered rate (ranks);\n"
                        : "  req/s: highest rate that meets the SLO; tok/s/GPU: SLO-meeting output tokens/s per GPU at "
                          "that offered rate (ranks);\n");
    header(s, f, 1);
    for (int32_t q = 0; q < n && q < k; q++) row(s, f, q + 1, top[q], 1, var[q]);
    if (s->hetero) fleets_table(s, f, top, n < k ? n : k);
    if (s->n_as > 0) autoscale_table(s, f, top, n < k ? n : k);
    replications_table(s, f, top, n < k ? n : k);
    print_pareto(s, f);
}

/* The candidate's pools: role, instances, layout, autoscale range and
 * (mixed fleets) GPU. */
static json_t *cand_pools_json(const sim_search *s, const sim_search_cand *c)
{
    json_t *pools = json_array();
    for (int32_t p = 0; p < c->n_pools; p++) {
        char ln[48];
        sim_search_layout_name(&c->pools[p], ln, sizeof ln);
        json_t *po = json_object();
        json_object_set_new(po, "role", json_string(sim_role_name(c->pools[p].role)));
        json_object_set_new(po, "instances", json_integer(c->pools[p].instances));
        json_object_set_new(po, "layout", json_string(ln));
        int32_t amin, astart;
        sim_search_autoscale_range(s, c, p, &amin, &astart);
        if (amin < c->pools[p].instances) {
            /* An autoscaled pool: instances is its max. */
            json_object_set_new(po, "autoscale_min", json_integer(amin));
            json_object_set_new(po, "autoscale_start", json_integer(astart));
        }
        if (s->hetero) {
            json_object_set_new(po, "gpu", json_string(c->pools[p].gpu));
            json_object_set_new(po, "gpus", json_integer(c->pools[p].instances * c->pools[p].gpus));
        }
        json_array_append_new(pools, po);
    }
    return pools;
}

/* The replications' interval of a candidate with two or more. */
static json_t *cand_replications_json(const sim_search_result *r)
{
    json_t *rp = json_object();
    json_object_set_new(rp, "n", json_integer(r->rep_n));
    json_object_set_new(rp, "mean", json_real(r->rep_mean));
    json_object_set_new(rp, "half_width", json_real(r->rep_half));
    json_object_set_new(rp, "low", json_real(r->rep_low));
    json_object_set_new(rp, "high", json_real(r->rep_high));
    json_object_set_new(rp, "indistinguishable_from_best", json_boolean(r->rep_tied));
        return rp;
}

/* A candidate that meets the SLO: its rate, goodput, latencies, cost,
 * energy, autoscaling figures, score and replications. */
static void cand_ok_json(const sim_search *s, const sim_search_cand *c, const sim_search_result *r, json_t *o)
{
    json_object_set_new(o, "rate", json_real(r->rate));
    json_object_set_new(o, "goodput_per_gpu", json_real(r->goodput_per_gpu));
    json_object_set_new(o, "run_tok_s_gpu", json_real(r->run_tok_s_gpu));
    json_object_set_new(o, "tok_s_user", json_real(r->tok_s_user));
    json_object_set_new(o, "ttft_ms", json_real(r->ttft_ms));
    json_object_set_new(o, "tpot_ms", json_real(r->tpot_ms));
    if (r->cost_per_mtok > 0) json_object_set_new(o, "cost_per_mtok", json_real(r->cost_per_mtok));
    if (s->hetero && r->price > 0) json_object_set_new(o, "usd_per_hour", json_real(r->price * c->gpus));
    if (r->joules_per_token > 0) json_object_set_new(o, "joules_per_output_token", json_real(r->joules_per_token));
    if (s->n_as > 0) {
        json_object_set_new(o, "gpus_held", json_real(r->gpus_held));
        json_object_set_new(o, "gpu_hours", json_real(r->gpu_hours));
        json_object_set_new(o, "requests_missed", json_integer(r->requests_missed));
        if (r->price > 0) json_object_set_new(o, "usd", json_real(r->price * r->gpu_hours));
    }
    json_object_set_new(o, "score", json_real(r->score));
    if (r->rep_n >= 2) json_object_set_new(o, "replications", cand_replications_json(r));
}

static json_t *cand_json(const sim_search *s, int32_t i)
{
    const sim_search_cand *c = &s->cands[i];
    const sim_search_result *r = &s->res[i];
    static const char *const st[] = {"pending", "infeasible", "pruned", "slo_missed", "ok", "error"};
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(c->id));
    json_object_set_new(o, "label", json_string(c->label));
    json_object_set_new(o, "status", json_string(st[r->status]));
    json_object_set_new(o, "gpu", json_string(c->gpu));
    json_object_set_new(o, "mode", json_string(sim_mode_name(c->mode)));
    json_object_set_new(o, "gpus", json_integer(c->gpus));
    if (r->prices[0]) json_object_set_new(o, "prices", json_string(r->prices));
    json_object_set_new(o, "pools", cand_pools_json(s, c));
    json_object_set_new(o, "max_seqs", json_integer(c->max_seqs));
    json_object_set_new(o, "max_batched_tokens", json_integer(c->max_batched_tokens));
    json_object_set_new(o, "chunk_tokens", json_integer(c->chunk_tokens));
    if (c->lambda >= 0) json_object_set_new(o, "lambda", json_real(c->lambda));
    if (c->draft_tokens >= 0) json_object_set_new(o, "draft_tokens", json_integer(c->draft_tokens));
    if (c->encode_instances >= 0) {
        json_object_set_new(o, "encode_instances", json_integer(c->encode_instances));
        if (c->encode_instances > 0) json_object_set_new(o, "encode_gpu", json_string(c->encode_gpu));
    }
    if (c->autoscale >= 0) json_object_set_new(o, "autoscale", json_boolean(c->autoscale == 1));
    json_object_set_new(o, "bound_rate", json_real(r->bound_rate));
    if (r->status == SIM_CAND_OK) cand_ok_json(s, c, r, o);
    json_object_set_new(o, "probes", json_integer(r->n_probes));
    json_object_set_new(o, "reason", json_string(r->reason));
    char w[512];
    sim_search_why_lost(s, i, w, sizeof w);
    if (w[0]) json_object_set_new(o, "why_lost", json_string(w));
    return o;
}

int sim_search_write_json(const sim_search *s, FILE *f)
{
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    json_t *o = json_object();
    json_object_set_new(o, "complete", json_boolean(st.undecided == 0));
    json_object_set_new(o, "interrupted", json_boolean(st.interrupted));
    json_object_set_new(o, "undecided", json_integer(st.undecided));
    json_object_set_new(o, "candidates", json_integer(st.candidates));
    json_object_set_new(o, "infeasible", json_integer(st.infeasible));
    json_object_set_new(o, "pruned", json_integer(st.pruned));
    json_object_set_new(o, "simulated", json_integer(st.evaluated));
    json_object_set_new(o, "meet_slo", json_integer(st.ok));
    json_object_set_new(o, "simulations", json_integer(st.simulations));
    json_object_set_new(o, "wall_s", json_real(st.wall_s));
    json_object_set_new(o, "workers", json_integer(st.workers));
    json_object_set_new(o, "ranks", json_integer(st.ranks));
    json_object_set_new(o, "percentile", json_real(st.percentile));
    json_object_set_new(o, "objective", json_string(st.objective_energy ? "energy" : st.objective_cost ? "cost" : "goodput_per_gpu"));
    json_object_set_new(o, "fixed_rate", json_boolean(st.fixed_rate));
    json_object_set_new(o, "notes", json_string(st.notes));
    json_object_set_new(o, "replications", json_integer(s->sc.search.replications));
    int32_t top[100], var[100], k = s->sc.search.top_k;
    int32_t n = sim_search_ranking_distinct(s, top, var, k > 100 ? 100 : k);
    json_t *ta = json_array();
    for (int32_t q = 0; q < n && q < k; q++) {
        json_t *c = cand_json(s, top[q]);
        json_object_set_new(c, "variants_meeting_slo", json_integer(var[q]));
        json_array_append_new(ta, c);
    }
    json_object_set_new(o, "top", ta);
    int32_t *par = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *par);
    if (!par) {
        json_decref(o);
        return SIM_ENOMEM;
    }
    for (int against = 0; against < 2; against++) {
        int32_t np = sim_search_pareto(s, against, par, s->n);
        json_t *pa = json_array();
        for (int32_t q = 0; q < np; q++) json_array_append_new(pa, json_integer(par[q]));
        json_object_set_new(o, against ? "pareto_ttft" : "pareto_user", pa);
    }
    free(par);
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(o);
    return rc < 0 ? SIM_EIO : 0;
}

static void csv_str(FILE *f, const char *v)
{
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"') fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

int sim_search_write_csv(const sim_search *s, FILE *f)
{
    static const char *const st[] = {"pending", "infeasible", "pruned", "slo_missed", "ok", "error"};
    const char *unit = s->objective_energy ? "output tokens per joule at the highest SLO-meeting rate (higher uses "
                                             "less energy)"
                       : s->objective_cost ? "SLO-meeting output tokens/s per GPU per USD/GPU-hour (higher is cheaper)"
                                           : "SLO-meeting output tokens/s per GPU";
    sim_search_stats ss;
    sim_search_stats_get(s, &ss);
    if (ss.undecided > 0)
        fprintf(f, "# INCOMPLETE: %lld of %lld candidates undecided (status pending: %s)\n", (long long)ss.undecided,
                (long long)ss.candidates, ss.interrupted ? "the search was interrupted" : "the search is still running");
    /* '#' lines: read with pandas.read_csv(..., comment='#') or skip them. */
    fprintf(f, "# servesim search candidates: every candidate enumerated, one row each (all scheduler variants)\n"
               "# status: ok (meets the SLO at rate), slo_missed, pruned (its bound cannot reach the top-k), "
               "infeasible, error\n"
               "# bound_rate: analytic upper bound on the rate (req/s); rate: highest SLO-meeting rate (req/s)\n"
               "# goodput_per_gpu: SLO-meeting output tokens/s per GPU at rate; run_tok_s_gpu: output tokens/s per "
               "GPU as servesim run reports it (drain included)\n"
               "# score (and the numbers in a pruned reason 'bound B < #K's S'): %s;\n"
               "#   B is this candidate's bound, S the score of the K-th best simulated candidate when it was pruned\n"
               "# ttft_ms, tpot_ms: at the SLO percentile (%s); tok_s_user: 1000 / mean TPOT; cost_per_mtok: USD per "
               "million output tokens (0: no price)\n",
            unit, pct_name(s->percentile));
    if (s->n_drafts > 0)
        fprintf(f, "# draft_tokens: speculative draft tokens per step of the pools that decode (search.draft_tokens)\n");
    if (s->n_enc > 0)
        fprintf(f, "# encode_instances: one-GPU encoders of the images' encode pool, 0 = the instances encode "
                   "(search.encode_instances); counted in gpus\n");
    if (s->n_as > 0)
        fprintf(f, "# autoscale: 1 = autoscaled (gpus at its max), 0 = fixed (search.autoscale); gpus_held: mean GPUs "
                   "held over the run (t = 0 to its end), gpu_hours: their GPU-hours, requests_missed: completed "
                   "outside the SLO (simulated candidates)\n");
    fprintf(f, "id,status,label,gpu,mode,gpus,requests,bound_rate,rate,goodput_per_gpu,run_tok_s_gpu,tok_s_user,"
               "ttft_ms,tpot_ms,cost_per_mtok,score,probes,prices,reason%s%s%s\n",
            s->n_drafts > 0 ? ",draft_tokens" : "", s->n_enc > 0 ? ",encode_instances" : "",
            s->n_as > 0 ? ",autoscale,gpus_held,gpu_hours,requests_missed" : "");
    for (int32_t i = 0; i < s->n; i++) {
        const sim_search_cand *c = &s->cands[i];
        const sim_search_result *r = &s->res[i];
        fprintf(f, "%d,%s,", (int)c->id, st[r->status]);
        csv_str(f, c->label);
        char gl[200];
        snprintf(gl, sizeof gl, "%s", c->gpu);
        for (int32_t p = 1; s->hetero && p < c->n_pools; p++)
            snprintf(gl + strlen(gl), sizeof gl - strlen(gl), "+%s", c->pools[p].gpu);
        fprintf(f, ",%s,%s,%d,%lld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,", gl, sim_mode_name(c->mode),
                (int)c->gpus, (long long)r->requests, r->bound_rate, r->rate, r->goodput_per_gpu, r->run_tok_s_gpu,
                r->tok_s_user, r->ttft_ms, r->tpot_ms, r->cost_per_mtok, r->score, (int)r->n_probes);
        csv_str(f, r->prices);
        fputc(',', f);
        csv_str(f, r->reason);
        if (s->n_drafts > 0) fprintf(f, ",%d", (int)c->draft_tokens);
        if (s->n_enc > 0) fprintf(f, ",%d", (int)c->encode_instances);
        if (s->n_as > 0)
            fprintf(f, ",%d,%.6g,%.6g,%lld", (int)c->autoscale, r->gpus_held, r->gpu_hours, (long long)r->requests_missed);
        fputc('\n', f);
    }
    return ferror(f) ? SIM_EIO : 0;
}

/* ---- scenario YAML from the schema table -------------------------------- */

static void yaml_value(FILE *f, const sim_schema_field *fd, const void *p)
{
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    double d;
    int e;
    switch (fd->type) {
    case SIM_SCHEMA_PATH:
    case SIM_SCHEMA_MODEL: {
        const char *v = p;
        char abs[PATH_MAX];
        /* Paths were resolved against the scenario's folder; written
         * absolute so the file works from wherever it is saved. */
        int is_path = fd->type == SIM_SCHEMA_PATH || strstr(v, ".json") || strstr(v, ".yaml") || strstr(v, ".yml");
        if (is_path && v[0] && v[0] != '/' && realpath(v, abs)) v = abs;
        sim_yaml_write_quoted(f, v);
        break;
    }
    case SIM_SCHEMA_STR: sim_yaml_write_quoted(f, p); break;
    case SIM_SCHEMA_I32: memcpy(&i32, p, sizeof i32); fprintf(f, "%d", (int)i32); break;
    case SIM_SCHEMA_I64: memcpy(&i64, p, sizeof i64); fprintf(f, "%lld", (long long)i64); break;
    case SIM_SCHEMA_U64: memcpy(&u64, p, sizeof u64); fprintf(f, "%llu", (unsigned long long)u64); break;
    case SIM_SCHEMA_F64: memcpy(&d, p, sizeof d); fprintf(f, "%.17g", d); break;
    case SIM_SCHEMA_F64S: {
        char buf[256];
        sim_schema_f64s_format(p, buf, sizeof buf);
        fputs(buf, f);
        break;
    }
    case SIM_SCHEMA_BOOL: memcpy(&i32, p, sizeof i32); fputs(i32 ? "true" : "false", f); break;
    case SIM_SCHEMA_ENUM: {
        memcpy(&e, p, sizeof e);
        const char *nm = sim_schema_enum_name(fd, e);
        fputs(nm ? nm : "?", f);
        break;
    }
    default: break;
    }
}

static int differs(const sim_schema_field *fd, const void *a, const void *b)
{
    if (fd->type == SIM_SCHEMA_STR || fd->type == SIM_SCHEMA_PATH || fd->type == SIM_SCHEMA_MODEL)
        return strncmp(a, b, fd->size) != 0;
    return memcmp(a, b, fd->size) != 0;
}

/* Prints `path` (dotted, relative to the block) as nested YAML, opening the
 * sections that are not open yet; open[] holds the current section path. */
static void yaml_key(FILE *f, const char *path, char open[8][64], int *n_open, int base_indent, const char *first_prefix,
                     int *first)
{
    char comp[8][64];
    int nc = 0;
    const char *p = path;
    while (*p && nc < 8) {
        const char *d = strchr(p, '.');
        size_t l = d ? (size_t)(d - p) : strlen(p);
        snprintf(comp[nc++], 64, "%.*s", (int)l, p);
        p = d ? d + 1 : p + l;
    }
    int k = 0;
    while (k < *n_open && k < nc - 1 && strcmp(open[k], comp[k]) == 0) k++;
    *n_open = k;
    for (int j = k; j < nc; j++) {
        if (*first && first_prefix) {
            fprintf(f, "%*s%s", base_indent - (int)strlen(first_prefix), "", first_prefix);
            *first = 0;
        } else {
            fprintf(f, "%*s", base_indent + 2 * j, "");
        }
        if (j < nc - 1) {
            fprintf(f, "%s:\n", comp[j]);
            snprintf(open[(*n_open)++], 64, "%s", comp[j]);
        } else {
            fprintf(f, "%s:", comp[j]);
        }
    }
}

static void yaml_pools(FILE *f, const sim_scenario *sc, const sim_scenario *def)
{
    size_t nt;
    const sim_schema_field *t = sim_schema_table(&nt);
    const char *pre = "deployment.pools.*.";
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        char open[8][64];
        int n_open = 0, first = 1;
        for (size_t i = 0; i < nt; i++) {
            if (t[i].in_pool != SIM_SCHEMA_IN_POOL || t[i].type == SIM_SCHEMA_MAP || t[i].type == SIM_SCHEMA_LIST)
                continue;
            if (strncmp(t[i].path, pre, strlen(pre)) != 0) continue;
            const char *rel = t[i].path + strlen(pre);
            const void *v = (const char *)pc + t[i].offset, *dv = (const char *)&def->deployment.pools[0] + t[i].offset;
            int always = strcmp(rel, "role") == 0 || strcmp(rel, "instances") == 0 || strncmp(rel, "parallel.", 9) == 0 ||
                         strncmp(rel, "scheduler.max", 13) == 0 || strcmp(rel, "scheduler.chunk_tokens") == 0;
            if (!always && !differs(&t[i], v, dv)) continue;
            if (strncmp(rel, "parallel.", 9) == 0 && !differs(&t[i], v, dv) && strcmp(rel, "parallel.tp") != 0 &&
                strcmp(rel, "parallel.pp") != 0 && strcmp(rel, "parallel.dp") != 0 && strcmp(rel, "parallel.ep") != 0 &&
                strcmp(rel, "parallel.dcp") != 0)
                continue;
            yaml_key(f, rel, open, &n_open, 6, "- ", &first);
            fputc(' ', f);
            yaml_value(f, &t[i], v);
            fputc('\n', f);
        }
    }
}

/* workload.classes: each item's keys that differ from what the loader
 * starts the item from (the workload's own keys), and its name. */
static void yaml_classes(FILE *f, const sim_scenario *sc)
{
    size_t nt;
    const sim_schema_field *t = sim_schema_table(&nt);
    const char *pre = "workload.classes.*.";
    for (int32_t c = 0; c < sc->workload.n_classes; c++) {
        const sim_class_cfg *cl = &sc->workload.classes[c];
        sim_class_cfg start;
        sim_class_from_workload(&start, &sc->workload);
        char open[8][64];
        int n_open = 0, first = 1;
        for (size_t i = 0; i < nt; i++) {
            if (t[i].in_pool != SIM_SCHEMA_IN_CLASS || t[i].type == SIM_SCHEMA_MAP) continue;
            const char *rel = t[i].path + strlen(pre);
            const void *v = (const char *)cl + t[i].offset, *dv = (const char *)&start + t[i].offset;
            if (strcmp(rel, "name") != 0 && !differs(&t[i], v, dv)) continue;
            yaml_key(f, rel, open, &n_open, 6, "- ", &first);
            fputc(' ', f);
            yaml_value(f, &t[i], v);
            fputc('\n', f);
        }
    }
}

int sim_search_write_yaml(const sim_search *s, int32_t i, FILE *f, sim_err *err)
{
    sim_scenario *sc = malloc(sizeof *sc), *def = malloc(sizeof *def);
    int rc = 0;
    if (!sc || !def) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto out;
    }
    const sim_search_result *r = &s->res[i];
    if ((rc = sim_search_apply(s, i, s->closed ? 0 : r->rate, r->requests, sc, err)) < 0) goto out;
    sim_scenario_defaults(def);
    size_t nl = strlen(sc->name);
    if (nl + 12 < sizeof sc->name) memcpy(sc->name + nl, "-recommended", 13);
    sc->search = def->search; /* the search block is not part of the deployment */
    fprintf(f, "# Recommended by `servesim search` (%s): %s\n", s->sc.source_path[0] ? s->sc.source_path : "scenario",
            s->cands[i].label);
    sim_search_stats ss;
    sim_search_stats_get(s, &ss);
    if (ss.undecided > 0)
        fprintf(f, "# INCOMPLETE: the best of the candidates decided before the search %s (%lld of %lld undecided).\n",
                ss.interrupted ? "was interrupted" : "finished", (long long)ss.undecided, (long long)ss.candidates);
    if (r->status == SIM_CAND_OK && s->n_as > 0)
        fprintf(f, "# Over the scenario's own arrivals (%.4g req/s served): TTFT %s %.0f ms, TPOT %s %.1f ms,\n"
                   "#   %lld requests outside the SLO; %.2f GPUs held on average of %d (%.3f GPU-hours from t = 0\n"
                   "#   to the run's end); %.1f SLO-meeting output tok/s per GPU held (what the search ranks by).\n"
                   "# `servesim run` on this file replays the search's simulation exactly.\n",
                r->rate, pct_name(s->percentile), r->ttft_ms, pct_name(s->percentile), r->tpot_ms,
                (long long)r->requests_missed, r->gpus_held, (int)s->cands[i].gpus, r->gpu_hours, r->goodput_per_gpu);
    else if (r->status == SIM_CAND_OK)
        fprintf(f, "# At %.4g req/s with %lld requests: TTFT %s %.0f ms, TPOT %s %.1f ms;\n"
                   "#   %.1f output tok/s per GPU meeting the SLO at the offered rate (rate x SLO-meeting share x mean\n"
                   "#   output tokens / GPUs: what the search ranks by);\n"
                   "#   %.1f output tok/s/GPU as `servesim run` of this file reports it (first arrival to last\n"
                   "#   completion: the drain after the last arrival included, so lower on a short run).\n"
                   "# `servesim run` on this file replays the search's simulation exactly.\n",
                r->rate, (long long)r->requests, pct_name(s->percentile), r->ttft_ms, pct_name(s->percentile),
                r->tpot_ms, r->goodput_per_gpu, r->run_tok_s_gpu);
    size_t nt;
    const sim_schema_field *t = sim_schema_table(&nt);
    char open[8][64];
    int n_open = 0, dummy = 0;
    for (size_t k = 0; k < nt; k++) {
        const sim_schema_field *fd = &t[k];
        if (fd->in_pool) continue;
        if (strncmp(fd->path, "search", 6) == 0 || strncmp(fd->path, "sweep", 5) == 0) continue;
        if (fd->type == SIM_SCHEMA_LIST && !strcmp(fd->path, "workload.classes")) {
            if (sc->workload.n_classes == 0) continue;
            yaml_key(f, fd->path, open, &n_open, 0, NULL, &dummy);
            fputc('\n', f);
            n_open = 0;
            yaml_classes(f, sc);
            continue;
        }
        if (fd->type == SIM_SCHEMA_LIST) {
            yaml_key(f, "deployment.pools", open, &n_open, 0, NULL, &dummy);
            fputc('\n', f);
            n_open = 0;
            yaml_pools(f, sc, def);
            continue;
        }
        if (fd->type == SIM_SCHEMA_MAP) continue;
        const void *v = (const char *)sc + fd->offset, *dv = (const char *)def + fd->offset;
        int always = strcmp(fd->path, "model") == 0 || strcmp(fd->path, "name") == 0 || strcmp(fd->path, "seed") == 0 ||
                     strcmp(fd->path, "hardware.gpu") == 0 || strcmp(fd->path, "deployment.mode") == 0 ||
                     strcmp(fd->path, "workload.requests") == 0;
        if (!always && !differs(fd, v, dv)) continue;
        yaml_key(f, fd->path, open, &n_open, 0, NULL, &dummy);
        fputc(' ', f);
        yaml_value(f, fd, v);
        fputc('\n', f);
    }
    if (ferror(f)) rc = sim_err_set(err, SIM_EIO, "writing the recommended scenario failed");
out:
    free(sc);
    free(def);
    return rc;
}

/* ---- launch files ---------------------------------------------------------- */

int sim_search_write_launch(const sim_search *s, int32_t i, sim_launch_kind k, FILE *f, sim_err *err)
{
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    const sim_search_result *r = &s->res[i];
    int rc = sim_search_apply(s, i, r->rate, r->requests, sc, err);
    if (rc == 0) rc = sim_launch_write(k, sc, s->cands[i].label, f, err);
    free(sc);
    return rc;
}
