/* sim_prefixgen — see sim_prefixgen.h.
 *
 * A request's prompt is a run of shared segments (one system prompt, or
 * docs_per_request documents of doc_tokens each) followed by its own tokens,
 * or, for multi_turn, a session's growing context. Block i covers tokens
 * [i·B, (i+1)·B). A block lying wholly in shared segments hashes the pieces
 * it holds — (item, offset in item, length) per segment it overlaps — so
 * equal content gives equal ids wherever it appears, and a block straddling
 * two documents depends on both. Any block touching the request's own tokens
 * gets a fresh id, since that content is never repeated.
 *
 * Multi-turn sessions keep the ids of their context's FULL blocks (the
 * chain). Turn t+1's prompt is turn t's context + answer + a new message:
 * when turn t is attached, the blocks that are full once it is answered get
 * fresh ids appended to the chain (so the answer has its ids while it is
 * computed, as ctx_ids, and keeps them for later turns), and a trailing
 * partial block gets a one-off fresh id, because in the next turn that
 * block holds more tokens and so different content.
 *
 * Id arrays live in buffers with a header in front (live list for destroy,
 * the owning request id and a live flag to catch stale releases); released
 * buffers go to a free pool that is trimmed to the live count, so storage
 * follows the requests in flight. */
#include "sim_prefixgen.h"

#include "sim_hash.h"
#include "sim_rng.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest Zipf popularity table (items) we build: 64 MiB of weights while
 * building, like sim_lendist's cap. Uniform popularity needs no table. */
#define PG_TABLE_MAX (1 << 23)
/* A session whose context would pass this many tokens ends early and its
 * slot opens a new session: it keeps input_tokens far from INT32_MAX. */
#define PG_MAX_CONTEXT (1 << 30)
/* Free buffers kept beyond the live count, so a steady state reuses
 * buffers without malloc churn. */
#define PG_POOL_MIN 64
/* RAG documents are drawn without replacement by rejection; after this many
 * rejections per document, draw exactly from the remaining weights. */
#define PG_REJECT_MAX 64

typedef struct pg_buf {
    struct pg_buf *prev, *next; /* live list; free pool uses next only */
    uint64_t req_id;            /* spec id of the request holding it */
    int32_t cap;
    int32_t live;
    uint32_t ids[];
} pg_buf;

typedef struct {
    int64_t session; /* id, or -1 before its first turn */
    int32_t turn;    /* turns issued */
    int64_t ctx;     /* tokens the next turn starts from: prompts + answers so far */
    uint32_t *chain; /* ids of the context's full blocks */
    int64_t n_chain, cap_chain;
} pg_session;

struct sim_prefixgen {
    sim_prefix_kind kind;
    sim_prefix_cfg cfg;
    gsl_rng *rng;
    gsl_ran_discrete_t *zipf; /* popularity of prompts/docs; NULL = uniform */
    int64_t n_items;
    double total_w;           /* sum of the popularity weights */
    uint32_t next_fresh;
    uint32_t space_k, space_n;  /* id space k of n (sim_prefixgen_set_space); 0 of 1 by default */
    pg_session *sess;
    int32_t n_sess;
    int64_t next_session;
    int64_t *picked; /* rag: documents of the request being built */
    pg_buf *live, *pool;
    int64_t n_live, n_pool;
    size_t bytes;
};

/* ---- content ids ----------------------------------------------------------- */

static uint64_t pg_fold(uint64_t h, uint64_t v)
{
    return sim_hash_mix64(h ^ sim_hash_mix64(v + SIM_HASH_GAMMA));
}

static uint64_t pg_piece(uint64_t h, int64_t item, int64_t offset, int64_t tokens)
{
    h = pg_fold(h, (uint64_t)item);
    h = pg_fold(h, (uint64_t)offset);
    return pg_fold(h, (uint64_t)tokens);
}

static uint32_t pg_shared_id(uint64_t h)
{
    return SIM_PREFIX_SHARED_BIT | (uint32_t)(h >> 33);
}

uint32_t sim_prefixgen_piece_id(sim_prefix_kind kind, int64_t item, int64_t offset, int64_t tokens)
{
    return pg_shared_id(pg_piece(sim_hash_mix64((uint64_t)kind + 1), item, offset, tokens));
}

