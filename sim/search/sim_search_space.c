/* sim_search_space — enumerates the candidates of a search (see
 * sim_search.h): lists from the `search:` block or defaults for the model,
 * layouts written as "tp4pp2", "tp1dp8ep8", "tp8dcp2" (tp pp dp ep dcp sp,
 * optionally separated by - _ .), instance counts that fill the GPU budget
 * (or every count up to it when evaluating at a fixed rate). */
#include "sim_search_impl.h"
#include "sim_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LIST 64
#define MAX_LAYOUTS 48

static const char *default_seqs = "64,128,256,512";
static const char *default_mbt = "8192,16384";
static const char *default_chunk = "2048";

/* The per-role GPU type lists (search.{prefill,decode,attention,ffn}_gpus),
 * in this order, their keys and roles. */
static const char *const role_gpu_keys[4] = {"search.prefill_gpus", "search.decode_gpus", "search.attention_gpus",
                                             "search.ffn_gpus"};
static const sim_role role_gpu_roles[4] = {SIM_ROLE_PREFILL, SIM_ROLE_DECODE, SIM_ROLE_ATTENTION, SIM_ROLE_FFN};

static void role_gpu_lists(const sim_search_cfg *cfg, const char *lists[4])
{
    lists[0] = cfg->prefill_gpus;
    lists[1] = cfg->decode_gpus;
    lists[2] = cfg->attention_gpus;
    lists[3] = cfg->ffn_gpus;
}

/* Splits a comma list into trimmed items; returns the count or -1 if more
 * than max. */
static int split_list(const char *list, char items[][64], int max)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t')) t--;
        if (n == max) return -1;
        snprintf(items[n], 64, "%.*s", (int)(t - p), p);
        n++;
        p = e;
    }
    return n;
}

int sim_search_parse_ints_in(const char *list, int32_t *out, int32_t max, int32_t lo, int32_t hi, const char *key,
                             sim_err *err)
{
    char items[MAX_LIST][64];
    int n = split_list(list, items, MAX_LIST < max ? MAX_LIST : max);
    if (n < 0) return sim_err_set(err, SIM_EINVAL, "%s: more than %d values", key, (int)max);
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (sim_parse_i64(items[i], &v) != SIM_PARSE_OK || v < lo || v > hi) {
            if (lo == 1 && hi == 100000000)
                return sim_err_set(err, SIM_EINVAL, "%s: '%s' is not a positive integer", key, items[i]);
            return sim_err_set(err, SIM_EINVAL, "%s: '%s' is not an integer from %d to %d", key, items[i], (int)lo,
                               (int)hi);
        }
        out[i] = (int32_t)v;
    }
    return n;
}

int sim_search_parse_ints(const char *list, int32_t *out, int32_t max, const char *key, sim_err *err)
{
    return sim_search_parse_ints_in(list, out, max, 1, 100000000, key, err);
}

int sim_search_parse_doubles(const char *list, double *out, int32_t max, const char *key, sim_err *err)
{
    char items[MAX_LIST][64];
    int n = split_list(list, items, MAX_LIST < max ? MAX_LIST : max);
    if (n < 0) return sim_err_set(err, SIM_EINVAL, "%s: more than %d values", key, (int)max);
    for (int i = 0; i < n; i++) {
        double v;
        if (sim_parse_double(items[i], &v) != SIM_PARSE_OK || !(v >= 0))
            return sim_err_set(err, SIM_EINVAL, "%s: '%s' is not a number >= 0", key, items[i]);
        out[i] = v;
    }
    return n;
}

static int parse_layout(const char *s, sim_search_pool *p, const char *key, sim_err *err)
{
    static const char *const names[] = {"dcp", "tp", "pp", "dp", "ep", "sp"};
    int32_t *fields[] = {&p->dcp, &p->tp, &p->pp, &p->dp, &p->ep, &p->sp};
    int seen[6] = {0};
    memset(p, 0, sizeof *p);
    p->tp = p->pp = p->dp = p->ep = p->dcp = p->sp = 1;
    const char *q = s;
    if (!*q) return sim_err_set(err, SIM_EINVAL, "%s: empty layout", key);
    while (*q) {
        if (*q == '-' || *q == '_' || *q == '.') {
            q++;
            continue;
        }
        int k = -1;
        for (int j = 0; j < 6 && k < 0; j++)
            if (strncmp(q, names[j], strlen(names[j])) == 0) k = j;
        if (k < 0 || !isdigit((unsigned char)q[strlen(names[k])]))
            return sim_err_set(err, SIM_EINVAL,
                               "%s: layout '%s': expected tpN, ppN, dpN, epN, dcpN or spN at '%s'", key, s, q);
        q += strlen(names[k]);
        size_t nd = 0;
        while (isdigit((unsigned char)q[nd])) nd++;
        int64_t v = 0;
        if (sim_parse_i64_n(q, nd, &v) != SIM_PARSE_OK || v < 1 || v > 1024 || seen[k])
            return sim_err_set(err, SIM_EINVAL, "%s: layout '%s': bad or repeated %s", key, s, names[k]);
        seen[k] = 1;
        *fields[k] = (int32_t)v;
        q += nd;
    }
    p->gpus = p->tp * p->pp * p->dp * p->sp;
    return 0;
}

