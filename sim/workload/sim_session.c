/* sim_session — see sim_session.h.
 *
 * A slot holds one open session: its turn, the requests of the current step
 * still in flight (the turn, or its sub-requests), the answers joined so far
 * and, synthetic only, its context length and chain: the ids of the
 * context's FULL hash blocks. Ids are fresh counters below
 * SIM_PREFIX_SHARED_BIT, as sim_prefixgen's multi-turn ids: a block that
 * became full inside the context keeps its id for every later request of
 * the session; a trailing partial block, or a block holding a sub-request's
 * own tokens, gets a one-off id, since no later prompt holds the same
 * content there. Slots are recycled through a free list; a slot's spec
 * carries its index and the session id so a stale spec is caught.
 *
 * Synthetic id arrays are malloc'ed per request with a small header in a
 * live list (freed on release, all of them on destroy).
 *
 * Synthetic draws come from one taus2 generator re-seeded at each step of
 * a session (its start, a fan-out, its next turn) from the stream
 * "session", the session id and the step, so a session's turns, lengths
 * and gaps do not depend on the order in which other sessions' requests
 * finish: two runs that differ only in the deployment (the cache on or
 * off, more instances) see the same sessions. */
#include "sim_session.h"

#include "sim_hash.h"
#include "sim_prefixgen.h"
#include "sim_rng.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ss_buf {
    struct ss_buf *prev, *next;
    size_t bytes;
    uint32_t ids[];
} ss_buf;

typedef struct {
    uint64_t sid;        /* session id (spec.session = sid + 1, in space k of n: sid * n + k + 1) */
    int32_t open;
    sim_time start;      /* first arrival */
    int32_t turn;        /* current turn index */
    int32_t turns;       /* synthetic: turns of this session */
    int32_t pending;     /* requests of the current step in flight */
    int64_t joined;      /* synthetic: answer tokens of the step's sub-requests so far */
    int64_t entry;       /* trace: the current turn's entry */
    int64_t ctx;         /* synthetic: context tokens (prompts, answers, joined answers) */
    int64_t last_prompt; /* synthetic: the current turn's prompt tokens */
    int32_t last_out;    /* synthetic: the current turn's answer tokens */
    uint64_t rng_base;   /* synthetic: this session's seed */
    uint64_t rng_step;   /* synthetic: steps drawn so far */
    uint32_t *chain;     /* synthetic: ids of the context's full blocks */
    int64_t n_chain, cap_chain;
    int32_t free_next;
} ss_slot;

struct sim_session {
    const sim_trace *trace;   /* NULL = synthetic */
    double delay_factor;
    sim_session_cfg cfg;
    int32_t block_tokens;
    uint64_t seed;
    gsl_rng *rng;
    sim_lendist *first_in, *out, *turns, *user, *think, *child_in, *child_out;
    ss_slot *slots;
    int32_t n_slots, cap_slots, free_head;
    int64_t n_open, next_sid;
    uint32_t next_fresh;
    uint32_t space_k, space_n;  /* id space k of n (sim_session_set_space); 0 of 1 by default */
    ss_buf *live;
    int64_t n_live;
    size_t bytes;
};

static int ss_dist(const sim_len_dist *d, const char *key, sim_lendist **out, sim_err *err)
{
    int rc = sim_lendist_create(d, out, err);
    if (rc) sim_err_wrap(err, rc, "%s", key);
    return rc;
}