static uint32_t pg_fresh(sim_prefixgen *g)
{
    return (g->next_fresh++ * g->space_n + g->space_k) & ~SIM_PREFIX_SHARED_BIT;
}

/* The seed of shared content ids: the kind's, and the space's past space 0 of 1. */
static uint64_t pg_content_h0(const sim_prefixgen *g)
{
    uint64_t h = sim_hash_mix64((uint64_t)g->kind + 1);
    return g->space_n > 1 ? pg_fold(h, (uint64_t)g->space_k + 1) : h;
}

void sim_prefixgen_set_space(sim_prefixgen *g, int32_t k, int32_t n)
{
    SIM_ASSERT(n >= 1 && k >= 0 && k < n && g->next_fresh == 0 && g->next_session == 0, k);
    g->space_k = (uint32_t)k;
    g->space_n = (uint32_t)n;
}

/* Ids of a prompt made of n_seg shared segments of seg_len tokens each
 * (items[j] = which prompt/doc) followed by own tokens, total tokens long. */
static void pg_fill_shared(sim_prefixgen *g, const int64_t *items, int32_t n_seg, int64_t seg_len,
                           int64_t total, uint32_t *ids)
{
    int64_t B = g->cfg.block_tokens, shared = (int64_t)n_seg * seg_len;
    int64_t n = (total + B - 1) / B;
    uint64_t h0 = pg_content_h0(g);
    for (int64_t i = 0; i < n; i++) {
        int64_t start = i * B, end = start + B;
        if (end > shared) {
            ids[i] = pg_fresh(g);
            continue;
        }
        uint64_t h = h0;
        for (int64_t t = start; t < end;) {
            int64_t seg = t / seg_len, off = t - seg * seg_len;
            int64_t len = seg_len - off < end - t ? seg_len - off : end - t;
            h = pg_piece(h, items[seg], off, len);
            t += len;
        }
        ids[i] = pg_shared_id(h);
    }
}

/* ---- id buffers ------------------------------------------------------------ */

static size_t pg_buf_size(int32_t cap)
{
    return sizeof(pg_buf) + (size_t)cap * sizeof(uint32_t);
}

/* A live buffer with room for n ids, owned by request req_id. */
static pg_buf *pg_buf_get(sim_prefixgen *g, int64_t n, uint64_t req_id)
{
    pg_buf *b = g->pool;
    if (b) {
        if (b->cap < n) {
            pg_buf *nb = realloc(b, pg_buf_size((int32_t)n));
            if (!nb) return NULL;
            g->bytes += pg_buf_size((int32_t)n) - pg_buf_size(nb->cap);
            nb->cap = (int32_t)n;
            b = nb;
        }
        g->pool = b->next;
        g->n_pool--;
    } else {
        b = malloc(pg_buf_size((int32_t)n));
        if (!b) return NULL;
        b->cap = (int32_t)n;
        g->bytes += pg_buf_size(b->cap);
    }
    b->req_id = req_id;
    b->live = 1;
    b->prev = NULL;
    b->next = g->live;
    if (g->live) g->live->prev = b;
    g->live = b;
    g->n_live++;
    return b;
}

/* Moves a live buffer to the free pool. */
static void pg_buf_put(sim_prefixgen *g, pg_buf *b)
{
    if (b->prev) b->prev->next = b->next;
    else g->live = b->next;
    if (b->next) b->next->prev = b->prev;
    g->n_live--;
    b->live = 0;
    b->prev = NULL;
    b->next = g->pool;
    g->pool = b;
    g->n_pool++;
    /* Keep the pool no larger than the live set (above its floor), so
     * memory follows the requests in flight now, not the peak. */
    while (g->n_pool > PG_POOL_MIN && g->n_pool > g->n_live) {
        pg_buf *f = g->pool;
        g->pool = f->next;
        g->n_pool--;
        g->bytes -= pg_buf_size(f->cap);
        free(f);
    }
}

void sim_prefixgen_release(sim_prefixgen *g, const sim_request_spec *spec)
{
    if (!spec->hash_ids) return;
    pg_buf *b = (pg_buf *)(void *)((char *)(uintptr_t)spec->hash_ids - offsetof(pg_buf, ids));
    /* A stale copy of a spec finds its buffer freed-to-pool or reused. */
    SIM_ASSERT(b->live && b->req_id == spec->id, spec->id);
    pg_buf_put(g, b);
}