void sim_search_layout_name(const sim_search_pool *p, char *buf, size_t len)
{
    int n = snprintf(buf, len, "tp%d", (int)p->tp);
    if (p->pp > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "pp%d", (int)p->pp);
    if (p->dp > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "dp%d", (int)p->dp);
    if (p->ep > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "ep%d", (int)p->ep);
    if (p->dcp > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "dcp%d", (int)p->dcp);
    if (p->sp > 1 && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, "sp%d", (int)p->sp);
}

static int parse_layouts(const char *list, sim_search_pool *out, const char *key, sim_err *err)
{
    char items[MAX_LIST][64];
    int n = split_list(list, items, MAX_LAYOUTS);
    if (n < 0) return sim_err_set(err, SIM_EINVAL, "%s: more than %d layouts", key, MAX_LAYOUTS);
    for (int i = 0; i < n; i++) {
        int rc = parse_layout(items[i], &out[i], key, err);
        if (rc < 0) return rc;
    }
    return n;
}

static int add_layout(sim_search_pool *out, int n, int32_t tp, int32_t pp, int32_t dp, int32_t ep, int32_t max_gpus)
{
    if (n >= MAX_LAYOUTS || tp * pp * dp > max_gpus) return n;
    sim_search_pool p = {.tp = tp, .pp = pp, .dp = dp, .ep = ep, .dcp = 1, .sp = 1, .gpus = tp * pp * dp};
    out[n] = p;
    return n + 1;
}

/* Default layouts for a role: TP within a node (and PP across two stages)
 * for dense models; for MoE also expert parallelism over the TP ranks and
 * attention DP with experts over all ranks; FFN pools of MoE models shard
 * the experts over DP ranks. Layouts that do not fit are dropped later by
 * the cost model, with the reason. */
static int default_layouts(const sim_search *s, sim_role role, sim_search_pool *out)
{
    int gpn = sim_hardware_gpus_per_node(&s->sc.hardware);
    int32_t G = s->sc.search.max_gpus;
    int moe = s->model.experts > 0, n = 0;
    if (role == SIM_ROLE_FFN) {
        for (int32_t d = 1; d <= 2 * gpn; d *= 2) {
            if (moe) n = add_layout(out, n, 1, 1, d, d, G);
            else if (d <= gpn) n = add_layout(out, n, d, 1, 1, 1, G);
        }
        return n;
    }
    for (int32_t tp = 1; tp <= gpn; tp *= 2) {
        n = add_layout(out, n, tp, 1, 1, 1, G);
        if (moe && tp > 1) n = add_layout(out, n, tp, 1, 1, tp, G);
    }
    n = add_layout(out, n, gpn, 2, 1, 1, G);
    if (gpn >= 4) n = add_layout(out, n, gpn / 2, 2, 1, 1, G);
    if (moe) {
        n = add_layout(out, n, gpn, 2, 1, gpn, G);
        for (int32_t dp = 2; dp <= gpn; dp *= 2) n = add_layout(out, n, 1, 1, dp, dp, G);
        n = add_layout(out, n, 2, 1, gpn / 2, gpn, G);
    }
    return n;
}

static int role_layouts(const sim_search *s, sim_role role, sim_search_pool *out, sim_err *err)
{
    const sim_search_cfg *c = &s->sc.search;
    const char *list = c->layouts, *key = "search.layouts";
    if (role == SIM_ROLE_PREFILL && c->prefill_layouts[0]) list = c->prefill_layouts, key = "search.prefill_layouts";
    if (role == SIM_ROLE_DECODE && c->decode_layouts[0]) list = c->decode_layouts, key = "search.decode_layouts";
    if (role == SIM_ROLE_ATTENTION && c->attention_layouts[0])
        list = c->attention_layouts, key = "search.attention_layouts";
    if (role == SIM_ROLE_FFN) list = c->ffn_layouts, key = "search.ffn_layouts";
    int n = list[0] ? parse_layouts(list, out, key, err) : default_layouts(s, role, out);
    if (n < 0) return n;
    for (int i = 0; i < n; i++) out[i].role = role;
    return n;
}

typedef struct {
    int32_t x, y;
} ratio;