int sim_session_create(const sim_workload_cfg *cfg, const sim_trace *trace, double delay_factor, uint64_t seed,
                       sim_session **out, sim_err *err)
{
    int rc;
    *out = NULL;
    sim_session *s = calloc(1, sizeof *s);
    if (!s) return sim_err_set(err, SIM_ENOMEM, "workload.sessions: out of memory");
    s->trace = trace;
    s->delay_factor = delay_factor;
    s->cfg = cfg->sessions;
    s->block_tokens = cfg->prefix.block_tokens;
    s->free_head = -1;
    s->space_n = 1;
    if (!trace) {
        if (s->block_tokens < 1) {
            rc = sim_err_set(err, SIM_EINVAL, "workload.prefix.block_tokens: must be >= 1 (got %d)",
                             (int)s->block_tokens);
            goto fail;
        }
        if (s->cfg.fan_out < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "workload.sessions.fan_out: must be >= 0 (got %d)",
                             (int)s->cfg.fan_out);
            goto fail;
        }
        s->seed = seed;
        if (!(s->rng = gsl_rng_alloc(gsl_rng_taus2))) {
            rc = sim_err_set(err, SIM_ENOMEM, "workload.sessions: out of memory");
            goto fail;
        }
        if ((rc = ss_dist(&cfg->input_tokens, "workload.input_tokens", &s->first_in, err)) ||
            (rc = ss_dist(&cfg->output_tokens, "workload.output_tokens", &s->out, err)) ||
            (rc = ss_dist(&s->cfg.turns, "workload.sessions.turns", &s->turns, err)) ||
            (rc = ss_dist(&s->cfg.user_tokens, "workload.sessions.user_tokens", &s->user, err)) ||
            (rc = ss_dist(&s->cfg.think_ms, "workload.sessions.think_ms", &s->think, err)) ||
            (rc = ss_dist(&s->cfg.child_input_tokens, "workload.sessions.child_input_tokens", &s->child_in, err)) ||
            (rc = ss_dist(&s->cfg.child_output_tokens, "workload.sessions.child_output_tokens", &s->child_out,
                          err)))
            goto fail;
    }
    *out = s;
    return 0;
fail:
    sim_session_destroy(s);
    return rc;
}