void sim_prefixgen_renumber(sim_prefixgen *g, const sim_request_spec *spec, uint64_t id)
{
    (void)g;
    if (!spec->hash_ids) return;
    pg_buf *b = (pg_buf *)(void *)((char *)(uintptr_t)spec->hash_ids - offsetof(pg_buf, ids));
    SIM_ASSERT(b->live && b->req_id == spec->id, spec->id);
    b->req_id = id;
}

int64_t sim_prefixgen_live(const sim_prefixgen *g)
{
    return g->n_live;
}

size_t sim_prefixgen_bytes(const sim_prefixgen *g)
{
    return g->bytes;
}

/* ---- popularity ------------------------------------------------------------ */

static int64_t pg_pick(sim_prefixgen *g)
{
    if (!g->zipf) return (int64_t)gsl_rng_uniform_int(g->rng, (unsigned long)g->n_items);
    return (int64_t)gsl_ran_discrete(g->rng, g->zipf);
}

static double pg_weight(const sim_prefixgen *g, int64_t k)
{
    return g->zipf ? pow((double)(k + 1), -g->cfg.zipf_s) : 1.0;
}

static int pg_taken(const int64_t *items, int32_t n, int64_t k)
{
    for (int32_t j = 0; j < n; j++)
        if (items[j] == k) return 1;
    return 0;
}

/* Draws docs_per_request distinct documents, each by popularity among those
 * not yet drawn (successive sampling, as a retriever's top-k behaves),
 * in draw order. Rejection is exact; when the drawn documents hold most of
 * the mass it falls back to an exact draw from the rest by a linear scan. */
static void pg_pick_docs(sim_prefixgen *g)
{
    int32_t m = g->cfg.docs_per_request;
    for (int32_t j = 0; j < m; j++) {
        int64_t k = -1;
        for (int a = 0; a < PG_REJECT_MAX && k < 0; a++) {
            int64_t c = pg_pick(g);
            if (!pg_taken(g->picked, j, c)) k = c;
        }
        if (k < 0) {
            /* The scan stops at the drawn document, which popularity puts
             * near the head: cheap even for many documents. */
            double rest = g->total_w;
            for (int32_t i = 0; i < j; i++) rest -= pg_weight(g, g->picked[i]);
            double u = gsl_rng_uniform(g->rng) * rest;
            for (int64_t i = 0; i < g->n_items; i++) {
                if (pg_taken(g->picked, j, i)) continue;
                k = i; /* the last untaken one if rounding runs past the end */
                u -= pg_weight(g, i);
                if (u < 0) break;
            }
        }
        g->picked[j] = k;
    }
}

/* ---- create / destroy ------------------------------------------------------ */