static int parse_ratios(const char *list, ratio *out, const char *key, sim_err *err)
{
    char items[MAX_LIST][64];
    int n = split_list(list, items, MAX_LIST);
    if (n < 0) return sim_err_set(err, SIM_EINVAL, "%s: more than %d ratios", key, MAX_LIST);
    for (int i = 0; i < n; i++) {
        int64_t x = 0, y = 0;
        if (sim_parse_ratio(items[i], &x, &y) != SIM_PARSE_OK || x < 1 || y < 1 || x > INT32_MAX || y > INT32_MAX)
            return sim_err_set(err, SIM_EINVAL, "%s: '%s' is not a ratio like 1:3", key, items[i]);
        out[i].x = (int32_t)x;
        out[i].y = (int32_t)y;
    }
    return n;
}

/* Instance counts (a, b) of a two-pool deployment with per-instance GPUs
 * ga, gb. Max-rate search: each ratio scaled to the largest multiple that
 * fits, or (no ratios) every split that leaves no room for another instance.
 * Fixed rate: every multiple / split that fits, since fewer GPUs may do. */
static int two_pool_counts(const ratio *rs, int nr, int32_t ga, int32_t gb, int32_t G, int fixed,
                           ratio *out, int max)
{
    int n = 0;
    if (nr > 0) {
        for (int i = 0; i < nr; i++) {
            int32_t per = rs[i].x * ga + rs[i].y * gb, kmax = G / per;
            for (int32_t k = fixed ? 1 : kmax; k >= 1 && k <= kmax && n < max; k++) {
                ratio r = {rs[i].x * k, rs[i].y * k};
                int dup = 0;
                for (int j = 0; j < n; j++) dup |= out[j].x == r.x && out[j].y == r.y;
                if (!dup) out[n++] = r;
            }
        }
        return n;
    }
    int32_t gmin = ga < gb ? ga : gb;
    for (int32_t a = 1; a * ga + gb <= G; a++)
        for (int32_t b = 1; a * ga + b * gb <= G && n < max; b++)
            if (fixed || a * ga + b * gb + gmin > G) out[n++] = (ratio){a, b};
    return n;
}

static int push_cand(sim_search *s, const sim_search_cand *c, sim_err *err)
{
    if (s->n >= s->sc.search.max_candidates)
        return sim_err_set(err, SIM_ERANGE,
                           "the search space has more than search.max_candidates = %d candidates; "
                           "narrow search.layouts, ratios or scheduler lists, or raise max_candidates",
                           (int)s->sc.search.max_candidates);
    if (s->n == s->cap) {
        int32_t cap = s->cap ? 2 * s->cap : 256;
        sim_search_cand *nc = realloc(s->cands, (size_t)cap * sizeof *nc);
        if (!nc) return sim_err_set(err, SIM_ENOMEM, "out of memory enumerating candidates");
        s->cands = nc;
        s->cap = cap;
    }
    s->cands[s->n] = *c;
    s->cands[s->n].id = s->n;
    s->n++;
    return 0;
}

typedef struct {
    int32_t seqs, mbt, chunk;
} sched3;

/* Fills labels and totals, then one candidate per scheduler combination and λ. */
typedef struct {
    const int32_t *v;
    int n;                     /* 0: search.draft_tokens off */
} drafts;

/* "2x tp4 + 6D tp4" for c's pools (an autoscaled pool's count as min..max). */
static void pools_label(const sim_search *s, const sim_search_cand *c, char *pools, size_t len)
{
    size_t n = 0;
    pools[0] = '\0';
    for (int32_t p = 0; p < c->n_pools && n < len; p++) {
        char ln[48], cnt[32];
        const sim_search_pool *pp = &c->pools[p];
        sim_search_layout_name(pp, ln, sizeof ln);
        sim_search_autoscale_count(s, c, p, cnt, sizeof cnt);
        const char *tag = pp->role == SIM_ROLE_PREFILL ? "P" : pp->role == SIM_ROLE_DECODE ? "D"
                        : pp->role == SIM_ROLE_ATTENTION ? "A" : pp->role == SIM_ROLE_FFN ? "F" : "x";
        if (s->hetero)
            n += (size_t)snprintf(pools + n, len - n, "%s%s%s %s@%.24s", p ? " + " : "", cnt, tag, ln, pp->gpu);
        else
            n += (size_t)snprintf(pools + n, len - n, "%s%s%s %s", p ? " + " : "", cnt, tag, ln);
    }
}