void sim_session_destroy(sim_session *s)
{
    if (!s) return;
    for (ss_buf *b = s->live, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (int32_t i = 0; i < s->n_slots; i++) free(s->slots[i].chain);
    free(s->slots);
    sim_lendist_destroy(s->first_in);
    sim_lendist_destroy(s->out);
    sim_lendist_destroy(s->turns);
    sim_lendist_destroy(s->user);
    sim_lendist_destroy(s->think);
    sim_lendist_destroy(s->child_in);
    sim_lendist_destroy(s->child_out);
    if (s->rng) gsl_rng_free(s->rng);
    free(s);
}

int64_t sim_session_open(const sim_session *s) { return s->n_open; }
int64_t sim_session_live(const sim_session *s) { return s->n_live; }
size_t sim_session_bytes(const sim_session *s) { return s->bytes; }

/* ---- slots and ids ------------------------------------------------------- */

static int32_t ss_slot_get(sim_session *s)
{
    if (s->free_head >= 0) {
        int32_t i = s->free_head;
        s->free_head = s->slots[i].free_next;
        return i;
    }
    if (s->n_slots == s->cap_slots) {
        int32_t cap = s->cap_slots ? s->cap_slots * 2 : 64;
        ss_slot *p = realloc(s->slots, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->bytes += (size_t)(cap - s->cap_slots) * sizeof *p;
        s->slots = p;
        s->cap_slots = cap;
    }
    memset(&s->slots[s->n_slots], 0, sizeof s->slots[0]);
    return s->n_slots++;
}

static void ss_slot_close(sim_session *s, int32_t i)
{
    ss_slot *sl = &s->slots[i];
    sl->open = 0;
    sl->n_chain = 0;
    sl->free_next = s->free_head;
    s->free_head = i;
    s->n_open--;
}

static uint32_t ss_fresh(sim_session *s)
{
    return (s->next_fresh++ * s->space_n + s->space_k) & ~SIM_PREFIX_SHARED_BIT;
}

/* spec.session of the slot's session: its id in this space, + 1. */
static uint64_t ss_number(const sim_session *s, const ss_slot *sl)
{
    return sl->sid * s->space_n + s->space_k + 1;
}

void sim_session_set_space(sim_session *s, int32_t k, int32_t n)
{
    SIM_ASSERT(n >= 1 && k >= 0 && k < n && s->next_sid == 0 && s->next_fresh == 0, k);
    s->space_k = (uint32_t)k;
    s->space_n = (uint32_t)n;
}

/* Grows the slot's chain so its first `full` blocks have ids. */
static int ss_chain_extend(sim_session *s, ss_slot *sl, int64_t full)
{
    if (full > sl->cap_chain) {
        int64_t cap = sl->cap_chain ? sl->cap_chain : 16;
        while (cap < full) cap *= 2;
        uint32_t *c = realloc(sl->chain, (size_t)cap * sizeof *c);
        if (!c) return SIM_ENOMEM;
        s->bytes += (size_t)(cap - sl->cap_chain) * sizeof *c;
        sl->chain = c;
        sl->cap_chain = cap;
    }
    for (int64_t i = sl->n_chain; i < full; i++) sl->chain[i] = ss_fresh(s);
    if (full > sl->n_chain) sl->n_chain = full;
    return 0;
}

/* A prompt of `len` tokens followed by an answer of `out`, whose first
 * `kept` full blocks are the chain's and the rest one-off: fills spec's ids
 * (the prompt's, and as ctx_ids those of prompt + answer) and lengths. */
static int ss_fill_ids(sim_session *s, const ss_slot *sl, int64_t kept, int64_t len, int64_t out,
                       sim_request_spec *spec)
{
    int64_t B = s->block_tokens, n = (len + out + B - 1) / B;
    size_t bytes = sizeof(ss_buf) + (size_t)n * sizeof(uint32_t);
    ss_buf *b = malloc(bytes);
    if (!b) return SIM_ENOMEM;
    b->bytes = bytes;
    b->prev = NULL;
    b->next = s->live;
    if (s->live) s->live->prev = b;
    s->live = b;
    s->n_live++;
    s->bytes += bytes;
    if (kept) memcpy(b->ids, sl->chain, (size_t)kept * sizeof *b->ids);
    for (int64_t i = kept; i < n; i++) b->ids[i] = ss_fresh(s);
    spec->input_tokens = (int32_t)len;
    spec->n_hash = (int32_t)((len + B - 1) / B);
    spec->hash_ids = b->ids;
    spec->n_ctx_ids = (int32_t)n;
    spec->ctx_ids = b->ids;
    return 0;
}

void sim_session_release(sim_session *s, const sim_request_spec *spec)
{
    if (s->trace || !spec->hash_ids) return;
    ss_buf *b = (ss_buf *)(void *)((char *)(uintptr_t)spec->hash_ids - offsetof(ss_buf, ids));
    if (b->prev) b->prev->next = b->next;
    else s->live = b->next;
    if (b->next) b->next->prev = b->prev;
    s->n_live--;
    s->bytes -= b->bytes;
    free(b);
}

static void ss_spec_base(const sim_session *s, const ss_slot *sl, int32_t slot, sim_request_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->session = ss_number(s, sl);
    spec->sess_slot = slot;
    spec->turn = sl->turn;
}

/* The draws of the slot's next step. */
static void ss_reseed(sim_session *s, ss_slot *sl)
{
    gsl_rng_set(s->rng, (unsigned long)sim_hash_mix64(sl->rng_base + SIM_HASH_GAMMA * ++sl->rng_step));
}

static sim_time ss_ms_to_ns(double ms)
{
    return (sim_time)llround(ms * 1e6);
}

/* ---- synthetic ------------------------------------------------------------- */

/* The slot's turn sl->turn, prompt = context + own tokens. */
static int ss_synth_turn(sim_session *s, int32_t slot, int32_t own, sim_time arrival, sim_request_spec *spec)
{
    ss_slot *sl = &s->slots[slot];
    int64_t len = sl->ctx + own;
    ss_spec_base(s, sl, slot, spec);
    spec->arrival = arrival;
    spec->output_tokens = sim_lendist_draw(s->out, s->rng);
    /* The turn's own tokens and its answer stay in the context: the full
     * blocks of both join the chain now, so the answer's blocks have the
     * ids the next turn names them by while this turn computes them. */
    int64_t full = (len + spec->output_tokens) / s->block_tokens;
    if (ss_chain_extend(s, sl, full) || ss_fill_ids(s, sl, full, len, spec->output_tokens, spec))
        return SIM_ENOMEM;
    sl->last_prompt = len;
    sl->last_out = spec->output_tokens;
    sl->pending = 1;
    sl->joined = 0;
    return 0;
}

static int ss_synth_next_turn(sim_session *s, int32_t slot, sim_time now, sim_session_emit_fn emit, void *ctx,
                              sim_session_done_info *info)
{
    ss_slot *sl = &s->slots[slot];
    ss_reseed(s, sl);
    int32_t own = sim_lendist_draw(s->user, s->rng);
    if (sl->turn + 1 >= sl->turns || sl->ctx + own > SIM_SESSION_MAX_CONTEXT) {
        info->ended = 1;
        info->start = sl->start;
        info->turns = sl->turn + 1;
        ss_slot_close(s, slot);
        return 0;
    }
    sim_time gap = ss_ms_to_ns(sim_lendist_draw(s->think, s->rng));
    sl->turn++;
    sim_request_spec spec;
    if (ss_synth_turn(s, slot, own, now + gap, &spec)) return SIM_ENOMEM;
    return emit(ctx, &spec);
}

static int ss_synth_done(sim_session *s, const sim_request_spec *spec, sim_time now, sim_session_emit_fn emit,
                         void *ctx, sim_session_done_info *info)
{
    int32_t slot = spec->sess_slot;
    ss_slot *sl = &s->slots[slot];
    int rc;
    if (spec->sub) {
        sl->joined += spec->output_tokens;
        if (--sl->pending > 0) return 0;
        sl->ctx += sl->joined;
        return ss_synth_next_turn(s, slot, now, emit, ctx, info);
    }
    sl->ctx = sl->last_prompt + sl->last_out;
    int32_t fan = sl->turn + 1 < sl->turns ? s->cfg.fan_out : 0;
    if (fan == 0) return ss_synth_next_turn(s, slot, now, emit, ctx, info);
    /* Sub-requests share the context (its full blocks join the chain for
     * good) and add their own tokens, which no later prompt holds. */
    int64_t kept = sl->ctx / s->block_tokens;
    if (ss_chain_extend(s, sl, kept)) return SIM_ENOMEM;
    ss_reseed(s, sl);
    sl->pending = fan;
    sl->joined = 0;
    for (int32_t i = 0; i < fan; i++) {
        sim_request_spec c;
        ss_spec_base(s, sl, slot, &c);
        c.sub = 1;
        c.arrival = now;
        int64_t own = sim_lendist_draw(s->child_in, s->rng);
        int64_t len = sl->ctx + own;
        if (len > INT32_MAX) len = INT32_MAX;
        c.output_tokens = sim_lendist_draw(s->child_out, s->rng);
        if (ss_fill_ids(s, sl, kept, len, c.output_tokens, &c)) return SIM_ENOMEM;
        if ((rc = emit(ctx, &c))) return rc;
    }
    return 0;
}

/* ---- trace ----------------------------------------------------------------- */

static void ss_trace_spec(sim_session *s, const ss_slot *sl, int32_t slot, int64_t entry, sim_request_spec *spec)
{
    const sim_trace_entry *e = &s->trace->entries[entry];
    ss_spec_base(s, sl, slot, spec);
    spec->turn = e->turn;
    spec->sub = e->parent >= 0;
    spec->input_tokens = e->input_tokens;
    spec->output_tokens = e->output_tokens;
    spec->n_hash = e->n_hash;
    spec->hash_ids = e->n_hash ? s->trace->hashes + e->hash_off : NULL;
    /* A turn's answer is named by the line that continues its context:
     * its first sub-request, else the next turn (the cluster checks that
     * their ids extend this prompt's). */
    int64_t f = sim_trace_continuation(s->trace, entry);
    if (f >= 0 && s->trace->entries[f].n_hash > 0) {
        spec->n_ctx_ids = s->trace->entries[f].n_hash;
        spec->ctx_ids = s->trace->hashes + s->trace->entries[f].hash_off;
    }
}

static sim_time ss_trace_delay(const sim_session *s, int64_t entry)
{
    return (sim_time)llround(s->trace->entries[entry].delay_s * s->delay_factor * 1e9);
}

/* The current step of the slot is over: emit the next turn, or end. */
static int ss_trace_advance(sim_session *s, int32_t slot, sim_time now, sim_session_emit_fn emit, void *ctx,
                            sim_session_done_info *info)
{
    ss_slot *sl = &s->slots[slot];
    int64_t next = s->trace->entries[sl->entry].next;
    if (next < 0) {
        info->ended = 1;
        info->start = sl->start;
        info->turns = sl->turn + 1;
        ss_slot_close(s, slot);
        return 0;
    }
    sl->entry = next;
    sl->turn = s->trace->entries[next].turn;
    sl->pending = 1;
    sim_request_spec spec;
    ss_trace_spec(s, sl, slot, next, &spec);
    spec.arrival = now + ss_trace_delay(s, next);
    return emit(ctx, &spec);
}

static int ss_trace_done(sim_session *s, const sim_request_spec *spec, sim_time now, sim_session_emit_fn emit,
                         void *ctx, sim_session_done_info *info)
{
    int32_t slot = spec->sess_slot;
    ss_slot *sl = &s->slots[slot];
    if (spec->sub) {
        if (--sl->pending > 0) return 0;
        return ss_trace_advance(s, slot, now, emit, ctx, info);
    }
    const sim_trace_entry *e = &s->trace->entries[sl->entry];
    if (e->n_children == 0) return ss_trace_advance(s, slot, now, emit, ctx, info);
    sl->pending = e->n_children;
    for (int64_t c = e->first_child; c >= 0; c = s->trace->entries[c].next_child) {
        sim_request_spec cs;
        ss_trace_spec(s, sl, slot, c, &cs);
        cs.arrival = now + ss_trace_delay(s, c);
        int rc = emit(ctx, &cs);
        if (rc) return rc;
    }
    return 0;
}

/* ---- entry points ---------------------------------------------------------- */

int sim_session_start(sim_session *s, int64_t entry, sim_time arrival, sim_request_spec *out)
{
    int32_t slot = ss_slot_get(s);
    if (slot < 0) return SIM_ENOMEM;
    ss_slot *sl = &s->slots[slot];
    sl->sid = (uint64_t)s->next_sid;
    sl->open = 1;
    sl->start = arrival;
    sl->turn = 0;
    sl->ctx = 0;
    sl->n_chain = 0;
    if (s->trace) {
        SIM_ASSERT(entry >= 0 && entry < s->trace->n && s->trace->entries[entry].session >= 0, entry);
        sl->sid = (uint64_t)s->trace->entries[entry].session;
        sl->entry = entry;
        sl->pending = 1;
        ss_trace_spec(s, sl, slot, entry, out);
        out->arrival = arrival;
    } else {
        sl->rng_base = sim_rng_derive(s->seed, "session", sl->sid);
        sl->rng_step = 0;
        ss_reseed(s, sl);
        sl->turns = sim_lendist_draw(s->turns, s->rng);
        if (ss_synth_turn(s, slot, sim_lendist_draw(s->first_in, s->rng), arrival, out)) {
            sl->open = 0;
            sl->free_next = s->free_head;
            s->free_head = slot;
            return SIM_ENOMEM;
        }
    }
    s->next_sid++;
    s->n_open++;
    return 0;
}

int sim_session_done(sim_session *s, const sim_request_spec *spec, sim_time now, sim_session_emit_fn emit,
                     void *ctx, sim_session_done_info *info)
{
    SIM_ASSERT(spec->sess_slot >= 0 && spec->sess_slot < s->n_slots, spec->sess_slot);
    const ss_slot *sl = &s->slots[spec->sess_slot];
    SIM_ASSERT(sl->open && ss_number(s, sl) == spec->session && sl->turn == spec->turn, spec->session);
    memset(info, 0, sizeof *info);
    info->is_turn = !spec->sub;
    info->turn = spec->turn;
    return s->trace ? ss_trace_done(s, spec, now, emit, ctx, info) : ss_synth_done(s, spec, now, emit, ctx, info);
}