static int pg_validate(const sim_prefix_cfg *c, sim_prefix_kind kind, int32_t slots, sim_err *err)
{
    if (c->block_tokens < 1)
        return sim_err_set(err, SIM_EINVAL, "workload.prefix.block_tokens: must be >= 1 (got %d)",
                           (int)c->block_tokens);
    if ((kind == SIM_PREFIX_SYSTEM_PROMPT || kind == SIM_PREFIX_RAG) &&
        (!isfinite(c->zipf_s) || c->zipf_s < 0))
        return sim_err_set(err, SIM_EINVAL, "workload.prefix.zipf_s: must be >= 0 (got %g)", c->zipf_s);
    switch (kind) {
    case SIM_PREFIX_SYSTEM_PROMPT:
        if (c->prompts < 1)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.prompts: must be >= 1 (got %d)",
                               (int)c->prompts);
        if (c->prompt_tokens < 1 || c->prompt_tokens > PG_MAX_CONTEXT)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.prompt_tokens: must be in [1, %d] (got %d)",
                               PG_MAX_CONTEXT, (int)c->prompt_tokens);
        if (c->zipf_s > 0 && c->prompts > PG_TABLE_MAX)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.prefix.prompts: at most %d with zipf_s > 0 (got %d)",
                               PG_TABLE_MAX, (int)c->prompts);
        break;
    case SIM_PREFIX_MULTI_TURN:
        if (c->turns < 1)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.turns: must be >= 1 (got %d)",
                               (int)c->turns);
        if (slots < 1)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.sessions: must be >= 1 (got %d)",
                               (int)slots);
        break;
    case SIM_PREFIX_RAG:
        if (c->docs < 1)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.docs: must be >= 1 (got %d)", (int)c->docs);
        if (c->docs_per_request < 1 || c->docs_per_request > c->docs)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.prefix.docs_per_request: must be in [1, docs = %d] (got %d)",
                               (int)c->docs, (int)c->docs_per_request);
        if (c->doc_tokens < 1 || (int64_t)c->doc_tokens * c->docs_per_request > PG_MAX_CONTEXT)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.prefix.doc_tokens: must be >= 1 with doc_tokens * docs_per_request "
                               "<= %d (got %d * %d)",
                               PG_MAX_CONTEXT, (int)c->doc_tokens, (int)c->docs_per_request);
        if (c->zipf_s > 0 && c->docs > PG_TABLE_MAX)
            return sim_err_set(err, SIM_EINVAL, "workload.prefix.docs: at most %d with zipf_s > 0 (got %d)",
                               PG_TABLE_MAX, (int)c->docs);
        break;
    case SIM_PREFIX_NONE:
        return sim_err_set(err, SIM_EINVAL, "workload.prefix.kind: none generates no prefix structure");
    default:
        return sim_err_set(err, SIM_EINVAL, "workload.prefix.kind: unknown kind %d", (int)kind);
    }
    return 0;
}

int sim_prefixgen_create(const sim_prefix_cfg *cfg, int32_t slots, uint64_t seed,
                         sim_prefixgen **out, sim_err *err)
{
    int rc;
    sim_prefix_kind kind = cfg->kind;
    double *w = NULL;
    *out = NULL;
    if ((rc = pg_validate(cfg, kind, slots, err))) return rc;
    sim_prefixgen *g = calloc(1, sizeof *g);
    if (!g) return sim_err_set(err, SIM_ENOMEM, "workload.prefix: out of memory");
    g->kind = kind;
    g->cfg = *cfg;
    g->space_n = 1;
    rc = SIM_ENOMEM;
    if (!(g->rng = sim_rng_create(seed, "prefix", 0))) goto fail;
    if (kind == SIM_PREFIX_MULTI_TURN) {
        g->n_sess = slots;
        if (!(g->sess = calloc((size_t)slots, sizeof *g->sess))) goto fail;
        for (int32_t i = 0; i < slots; i++) g->sess[i].session = -1;
    } else {
        g->n_items = kind == SIM_PREFIX_RAG ? cfg->docs : cfg->prompts;
        if (kind == SIM_PREFIX_RAG && !(g->picked = calloc((size_t)cfg->docs_per_request, sizeof *g->picked)))
            goto fail;
        g->total_w = (double)g->n_items; /* uniform; replaced below for Zipf */
        if (cfg->zipf_s > 0) {
            g->total_w = 0;
            if (!(w = malloc((size_t)g->n_items * sizeof *w))) goto fail;
            for (int64_t k = 0; k < g->n_items; k++) {
                w[k] = pow((double)(k + 1), -cfg->zipf_s);
                g->total_w += w[k];
            }
            if (!(g->zipf = gsl_ran_discrete_preproc((size_t)g->n_items, w))) goto fail;
            free(w);
            w = NULL;
        }
    }
    *out = g;
    return 0;
fail:
    free(w);
    sim_prefixgen_destroy(g);
    return sim_err_set(err, rc, "workload.prefix: out of memory");
}