static int emit(sim_search *s, sim_search_cand *base, const char *const *gpu, const sched3 *sch, int nsch,
                const double *lams, int nl, const drafts *dr, int multi_gpu, sim_err *err)
{
    char pools[200];
    base->gpus = base->encode_instances > 0 ? base->encode_instances : 0;
    for (int32_t p = 0; p < base->n_pools; p++) snprintf(base->pools[p].gpu, sizeof base->pools[p].gpu, "%s", gpu[p]);
    for (int32_t p = 0; p < base->n_pools; p++) base->gpus += base->pools[p].instances * base->pools[p].gpus;
    const int can_spec = sim_search_spec_possible(base);
    for (int i = 0; i < nsch; i++) {
        for (int j = 0; j < (nl ? nl : 1); j++) {
            for (int d = 0; d < (dr->n ? dr->n : 1); d++) {
                sim_search_cand c = *base;
                c.max_seqs = sch[i].seqs;
                c.max_batched_tokens = sch[i].mbt;
                c.chunk_tokens = sch[i].chunk;
                c.lambda = nl ? lams[j] : -1;
                c.draft_tokens = dr->n ? dr->v[d] : -1;
                if (c.draft_tokens > 0 && !can_spec) {
                    s->spec_skipped++;
                    continue;
                }
                char lam[32] = "", dt[24] = "", en[80] = "";
                if (nl) snprintf(lam, sizeof lam, " | lambda %g", lams[j]);
                if (dr->n) snprintf(dt, sizeof dt, " | draft %d", (int)c.draft_tokens);
                if (c.encode_instances >= 0) {
                    /* The encoders' type is named where it is not the one the label shows. */
                    if (c.encode_instances > 0 && (s->hetero || strcmp(c.encode_gpu, c.gpu) != 0))
                        snprintf(en, sizeof en, " | enc %d@%.40s", (int)c.encode_instances, c.encode_gpu);
                    else
                        snprintf(en, sizeof en, " | enc %d", (int)c.encode_instances);
                }
                /* search.autoscale: the fixed fleet and/or the autoscaled one (where a pool can change size). */
                for (int a = 0; a < (s->n_as ? s->n_as : 1); a++) {
                    c.autoscale = s->n_as ? s->as_v[a] : -1;
                    if (c.autoscale == 1 && !sim_search_autoscale_varies(s, &c)) {
                        s->as_skipped++;
                        continue;
                    }
                    pools_label(s, &c, pools, sizeof pools);
                    /* A label longer than its buffer is cut (a display string); its
                     * last character then says so. */
                    if (snprintf(c.label, sizeof c.label, "%.40s%s%s %.120s | seqs %d mbt %d chunk %d%s%s%s",
                                 multi_gpu && !s->hetero ? c.gpu : "", multi_gpu && !s->hetero ? ": " : "",
                                 sim_mode_name(c.mode), pools, (int)c.max_seqs, (int)c.max_batched_tokens,
                                 (int)c.chunk_tokens, lam, dt, en) >= (int)sizeof c.label)
                        c.label[sizeof c.label - 2] = '~';
                    int rc = push_cand(s, &c, err);
                    if (rc < 0) return rc;
                }
            }
        }
    }
    return 0;
}

double sim_search_price(const sim_scenario *sc, const char *gpu)
{
    char items[MAX_LIST][64];
    int n = split_list(sc->search.prices, items, MAX_LIST);
    for (int i = 0; i < n; i++) {
        char *eq = strchr(items[i], '=');
        if (!eq) continue;
        *eq = '\0';
        double usd; /* check_prices refused a bad price before any lookup */
        if (strcasecmp(items[i], gpu) == 0) return sim_parse_double(eq + 1, &usd) == SIM_PARSE_OK ? usd : 0;
    }
    return 0;
}

double sim_search_fleet_price(const sim_scenario *sc, const sim_search_cand *c)
{
    double usd = 0;
    int32_t gpus = 0;
    for (int32_t p = 0; p < c->n_pools; p++) {
        const sim_search_pool *pp = &c->pools[p];
        double price = sim_search_price(sc, pp->gpu[0] ? pp->gpu : c->gpu);
        if (price <= 0) return 0;
        usd += price * pp->instances * pp->gpus;
        gpus += pp->instances * pp->gpus;
    }
    if (c->encode_instances > 0) {
        /* The encode pool's one-GPU encoders at their own type's price. */
        double price = sim_search_price(sc, c->encode_gpu);
        if (price <= 0) return 0;
        usd += price * c->encode_instances;
        gpus += c->encode_instances;
    }
    if (gpus <= 0) return 0;
    /* One GPU type: its price exactly (no rounding through the sum). */
    int one = c->encode_instances <= 0 || strcmp(c->encode_gpu, c->gpu) == 0;
    for (int32_t p = 0; p < c->n_pools; p++) one &= !c->pools[p].gpu[0] || strcmp(c->pools[p].gpu, c->gpu) == 0;
    return one ? sim_search_price(sc, c->gpu) : usd / gpus;
}

const char *sim_search_unpriced_gpu(const sim_scenario *sc, const sim_search_cand *c)
{
    if (sim_search_price(sc, c->gpu) <= 0) return c->gpu;
    for (int32_t p = 0; p < c->n_pools; p++)
        if (c->pools[p].gpu[0] && sim_search_price(sc, c->pools[p].gpu) <= 0) return c->pools[p].gpu;
    if (c->encode_instances > 0 && sim_search_price(sc, c->encode_gpu) <= 0) return c->encode_gpu;
    return "";
}

static int check_prices(const sim_scenario *sc, sim_err *err)
{
    char items[MAX_LIST][64];
    int n = split_list(sc->search.prices, items, MAX_LIST);
    if (n < 0) return sim_err_set(err, SIM_EINVAL, "search.prices: too many entries");
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(items[i], '=');
        double usd;
        if (!eq || eq == items[i] || sim_parse_double(eq + 1, &usd) != SIM_PARSE_OK || !(usd > 0))
            return sim_err_set(err, SIM_EINVAL, "search.prices: '%s' is not gpu=USD-per-hour (> 0)", items[i]);
    }
    return 0;
}

/* The layouts of each role, as role_layouts gives them. */
enum { LAY_COLOCATED, LAY_PREFILL, LAY_DECODE, LAY_ATTENTION, LAY_FFN, LAY_ROLES };

/* What sim_search_enumerate crosses, parsed once from the search block:
 * the GPU types (search.gpus, and the per-role lists), the modes, the
 * scheduler triples, routing lambdas, draft lengths, xPyD and A:F ratios
 * and each role's layouts; cnt and asg are the enumeration's scratch. */
typedef struct {
    char gpus[16][64];
    int ng;
    char rg[4][16][64]; /* per role_gpu_keys list */
    int nrg[4];
    char modes[8][64];
    int nm;
    sched3 sch[512];
    int nsch;
    double lams[MAX_LIST];
    int nl;
    int32_t draft_v[SIM_SPEC_MAX_DRAFT + 1];
    drafts dr;
    ratio pdr[MAX_LIST], afr[MAX_LIST];
    int npd, naf;
    sim_search_pool lay[LAY_ROLES][MAX_LAYOUTS];
    int nlay[LAY_ROLES];
    ratio cnt[4096];
    char asg[4096][SIM_SEARCH_MAX_POOLS][64]; /* GPU type assignments of one mode */
} search_space;

/* search.gpus (default hardware.gpu), search.prices and the per-role GPU
 * lists, each checked against the catalogue with its key named. */
static int space_gpu_types(sim_search *s, search_space *sp, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    int rc;
    sp->ng = cfg->gpus[0] ? split_list(cfg->gpus, sp->gpus, 16) : 1;
    if (sp->ng < 0) return sim_err_set(err, SIM_EINVAL, "search.gpus: more than 16 GPU types");
    if (!cfg->gpus[0]) snprintf(sp->gpus[0], sizeof sp->gpus[0], "%.63s", s->sc.hardware.gpu);
    for (int g = 0; g < sp->ng; g++) {
        model_gpu mg;
        if ((rc = model_catalog_gpu(sp->gpus[g], &mg, err)) < 0)
            return sim_err_wrap(err, rc, cfg->gpus[0] ? "search.gpus" : "hardware.gpu");
    }
    if ((rc = check_prices(&s->sc, err)) < 0) return rc;
    const char *role_lists[4];
    role_gpu_lists(cfg, role_lists);
    s->hetero = 0;
    for (int r = 0; r < 4; r++) {
        sp->nrg[r] = 0;
        if (!role_lists[r][0]) continue;
        sp->nrg[r] = split_list(role_lists[r], sp->rg[r], 16);
        if (sp->nrg[r] < 0) return sim_err_set(err, SIM_EINVAL, "%s: more than 16 GPU types", role_gpu_keys[r]);
        if (sp->nrg[r] == 0)
            return sim_err_set(err, SIM_EINVAL, "%s: expected a comma-separated list of GPU catalogue names",
                               role_gpu_keys[r]);
        for (int g = 0; g < sp->nrg[r]; g++) {
            model_gpu mg;
            for (int h = 0; h < g; h++)
                if (strcasecmp(sp->rg[r][h], sp->rg[r][g]) == 0)
                    return sim_err_set(err, SIM_EINVAL, "%s: '%s' listed twice", role_gpu_keys[r], sp->rg[r][g]);
            if ((rc = model_catalog_gpu(sp->rg[r][g], &mg, err)) < 0)
                return sim_err_wrap(err, rc, "%s", role_gpu_keys[r]);
        }
        s->hetero = 1;
    }
    return SIM_OK;
}

/* search.modes, by default colocated and pd, and af for MoE models (not
 * with image inputs, which attention/FFN disaggregation does not model). */
static int space_modes(sim_search *s, search_space *sp, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    const char *mode_list = cfg->modes[0] ? cfg->modes : s->model.experts > 0 ? "colocated,pd,af" : "colocated,pd";
    if (!cfg->modes[0] && s->model.experts > 0 && s->images) {
        mode_list = "colocated,pd";
        size_t o = strlen(s->notes);
        snprintf(s->notes + o, sizeof s->notes - o, "af not searched: image inputs with attention/FFN "
                 "disaggregation are not modelled. ");
    }
    sp->nm = split_list(mode_list, sp->modes, 8);
    if (sp->nm <= 0) return sim_err_set(err, SIM_EINVAL, "search.modes: expected a list of colocated, pd, af, pd+af");
    return SIM_OK;
}