void sim_prefixgen_destroy(sim_prefixgen *g)
{
    if (!g) return;
    for (pg_buf *b = g->live, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (pg_buf *b = g->pool, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (int32_t i = 0; i < g->n_sess; i++) free(g->sess[i].chain);
    free(g->sess);
    free(g->picked);
    if (g->zipf) gsl_ran_discrete_free(g->zipf);
    if (g->rng) gsl_rng_free(g->rng);
    free(g);
}

sim_prefix_kind sim_prefixgen_kind(const sim_prefixgen *g)
{
    return g->kind;
}

/* ---- attach ---------------------------------------------------------------- */

/* Grows a session's chain to hold n ids. */
static int pg_chain_reserve(sim_prefixgen *g, pg_session *s, int64_t n)
{
    if (n <= s->cap_chain) return 0;
    int64_t cap = s->cap_chain ? s->cap_chain : 16;
    while (cap < n) cap *= 2;
    uint32_t *c = realloc(s->chain, (size_t)cap * sizeof *c);
    if (!c) return SIM_ENOMEM;
    g->bytes += (size_t)(cap - s->cap_chain) * sizeof *c;
    s->chain = c;
    s->cap_chain = cap;
    return 0;
}

static int pg_attach_turn(sim_prefixgen *g, int32_t slot, int32_t own, sim_request_spec *spec)
{
    int64_t B = g->cfg.block_tokens;
    if (slot < 0) slot = (int32_t)gsl_rng_uniform_int(g->rng, (unsigned long)g->n_sess);
    SIM_ASSERT(slot < g->n_sess, slot);
    pg_session *s = &g->sess[slot];
    int fresh_session = s->session < 0 || s->turn >= g->cfg.turns ||
                        s->ctx + own > PG_MAX_CONTEXT;
    int64_t ctx = fresh_session ? 0 : s->ctx;
    int64_t n_chain = fresh_session ? 0 : s->n_chain;
    int64_t len = ctx + own, out = spec->output_tokens;
    int64_t full = (len + out) / B, n = (len + out + B - 1) / B;
    if (pg_chain_reserve(g, s, full)) return SIM_ENOMEM;
    pg_buf *b = pg_buf_get(g, n, spec->id);
    if (!b) return SIM_ENOMEM;
    if (fresh_session) {
        s->session = g->next_session++;
        s->turn = 0;
    }
    /* Blocks that are full once this turn is answered (the message and
     * the answer) join the chain for good: the answer's blocks have the ids
     * the next turn names them by while this turn computes them. */
    for (int64_t i = n_chain; i < full; i++) s->chain[i] = pg_fresh(g);
    s->n_chain = full;
    if (full) memcpy(b->ids, s->chain, (size_t)full * sizeof *b->ids);
    if (n > full) b->ids[full] = pg_fresh(g);
    s->ctx = len + spec->output_tokens;
    s->turn++;
    spec->input_tokens = (int32_t)len;
    spec->n_hash = (int32_t)((len + B - 1) / B);
    spec->hash_ids = b->ids;
    spec->n_ctx_ids = (int32_t)n;
    spec->ctx_ids = b->ids;
    spec->session = (uint64_t)s->session * g->space_n + g->space_k + 1;
    return 0;
}

int sim_prefixgen_attach(sim_prefixgen *g, int32_t slot, int32_t own_tokens,
                         sim_request_spec *spec, sim_err *err)
{
    SIM_ASSERT(own_tokens >= 1, own_tokens);
    if (g->kind == SIM_PREFIX_MULTI_TURN) {
        if (pg_attach_turn(g, slot, own_tokens, spec))
            return sim_err_set(err, SIM_ENOMEM, "workload.prefix: out of memory");
        return 0;
    }
    /* A system prompt is one shared segment, RAG documents several. */
    int64_t prompt, seg_len = g->cfg.prompt_tokens, n_seg = 1;
    const int64_t *items = &prompt;
    if (g->kind == SIM_PREFIX_RAG) {
        pg_pick_docs(g);
        items = g->picked;
        seg_len = g->cfg.doc_tokens;
        n_seg = g->cfg.docs_per_request;
    } else {
        prompt = pg_pick(g);
    }
    int64_t total = n_seg * seg_len + own_tokens;
    if (total > INT32_MAX) total = INT32_MAX; /* own tokens shrink; shared lengths are capped */
    int64_t B = g->cfg.block_tokens, n = (total + B - 1) / B;
    pg_buf *b = pg_buf_get(g, n, spec->id);
    if (!b) return sim_err_set(err, SIM_ENOMEM, "workload.prefix: out of memory");
    pg_fill_shared(g, items, (int32_t)n_seg, seg_len, total, b->ids);
    spec->input_tokens = (int32_t)total;
    spec->n_hash = (int32_t)n;
    spec->hash_ids = b->ids;
    spec->session = 0;
    return 0;
}