/* The scheduler triples (max_seqs × max_batched_tokens × chunk_tokens, a
 * chunk no larger than the batch), the lambdas (cache-aware routing only),
 * the draft lengths, the ratios and each role's layouts. */
static int space_values(sim_search *s, search_space *sp, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    int32_t seqs[MAX_LIST], mbts[MAX_LIST], chunks[MAX_LIST];
    int ns = sim_search_parse_ints(cfg->max_seqs[0] ? cfg->max_seqs : default_seqs, seqs, MAX_LIST,
                                   "search.max_seqs", err);
    int nb = ns < 0 ? ns : sim_search_parse_ints(cfg->max_batched_tokens[0] ? cfg->max_batched_tokens : default_mbt,
                                                 mbts, MAX_LIST, "search.max_batched_tokens", err);
    int nc = nb < 0 ? nb : sim_search_parse_ints(cfg->chunk_tokens[0] ? cfg->chunk_tokens : default_chunk, chunks,
                                                 MAX_LIST, "search.chunk_tokens", err);
    if (nc < 0) return nc;
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nb; j++)
            for (int k = 0; k < nc; k++)
                if (chunks[k] <= mbts[j] && sp->nsch < 512) sp->sch[sp->nsch++] = (sched3){seqs[i], mbts[j], chunks[k]};
    if (sp->nsch == 0)
        return sim_err_set(err, SIM_EINVAL, "search: no chunk_tokens value is <= a max_batched_tokens value");
    if (cfg->lambdas[0]) {
        if (s->sc.routing.policy == SIM_ROUTE_CACHE_AWARE) {
            if ((sp->nl = sim_search_parse_doubles(cfg->lambdas, sp->lams, MAX_LIST, "search.lambdas", err)) < 0)
                return sp->nl;
        } else {
            size_t o = strlen(s->notes);
            snprintf(s->notes + o, sizeof s->notes - o,
                     "search.lambdas ignored: routing.policy is %s, not cache_aware. ",
                     sim_route_policy_name(s->sc.routing.policy));
        }
    }
    int ndr = sim_search_spec_parse(cfg, sp->draft_v, SIM_SPEC_MAX_DRAFT + 1, err);
    if (ndr < 0) return ndr;
    sp->dr = (drafts){sp->draft_v, ndr};
    s->n_drafts = ndr;
    s->spec_skipped = 0;
    sp->npd = parse_ratios(cfg->pd_ratios, sp->pdr, "search.pd_ratios", err);
    sp->naf = sp->npd < 0 ? sp->npd : parse_ratios(cfg->af_ratios, sp->afr, "search.af_ratios", err);
    if (sp->naf < 0) return sp->naf;
    static const sim_role roles[LAY_ROLES] = {SIM_ROLE_COLOCATED, SIM_ROLE_PREFILL, SIM_ROLE_DECODE,
                                              SIM_ROLE_ATTENTION, SIM_ROLE_FFN};
    for (int r = 0; r < LAY_ROLES; r++)
        if ((sp->nlay[r] = role_layouts(s, roles[r], sp->lay[r], err)) < 0) return sp->nlay[r];
    return SIM_OK;
}

/* GPU type assignments of mode mn's pools into sp->asg: one per search.gpus
 * type (type g, every pool on it), or, where the mode's roles have their
 * own lists, every combination of those lists (a role without one takes
 * every search.gpus type), enumerated once (for g 0; none for the others).
 * Returns how many. */
static int gpu_assignments(search_space *sp, const char *mn, int g)
{
    /* The roles (role_gpu_keys index) of the mode's pools. */
    int roles[SIM_SEARCH_MAX_POOLS] = {-1, -1, -1}, npr = 0;
    if (strcmp(mn, "pd") == 0) roles[0] = 0, roles[1] = 1, npr = 2;
    else if (strcmp(mn, "af") == 0) roles[0] = 2, roles[1] = 3, npr = 2;
    else if (strcmp(mn, "pd+af") == 0) roles[0] = 0, roles[1] = 2, roles[2] = 3, npr = 3;
    int het = 0;
    for (int p = 0; p < npr; p++) het |= sp->nrg[roles[p]] > 0;
    if (!het) {
        for (int p = 0; p < SIM_SEARCH_MAX_POOLS; p++) snprintf(sp->asg[0][p], 64, "%s", sp->gpus[g]);
        return 1;
    }
    if (g != 0) return 0;
    int idx[SIM_SEARCH_MAX_POOLS] = {0, 0, 0}, done = 0, na = 0;
    while (!done && na < 4096) {
        for (int p = 0; p < npr; p++) {
            int r = roles[p];
            snprintf(sp->asg[na][p], 64, "%s", sp->nrg[r] ? sp->rg[r][idx[p]] : sp->gpus[idx[p]]);
        }
        na++;
        done = 1;
        for (int p = npr - 1; p >= 0 && done; p--) {
            int lim = sp->nrg[roles[p]] ? sp->nrg[roles[p]] : sp->ng;
            if (++idx[p] < lim) done = 0;
            else idx[p] = 0;
        }
    }
    return na;
}

static int space_emit(sim_search *s, const search_space *sp, sim_search_cand *c, const char *const *pool_gpu,
                      sim_err *err)
{
    return emit(s, c, pool_gpu, sp->sch, sp->nsch, sp->lams, sp->nl, &sp->dr, sp->ng > 1, err);
}

/* pd+af: prefill : attention from pd_ratios, attention : ffn from
 * af_ratios, every count that fills G (or any count, fixed). */
static int emit_pd_af(sim_search *s, search_space *sp, sim_search_cand *c, const char *const *pool_gpu, int32_t G,
                      sim_err *err)
{
    const sim_search_pool *lp = sp->lay[LAY_PREFILL], *la = sp->lay[LAY_ATTENTION], *lf = sp->lay[LAY_FFN];
    c->mode = SIM_MODE_PD_AF;
    c->n_pools = 3;
    for (int i = 0; i < sp->nlay[LAY_PREFILL]; i++)
        for (int j = 0; j < sp->nlay[LAY_ATTENTION]; j++)
            for (int k = 0; k < sp->nlay[LAY_FFN]; k++) {
                int32_t gp = lp[i].gpus, ga = la[j].gpus, gf = lf[k].gpus;
                for (int32_t x = 1; x * gp + ga + gf <= G; x++)
                    for (int32_t a = 1; x * gp + a * ga + gf <= G; a++)
                        for (int32_t f = 1; x * gp + a * ga + f * gf <= G; f++) {
                            int32_t used = x * gp + a * ga + f * gf;
                            int32_t gm = gp < ga ? gp : ga;
                            if (gf < gm) gm = gf;
                            if (!s->fixed && used + gm <= G) continue;
                            int ok = 1;
                            if (sp->npd) {
                                ok = 0;
                                for (int r = 0; r < sp->npd; r++) ok |= x * sp->pdr[r].y == a * sp->pdr[r].x;
                            }
                            if (ok && sp->naf) {
                                ok = 0;
                                for (int r = 0; r < sp->naf; r++) ok |= a * sp->afr[r].y == f * sp->afr[r].x;
                            }
                            if (!ok) continue;
                            c->pools[0] = lp[i];
                            c->pools[0].instances = x;
                            c->pools[1] = la[j];
                            c->pools[1].instances = a;
                            c->pools[2] = lf[k];
                            c->pools[2].instances = f;
                            int rc = space_emit(s, sp, c, pool_gpu, err);
                            if (rc < 0) return rc;
                        }
            }
    return SIM_OK;
}

/* The candidates of mode mn on GPU assignment ai (pool_gpu) within G GPUs. */
static int emit_mode(sim_search *s, search_space *sp, sim_search_cand *c, const char *mn, const char *const *pool_gpu,
                     int ai, int32_t G, sim_err *err)
{
    const int fixed = s->fixed;
    int rc;
    if (strcmp(mn, "colocated") == 0) {
        const sim_search_pool *lc = sp->lay[LAY_COLOCATED];
        c->mode = SIM_MODE_COLOCATED;
        c->n_pools = 1;
        for (int i = 0; i < sp->nlay[LAY_COLOCATED]; i++) {
            int32_t kmax = G / lc[i].gpus;
            for (int32_t k = fixed ? 1 : kmax; k >= 1 && k <= kmax; k++) {
                c->pools[0] = lc[i];
                c->pools[0].instances = k;
                if ((rc = space_emit(s, sp, c, pool_gpu, err)) < 0) return rc;
            }
        }
        return SIM_OK;
    }
    if (strcmp(mn, "pd") == 0 || strcmp(mn, "af") == 0) {
        int pd = mn[0] == 'p';
        c->mode = pd ? SIM_MODE_PD : SIM_MODE_AF;
        c->n_pools = 2;
        const sim_search_pool *L0 = sp->lay[pd ? LAY_PREFILL : LAY_ATTENTION], *L1 = sp->lay[pd ? LAY_DECODE : LAY_FFN];
        int n0 = sp->nlay[pd ? LAY_PREFILL : LAY_ATTENTION], n1 = sp->nlay[pd ? LAY_DECODE : LAY_FFN];
        if (!pd && n1 == 0) {
            if (ai == 0) {
                size_t o = strlen(s->notes);
                snprintf(s->notes + o, sizeof s->notes - o, "af skipped: no ffn layouts. ");
            }
            return SIM_OK;
        }
        for (int i = 0; i < n0; i++)
            for (int j = 0; j < n1; j++) {
                int n = two_pool_counts(pd ? sp->pdr : sp->afr, pd ? sp->npd : sp->naf, L0[i].gpus, L1[j].gpus, G,
                                        fixed, sp->cnt, 4096);
                for (int q = 0; q < n; q++) {
                    c->pools[0] = L0[i];
                    c->pools[0].instances = sp->cnt[q].x;
                    c->pools[1] = L1[j];
                    c->pools[1].instances = sp->cnt[q].y;
                    if ((rc = space_emit(s, sp, c, pool_gpu, err)) < 0) return rc;
                }
            }
        return SIM_OK;
    }
    if (strcmp(mn, "pd+af") == 0) {
        c->mode = SIM_MODE_PD_AF;
        c->n_pools = 3;
        return sp->nlay[LAY_FFN] == 0 ? SIM_OK : emit_pd_af(s, sp, c, pool_gpu, G, err);
    }
    return sim_err_set(err, SIM_EINVAL, "search.modes: unknown mode '%s' (colocated, pd, af, pd+af)", mn);
}

int sim_search_enumerate(sim_search *s, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    search_space *sp = calloc(1, sizeof *sp);
    if (!sp) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int rc;
    if ((rc = space_gpu_types(s, sp, err)) < 0 || (rc = space_modes(s, sp, err)) < 0 ||
        (rc = space_values(s, sp, err)) < 0)
        goto out;
    for (int g = 0; g < sp->ng; g++)
        for (int m = 0; m < sp->nm; m++)
            for (int ei = 0; ei < (s->n_enc ? s->n_enc : 1); ei++) {
                /* An encode pool of e one-GPU encoders takes e GPUs of the budget. */
                const int32_t enc = sim_search_encode_value(s, ei);
                const int32_t G = cfg->max_gpus - (enc > 0 ? enc : 0);
                int na = gpu_assignments(sp, sp->modes[m], g);
                for (int ai = 0; ai < na; ai++) {
                    sim_search_cand c;
                    memset(&c, 0, sizeof c);
                    snprintf(c.gpu, sizeof c.gpu, "%.63s", sp->asg[ai][0]);
                    sim_search_encode_set(s, &c, enc);
                    const char *const pool_gpu[SIM_SEARCH_MAX_POOLS] = {sp->asg[ai][0], sp->asg[ai][1],
                                                                        sp->asg[ai][2]};
                    if ((rc = emit_mode(s, sp, &c, sp->modes[m], pool_gpu, ai, G, err)) < 0) goto out;
                }
            }
    if ((rc = sim_search_spec_check(s, err)) < 0) goto out;
    if (s->as_skipped > 0)
        sim_search_note(s,
                        "search.autoscale: %lld autoscaled variants not enumerated (no pool could change size: its min "
                        "in the candidate's instances equals its count, or modes af / pd+af, where autoscaling is not "
                        "modelled). ",
                        (long long)s->as_skipped);
    if (s->n == 0)
        rc = sim_err_set(err, SIM_EINVAL,
                         "the search space is empty: no layout fits search.max_gpus = %d with the modes "
                         "and ratios given",
                         (int)cfg->max_gpus);
out:
    free(sp);
    return rc;
}

int sim_search_check_role_gpus(const sim_search *s, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    const char *lists[4];
    role_gpu_lists(cfg, lists);
    int64_t longest = 0;
    for (int32_t k = 0; k < s->n_lens; k++)
        if (s->lens[k].n_req_key == cfg->requests) longest = s->lens[k].longest;
    for (int r = 0; r < 4; r++) {
        char items[16][64];
        int n = lists[r][0] ? split_list(lists[r], items, 16) : 0;
        for (int g = 0; g < n; g++) {
            int seen = 0, fits = 0;
            const char *why = "";
            for (int32_t i = 0; i < s->n_costs && !fits; i++) {
                const sim_search_costent *e = &s->costs[i];
                if (e->role != role_gpu_roles[r] || strcmp(e->gpu, items[g]) != 0) continue;
                seen = 1;
                if (!e->cost) {
                    if (!why[0]) why = e->err;
                } else if (role_gpu_roles[r] == SIM_ROLE_FFN || e->kv_tokens >= longest) {
                    fits = 1;
                } else if (!why[0]) {
                    why = "its KV cache cannot hold the longest request";
                }
            }
            if (!seen)
                return sim_err_set(err, SIM_EINVAL, "%s: no mode in search.modes (%s) has %s pools to put on '%s'",
                                   role_gpu_keys[r], cfg->modes[0] ? cfg->modes : "the default",
                                   sim_role_name(role_gpu_roles[r]), items[g]);
            if (!fits)
                return sim_err_set(err, SIM_EINVAL,
                                   "%s: %s does not fit GPU type '%s' as a %s instance at any layout searched "
                                   "(first reason: %.200s); drop it from the list or add larger layouts",
                                   role_gpu_keys[r], s->sc.model, items[g], sim_role_name(role_gpu_roles[r]), why);
        }
    }
    return 0;
}
