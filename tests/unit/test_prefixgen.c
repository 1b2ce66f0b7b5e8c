/* test_prefixgen — synthetic prefix workloads (sim_prefixgen through
 * sim_workload): kind none replays the old arrival/length sequence exactly
 * and other kinds keep it; system-prompt popularity follows Zipf and the
 * shared-token fraction and distinct-prompt count match their expectations;
 * multi-turn turns extend the previous turn's chain by exactly its answer and
 * the new message, sessions are numbered in opening order and inter-turn gaps
 * average sessions/rate; closed-loop clients run their own sessions; RAG
 * prompts share ids only up to the first differing document (aligned and
 * straddling blocks); ids are deterministic per seed; id storage follows the
 * requests in flight; bad configurations are rejected. Fixed seeds;
 * statistical tolerances are about 5 standard errors. */
#include "sim_prefixgen.h"
#include "sim_rng.h"
#include "sim_workload.h"
#include "test_util.h"

#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdlib.h>

static sim_workload_cfg base_cfg(const char *kind, sim_arrival_kind process, int64_t requests)
{
    sim_workload_cfg c;
    memset(&c, 0, sizeof c);
    c.requests = requests;
    c.arrival.process = process;
    c.arrival.rate = 10;
    c.arrival.cv = 1;
    c.arrival.concurrency = 4;
    c.input_tokens.dist = SIM_DIST_UNIFORM;
    c.input_tokens.min = 1;
    c.input_tokens.max = 999;
    c.output_tokens.dist = SIM_DIST_UNIFORM;
    c.output_tokens.min = 1;
    c.output_tokens.max = 300;
    c.trace.time_scale = 1;
    c.trace.rate_scale = 1;
    c.prefix.kind = (sim_prefix_kind)-1;
    for (int i = 0; i < SIM_PREFIX_KINDS; i++)
        if (strcmp(kind, sim_prefix_kind_names[i]) == 0) c.prefix.kind = (sim_prefix_kind)i;
    c.prefix.block_tokens = 64;
    c.prefix.prompts = 8;
    c.prefix.prompt_tokens = 1000;
    c.prefix.zipf_s = 1.0;
    c.prefix.sessions = 4;
    c.prefix.turns = 3;
    c.prefix.docs = 50;
    c.prefix.doc_tokens = 128;
    c.prefix.docs_per_request = 3;
    return c;
}

static sim_workload *make(const sim_workload_cfg *c, uint64_t seed)
{
    sim_workload *w = NULL;
    sim_err err = {{0}};
    int rc = sim_workload_create(c, seed, &w, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return w;
}

/* Longest common prefix of two id arrays. */
static int32_t lcp(const uint32_t *a, int32_t na, const uint32_t *b, int32_t nb)
{
    int32_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    return i;
}

static double zipf_p(int64_t k, int64_t n, double s)
{
    double h = 0;
    for (int64_t i = 1; i <= n; i++) h += pow((double)i, -s);
    return pow((double)(k + 1), -s) / h;
}

/* ---- kind none and the draw sequence ------------------------------------- */

/* Kind none (and a zeroed kind) must give exactly what the workload gave
 * before prefixes existed: Poisson gaps from "arrival", lengths from
 * "input_len"/"output_len", no hashes, no session. Rebuilt here from the
 * streams themselves. Every other kind keeps arrivals, outputs and the own
 * part of the input. */
static void test_none_unchanged(void)
{
    const int N = 2000;
    sim_workload_cfg c = base_cfg("none", SIM_ARRIVAL_POISSON, N);
    sim_workload *w = make(&c, 42);
    memset(&c.prefix.kind, 0, sizeof c.prefix.kind); /* a zeroed config reads as none */
    sim_workload *w0 = make(&c, 42);
    sim_lendist *din = NULL, *dout = NULL;
    sim_err err = {{0}};
    CHECK(sim_lendist_create(&c.input_tokens, &din, &err) == 0);
    CHECK(sim_lendist_create(&c.output_tokens, &dout, &err) == 0);
    gsl_rng *ra = sim_rng_create(42, "arrival", 0), *ri = sim_rng_create(42, "input_len", 0),
            *ro = sim_rng_create(42, "output_len", 0);
    if (!w || !w0 || !din || !dout) goto out;
    double t = 0;
    int bad = 0, n = 0;
    sim_request_spec r, r0;
    /* Poisoned, so a field left unwritten (session) shows. */
    memset(&r, 0x5a, sizeof r);
    memset(&r0, 0x5a, sizeof r0);
    while (sim_workload_next(w, &r) == 1) {
        CHECK(sim_workload_next(w0, &r0) == 1);
        t += gsl_ran_exponential(ra, 0.1);
        int32_t in = sim_lendist_draw(din, ri), o = sim_lendist_draw(dout, ro);
        if (r.id != (uint64_t)n || r.arrival != (sim_time)llround(t * 1e9) || r.input_tokens != in ||
            r.output_tokens != o || r.n_hash != 0 || r.hash_ids != NULL || r.session != 0)
            bad++;
        if (memcmp(&r, &r0, sizeof r) != 0) bad++;
        sim_workload_release(w, &r); /* a no-op without generated ids */
        n++;
        memset(&r, 0x5a, sizeof r);
        memset(&r0, 0x5a, sizeof r0);
    }
    CHECK(n == N);
    CHECK_MSG(bad == 0, "%d requests differ from the old sequence", bad);
    CHECK(sim_workload_ids_live(w) == 0 && sim_workload_ids_bytes(w) == 0);

    /* Prefix kinds draw from their own stream: same arrivals and lengths. */
    const char *kinds[] = {"system_prompt", "multi_turn", "rag"};
    for (int k = 0; k < 3; k++) {
        sim_workload_cfg ck = base_cfg(kinds[k], SIM_ARRIVAL_POISSON, N);
        sim_workload *wn = make(&c, 42), *wk = make(&ck, 42);
        if (!wn || !wk) {
            sim_workload_destroy(wn);
            sim_workload_destroy(wk);
            continue;
        }
        int diff = 0;
        int64_t shared = k == 0 ? ck.prefix.prompt_tokens
                                : k == 2 ? (int64_t)ck.prefix.doc_tokens * ck.prefix.docs_per_request : 0;
        while (sim_workload_next(wn, &r0) == 1) {
            if (sim_workload_next(wk, &r) != 1) {
                diff++;
                break;
            }
            if (r.arrival != r0.arrival || r.output_tokens != r0.output_tokens || r.id != r0.id) diff++;
            if (k != 1 && r.input_tokens != shared + r0.input_tokens) diff++;
            if (k == 1 && r.input_tokens < r0.input_tokens) diff++;
            sim_workload_release(wk, &r);
        }
        CHECK(sim_workload_next(wk, &r) == 0);
        CHECK_MSG(diff == 0, "%s: %d requests changed arrivals/lengths", kinds[k], diff);
        sim_workload_destroy(wn);
        sim_workload_destroy(wk);
    }
out:
    gsl_rng_free(ra);
    gsl_rng_free(ri);
    gsl_rng_free(ro);
    sim_lendist_destroy(din);
    sim_lendist_destroy(dout);
    sim_workload_destroy(w);
    sim_workload_destroy(w0);
}

/* ---- system prompts ------------------------------------------------------ */

/* Which prompt a request starts with, from its first block's id. */
static int prompt_of(const sim_request_spec *r, int32_t prompts, int32_t B)
{
    for (int p = 0; p < prompts; p++)
        if (r->hash_ids[0] == sim_prefixgen_piece_id(SIM_PREFIX_SYSTEM_PROMPT, p, 0, B)) return p;
    return -1;
}

static void zipf_counts(double s, uint64_t seed)
{
    const int N = 40000, P = 8;
    sim_workload_cfg c = base_cfg("system_prompt", SIM_ARRIVAL_POISSON, N);
    c.prefix.zipf_s = s;
    sim_workload *w = make(&c, seed);
    if (!w) return;
    int64_t counts[8] = {0};
    int bad_layout = 0, unknown = 0;
    int64_t last_fresh = -1;
    double shared_tok = 0, total_tok = 0;
    const int32_t B = c.prefix.block_tokens, full = c.prefix.prompt_tokens / B;
    sim_request_spec r;
    while (sim_workload_next(w, &r) == 1) {
        int p = prompt_of(&r, P, B);
        if (p < 0) {
            unknown++;
        } else {
            counts[p]++;
            for (int32_t k = 0; k < full; k++)
                if (r.hash_ids[k] != sim_prefixgen_piece_id(SIM_PREFIX_SYSTEM_PROMPT, p, (int64_t)k * B, B))
                    bad_layout++;
        }
        if (r.n_hash != (r.input_tokens + B - 1) / B) bad_layout++;
        /* The block holding the prompt's tail and own tokens, and every one
         * after it, is fresh: below the shared bit and never seen before. */
        for (int32_t k = full; k < r.n_hash; k++) {
            if (r.hash_ids[k] >= SIM_PREFIX_SHARED_BIT || (int64_t)r.hash_ids[k] <= last_fresh) bad_layout++;
            last_fresh = r.hash_ids[k];
        }
        shared_tok += (double)full * B;
        total_tok += r.input_tokens;
        sim_workload_release(w, &r);
    }
    CHECK(unknown == 0 && bad_layout == 0);
    for (int p = 0; p < P; p++) {
        double q = zipf_p(p, P, s);
        CHECK_NEAR((double)counts[p] / N, q, 5 * sqrt(q * (1 - q) / N));
    }
    /* Tokens in shared blocks: floor(P/B)·B per request over P + E[own]. */
    double expect = (double)full * B / (c.prefix.prompt_tokens + 500.0);
    CHECK_NEAR(shared_tok / total_tok, expect, 0.004);
    CHECK(sim_workload_ids_live(w) == 0);
    sim_workload_destroy(w);
}

/* Distinct prompts among n requests (the misses of an infinite cache):
 * E = Σ 1 − (1 − p_k)^n; indicators are negatively associated, so the
 * variance is at most Σ q(1 − q). */
static void test_distinct_prompts(void)
{
    const int P = 1000, N = 1500, SEEDS = 10;
    const double s = 1.1;
    double expect = 0, var = 0;
    for (int k = 0; k < P; k++) {
        double q = 1 - pow(1 - zipf_p(k, P, s), N);
        expect += q;
        var += q * (1 - q);
    }
    double mean = 0;
    char *seen = calloc(P, 1);
    for (int seed = 1; seed <= SEEDS && seen; seed++) {
        sim_workload_cfg c = base_cfg("system_prompt", SIM_ARRIVAL_CONSTANT, N);
        c.prefix.prompts = P;
        c.prefix.zipf_s = s;
        c.prefix.prompt_tokens = 64;
        /* Precompute the id of each prompt's single block once. */
        static uint32_t ids[1000];
        for (int p = 0; p < P; p++) ids[p] = sim_prefixgen_piece_id(SIM_PREFIX_SYSTEM_PROMPT, p, 0, 64);
        sim_workload *w = make(&c, (uint64_t)seed);
        if (!w) break;
        memset(seen, 0, P);
        int distinct = 0;
        sim_request_spec r;
        while (sim_workload_next(w, &r) == 1) {
            for (int p = 0; p < P; p++)
                if (ids[p] == r.hash_ids[0]) {
                    distinct += !seen[p];
                    seen[p] = 1;
                    break;
                }
            sim_workload_release(w, &r);
        }
        mean += (double)distinct / SEEDS;
        sim_workload_destroy(w);
    }
    free(seen);
    CHECK_NEAR(mean, expect, 5 * sqrt(var / SEEDS));
}

static void test_system_prompt(void)
{
    zipf_counts(1.0, 7);
    zipf_counts(0.0, 8);  /* uniform */
    zipf_counts(2.5, 9);  /* strong skew */
    test_distinct_prompts();
}

/* ---- multi-turn ---------------------------------------------------------- */

typedef struct {
    int64_t session;   /* -1 none yet */
    int32_t turn;
    int32_t len, out;  /* previous turn's prompt and answer */
    int32_t n;         /* ids of its context after the answer (ctx_ids) */
    uint32_t ids[8192];
    sim_time arrival;
} turn_rec;

/* Checks request r (own tokens `own`) against the previous turn of its
 * session slot record; returns the number of violations and updates rec. */
static int check_turn(turn_rec *rec, const sim_request_spec *r, int32_t own, int32_t B, int32_t turns,
                      int64_t *last_fresh)
{
    int bad = 0;
    int64_t sid = (int64_t)r->session - 1;
    int continues = rec->session == sid;
    if (continues) {
        /* Turn t+1 = turn t's prompt + its answer + the new message. */
        if (r->input_tokens != rec->len + rec->out + own) bad++;
        /* Turn t's full blocks once answered, with the ids its ctx_ids
         * gave the answer while it was computed. */
        int32_t keep = (rec->len + rec->out) / B;
        for (int32_t i = 0; i < keep; i++)
            if (r->hash_ids[i] != rec->ids[i]) bad++;
        if (B == 1 && keep != rec->n) bad++;
        /* A partial trailing block now holds more tokens: a new id. */
        if (rec->n > keep && r->hash_ids[keep] == rec->ids[keep]) bad++;
        for (int32_t i = keep; i < r->n_hash; i++) {
            if (r->hash_ids[i] >= SIM_PREFIX_SHARED_BIT || (int64_t)r->hash_ids[i] <= *last_fresh) bad++;
            *last_fresh = r->hash_ids[i];
        }
        if (rec->turn >= turns) bad++;
        rec->turn++;
    } else {
        /* A new session: nothing but the message, all fresh ids. */
        if (rec->session >= 0 && rec->turn != turns) bad++;
        if (r->input_tokens != own) bad++;
        for (int32_t i = 0; i < r->n_hash; i++) {
            if (r->hash_ids[i] >= SIM_PREFIX_SHARED_BIT || (int64_t)r->hash_ids[i] <= *last_fresh) bad++;
            *last_fresh = r->hash_ids[i];
        }
        rec->session = sid;
        rec->turn = 1;
    }
    if (r->n_hash != (r->input_tokens + B - 1) / B || r->n_hash > 8192) bad++;
    /* ctx_ids: the prompt's ids continued over the answer. */
    int64_t n_ctx = ((int64_t)r->input_tokens + r->output_tokens + B - 1) / B;
    if (r->n_ctx_ids != n_ctx || n_ctx > 8192 || !r->ctx_ids) return bad + 1;
    for (int32_t i = 0; i < r->n_hash; i++)
        if (r->ctx_ids[i] != r->hash_ids[i]) bad++;
    rec->len = r->input_tokens;
    rec->out = r->output_tokens;
    rec->n = r->n_ctx_ids;
    memcpy(rec->ids, r->ctx_ids, (size_t)rec->n * sizeof *rec->ids);
    rec->arrival = r->arrival;
    return bad;
}

static void multi_turn_open(int32_t B)
{
    const int N = 3000, S = 4, T = 3;
    sim_workload_cfg c = base_cfg("multi_turn", SIM_ARRIVAL_POISSON, N);
    c.prefix.block_tokens = B;
    c.prefix.sessions = S;
    c.prefix.turns = T;
    c.input_tokens.max = 200;
    c.output_tokens.max = 100;
    sim_workload_cfg cn = c;
    cn.prefix.kind = SIM_PREFIX_NONE;
    sim_workload *w = make(&c, 11), *wn = make(&cn, 11);
    /* Sessions are tracked by id; at most S are open, ids count up. */
    turn_rec *rec = calloc(N, sizeof *rec);
    if (!w || !wn || !rec) goto out;
    for (int i = 0; i < N; i++) rec[i].session = -1;
    int bad = 0, n = 0;
    int64_t next_sid = 0, last_fresh = -1, max_open = 0;
    double gap_sum = 0;
    int64_t gaps = 0;
    sim_request_spec r, rn;
    while (sim_workload_next(w, &r) == 1 && sim_workload_next(wn, &rn) == 1) {
        int64_t sid = (int64_t)r.session - 1;
        if (sid < 0 || sid > next_sid) {
            bad++;
            break;
        }
        if (sid == next_sid) next_sid++; /* opened in order */
        if (rec[sid].session == sid) {
            gap_sum += (double)(r.arrival - rec[sid].arrival) * 1e-9;
            gaps++;
        }
        bad += check_turn(&rec[sid], &r, rn.input_tokens, B, T, &last_fresh);
        int64_t open = 0;
        for (int64_t s = 0; s < next_sid; s++) open += rec[s].turn < T;
        if (open > max_open) max_open = open;
        sim_workload_release(w, &r);
        n++;
    }
    CHECK(n == N);
    CHECK_MSG(bad == 0, "B=%d: %d multi-turn violations", (int)B, bad);
    CHECK(max_open <= S);
    /* Every session but the last S ran all its turns: ~N/T sessions. */
    CHECK(next_sid >= N / T && next_sid <= N / T + S);
    /* A session's turns are a thinned Poisson process: mean gap S/rate. */
    double mean_gap = gap_sum / (double)gaps, expect = S / c.arrival.rate;
    CHECK_NEAR(mean_gap, expect, 5 * expect / sqrt((double)gaps));
out:
    free(rec);
    sim_workload_destroy(w);
    sim_workload_destroy(wn);
}

/* Closed loop: client c's requests are consecutive turns of its session. */
static void test_multi_turn_closed(void)
{
    const int C = 3, T = 4, N = 600;
    sim_workload_cfg c = base_cfg("multi_turn", SIM_ARRIVAL_CLOSED, N);
    c.arrival.concurrency = C;
    c.prefix.turns = T;
    c.prefix.block_tokens = 16;
    c.input_tokens.max = 200;
    c.output_tokens.max = 100;
    sim_workload_cfg cn = c;
    cn.prefix.kind = SIM_PREFIX_NONE;
    sim_workload *w = make(&c, 5), *wn = make(&cn, 5);
    turn_rec *rec = calloc(C, sizeof *rec);
    if (!w || !wn || !rec) goto out;
    for (int i = 0; i < C; i++) rec[i].session = -1;
    int bad = 0, n = 0;
    int64_t last_fresh = -1;
    sim_request_spec r, rn;
    /* Clients take turns in an irregular order, as completions would. */
    for (int i = 0; i < N; i++) {
        int32_t client = (int32_t)((i * 7 + i / 5) % C);
        if (sim_workload_sample_client(w, i, client, &r) != 1 || sim_workload_sample(wn, i, &rn) != 1) {
            bad++;
            break;
        }
        int64_t sid = (int64_t)r.session - 1;
        if (rec[client].session >= 0 && rec[client].session != sid && rec[client].turn != T) bad++;
        bad += check_turn(&rec[client], &r, rn.input_tokens, 16, T, &last_fresh);
        sim_workload_release(w, &r);
        n++;
    }
    CHECK(n == N);
    CHECK_MSG(bad == 0, "%d closed-loop multi-turn violations", bad);
    CHECK(sim_workload_sample_client(w, N, 0, &r) == 0);
    /* Without a client index, sample() still produces valid turns. */
    sim_workload_destroy(w);
    w = make(&c, 6);
    int ok = 1;
    for (int i = 0; w && i < 50; i++) {
        ok &= sim_workload_sample(w, i, &r) == 1 && r.session >= 1 && r.n_hash >= 1;
        sim_workload_release(w, &r);
    }
    CHECK(w && ok);
out:
    free(rec);
    sim_workload_destroy(w);
    sim_workload_destroy(wn);
}

static void test_multi_turn(void)
{
    multi_turn_open(1);  /* block = token: turn t+1 = turn t ids + answer ids + message ids */
    multi_turn_open(16); /* partial trailing blocks */
    test_multi_turn_closed();
}

/* ---- RAG ----------------------------------------------------------------- */

/* Document whose piece [off, off + len) has this id, or -1. */
static int doc_of(uint32_t id, int32_t docs, int64_t off, int64_t len)
{
    for (int d = 0; d < docs; d++)
        if (sim_prefixgen_piece_id(SIM_PREFIX_RAG, d, off, len) == id) return d;
    return -1;
}

#define RAG_N 4000
static int rag_docs[RAG_N][3];
static uint32_t rag_ids[RAG_N][64];
static int32_t rag_n[RAG_N];

/* Aligned documents (doc_tokens = 2 blocks): each slot's blocks are the
 * document's own ids wherever it sits; the first slot follows Zipf; docs
 * in a request are distinct; two prompts share exactly 2 blocks per equal
 * leading document and nothing after the first difference. */
static void test_rag_aligned(void)
{
    const int D = 50, M = 3;
    const double s = 0.8;
    sim_workload_cfg c = base_cfg("rag", SIM_ARRIVAL_POISSON, RAG_N);
    c.prefix.docs = D;
    c.prefix.docs_per_request = M;
    c.prefix.zipf_s = s;
    c.input_tokens.max = 100;
    sim_workload *w = make(&c, 3);
    if (!w) return;
    int bad = 0, n = 0;
    int64_t first[50] = {0};
    sim_request_spec r;
    while (sim_workload_next(w, &r) == 1) {
        if (r.n_hash > 64 || r.input_tokens <= M * 128) {
            bad++;
            break;
        }
        for (int j = 0; j < M; j++) {
            int d = doc_of(r.hash_ids[2 * j], D, 0, 64);
            if (d < 0 || doc_of(r.hash_ids[2 * j + 1], D, 64, 64) != d) bad++;
            for (int i = 0; i < j; i++)
                if (rag_docs[n][i] == d) bad++;
            rag_docs[n][j] = d;
        }
        for (int32_t i = 2 * M; i < r.n_hash; i++)
            if (r.hash_ids[i] >= SIM_PREFIX_SHARED_BIT) bad++;
        if (rag_docs[n][0] >= 0) first[rag_docs[n][0]]++;
        memcpy(rag_ids[n], r.hash_ids, (size_t)r.n_hash * sizeof(uint32_t));
        rag_n[n] = r.n_hash;
        sim_workload_release(w, &r);
        n++;
    }
    CHECK(n == RAG_N);
    CHECK_MSG(bad == 0, "%d aligned rag violations", bad);
    for (int d = 0; d < 10; d++) {
        double q = zipf_p(d, D, s);
        CHECK_NEAR((double)first[d] / RAG_N, q, 5 * sqrt(q * (1 - q) / RAG_N));
    }
    int lcp_bad = 0, pairs_sharing = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n && b < a + 200; b++) {
            int eq = 0;
            while (eq < M && rag_docs[a][eq] == rag_docs[b][eq]) eq++;
            if (lcp(rag_ids[a], rag_n[a], rag_ids[b], rag_n[b]) != 2 * eq) lcp_bad++;
            pairs_sharing += eq > 0;
        }
    CHECK_MSG(lcp_bad == 0, "%d pairs share a prefix other than their equal leading docs", lcp_bad);
    CHECK(pairs_sharing > 1000); /* the check above saw real sharing */
    sim_workload_destroy(w);
}

/* Documents of 96 tokens in 64-token blocks: block 1 straddles documents 0
 * and 1, so it is shared only by prompts whose first two documents agree. */
static void test_rag_straddling(void)
{
    const int D = 6;
    sim_workload_cfg c = base_cfg("rag", SIM_ARRIVAL_POISSON, 2000);
    c.prefix.docs = D;
    c.prefix.docs_per_request = 2;
    c.prefix.doc_tokens = 96;
    c.prefix.zipf_s = 0;
    sim_workload *w = make(&c, 4);
    if (!w) return;
    int bad = 0, n = 0;
    int saw[3] = {0};
    sim_request_spec r;
    while (sim_workload_next(w, &r) == 1 && n < RAG_N) {
        rag_docs[n][0] = doc_of(r.hash_ids[0], D, 0, 64);  /* doc 0 tokens 0..63 */
        rag_docs[n][1] = doc_of(r.hash_ids[2], D, 32, 64); /* doc 1 tokens 32..95 */
        if (rag_docs[n][0] < 0 || rag_docs[n][1] < 0 || rag_docs[n][0] == rag_docs[n][1]) bad++;
        if (r.hash_ids[1] < SIM_PREFIX_SHARED_BIT) bad++;
        if (doc_of(r.hash_ids[1], D, 64, 64) >= 0) bad++; /* two pieces, not one */
        if (r.input_tokens <= 192 || r.n_hash != (r.input_tokens + 63) / 64 || r.hash_ids[3] >= SIM_PREFIX_SHARED_BIT) bad++;
        memcpy(rag_ids[n], r.hash_ids, (size_t)(r.n_hash < 64 ? r.n_hash : 64) * sizeof(uint32_t));
        rag_n[n] = r.n_hash < 64 ? r.n_hash : 64;
        sim_workload_release(w, &r);
        n++;
    }
    CHECK_MSG(bad == 0, "%d straddling rag violations", bad);
    int lcp_bad = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n && b < a + 100; b++) {
            int e0 = rag_docs[a][0] == rag_docs[b][0], e1 = e0 && rag_docs[a][1] == rag_docs[b][1];
            int want = e1 ? 3 : e0 ? 1 : 0;
            if (lcp(rag_ids[a], rag_n[a], rag_ids[b], rag_n[b]) != want) lcp_bad++;
            saw[want == 3 ? 2 : want]++;
        }
    CHECK_MSG(lcp_bad == 0, "%d straddling pairs with a wrong shared prefix", lcp_bad);
    CHECK(saw[0] > 0 && saw[1] > 0 && saw[2] > 0);
    sim_workload_destroy(w);
}

/* docs_per_request = docs: every request holds all documents, drawn in
 * popularity order without replacement (the exact fallback draw). */
static void test_rag_all_docs(void)
{
    sim_workload_cfg c = base_cfg("rag", SIM_ARRIVAL_POISSON, 200);
    c.prefix.docs = 40;
    c.prefix.docs_per_request = 40;
    c.prefix.doc_tokens = 64;
    c.prefix.zipf_s = 3;
    sim_workload *w = make(&c, 2);
    if (!w) return;
    int bad = 0;
    double lower = 0, expect = 0, var = 0;
    sim_request_spec r;
    while (sim_workload_next(w, &r) == 1) {
        uint64_t mask = 0;
        int d38 = -1, d39 = -1;
        for (int j = 0; j < 40; j++) {
            int d = doc_of(r.hash_ids[j], 40, 0, 64);
            if (d < 0 || (mask >> d & 1)) bad++;
            else mask |= 1ULL << d;
            if (j == 38) d38 = d;
            if (j == 39) d39 = d;
        }
        /* Slot 38 chooses between the last two documents (the fallback's
         * territory) in proportion to their weights. */
        if (d38 >= 0 && d39 >= 0) {
            int lo = d38 < d39 ? d38 : d39, hi = d38 < d39 ? d39 : d38;
            double wl = pow(lo + 1, -3.0), wh = pow(hi + 1, -3.0), p = wl / (wl + wh);
            lower += d38 == lo;
            expect += p;
            var += p * (1 - p);
        }
        sim_workload_release(w, &r);
    }
    CHECK(bad == 0);
    CHECK_NEAR(lower, expect, 5 * sqrt(var) + 1);
    sim_workload_destroy(w);
}

static void test_rag(void)
{
    test_rag_aligned();
    test_rag_straddling();
    test_rag_all_docs();
}

/* ---- determinism, memory, errors ------------------------------------------ */

/* FNV-1a over the whole request stream of a workload. */
static uint64_t stream_digest(const char *kind, uint64_t seed)
{
    sim_workload_cfg c = base_cfg(kind, SIM_ARRIVAL_GAMMA, 500);
    c.arrival.cv = 2;
    sim_workload *w = make(&c, seed);
    uint64_t h = 0xcbf29ce484222325ULL;
    sim_request_spec r;
    while (w && sim_workload_next(w, &r) == 1) {
        uint64_t v[5] = {(uint64_t)r.arrival, (uint64_t)r.input_tokens, (uint64_t)r.output_tokens,
                         (uint64_t)r.n_hash, r.session};
        for (int i = 0; i < 5 + r.n_hash; i++) {
            h ^= i < 5 ? v[i] : r.hash_ids[i - 5];
            h *= 0x100000001b3ULL;
        }
        sim_workload_release(w, &r);
    }
    sim_workload_destroy(w);
    return h;
}

static void test_determinism(void)
{
    const char *kinds[] = {"system_prompt", "multi_turn", "rag"};
    for (int k = 0; k < 3; k++) {
        uint64_t a = stream_digest(kinds[k], 77), b = stream_digest(kinds[k], 77), d = stream_digest(kinds[k], 78);
        CHECK_MSG(a == b, "%s: same seed, different ids", kinds[k]);
        CHECK_MSG(a != d, "%s: seeds 77 and 78 gave the same stream", kinds[k]);
    }
}

/* Releasing requests as a window of W in flight keeps id storage bounded
 * by the window (plus the free pool and session chains); not releasing
 * grows it with the request count. */
static void memory_case(const char *kind, int release)
{
    enum { W = 16, N = 20000 };
    sim_workload_cfg c = base_cfg(kind, SIM_ARRIVAL_POISSON, N);
    c.prefix.turns = 50;
    sim_workload *w = make(&c, 9);
    if (!w) return;
    static sim_request_spec win[W];
    size_t bytes_mid = 0;
    int64_t n = 0;
    sim_request_spec r;
    while (sim_workload_next(w, &r) == 1) {
        if (release && n >= W) sim_workload_release(w, &win[n % W]);
        win[n % W] = r;
        n++;
        if (n == N / 10) bytes_mid = sim_workload_ids_bytes(w);
    }
    size_t bytes_end = sim_workload_ids_bytes(w);
    /* Bound: (pool floor 64 + window) buffers of the largest prompt, plus
     * the session chains (sessions x the largest context in blocks). */
    int64_t max_prompt = strcmp(kind, "multi_turn") == 0 ? (int64_t)c.prefix.turns * (999 + 300)
                         : strcmp(kind, "rag") == 0      ? 3 * 128 + 999
                                                         : 1000 + 999;
    int64_t blocks = (max_prompt + 63) / 64;
    size_t bound = (size_t)(64 + W + 1) * (64 + 4 * (size_t)blocks) +
                   (size_t)c.prefix.sessions * 2 * 4 * (size_t)blocks;
    if (release) {
        CHECK_MSG(sim_workload_ids_live(w) == W, "%s: %lld live", kind, (long long)sim_workload_ids_live(w));
        CHECK_MSG(bytes_end <= bound, "%s: %zu bytes held after %d requests (bound %zu)", kind, bytes_end, N,
                  bound);
        CHECK_MSG(bytes_end <= bytes_mid * 2, "%s: %zu bytes at %d, %zu at the end", kind, bytes_mid, N / 10,
                  bytes_end);
        for (int i = 0; i < W; i++) sim_workload_release(w, &win[i]);
        CHECK(sim_workload_ids_live(w) == 0);
    } else {
        CHECK(sim_workload_ids_live(w) == N);
        CHECK(bytes_end > bound); /* the bound above is not vacuous */
    }
    sim_workload_destroy(w); /* frees unreleased arrays too (ASan checks) */
}

/* After a burst of 1000 requests in flight is released, the free pool
 * shrinks back to its floor instead of keeping the peak. */
static void test_memory_spike(void)
{
    enum { K = 1000 };
    sim_workload_cfg c = base_cfg("system_prompt", SIM_ARRIVAL_POISSON, K);
    sim_workload *w = make(&c, 10);
    static sim_request_spec held[K];
    int n = 0;
    while (w && n < K && sim_workload_next(w, &held[n]) == 1) n++;
    CHECK(n == K);
    size_t peak = w ? sim_workload_ids_bytes(w) : 0;
    for (int i = 0; i < n; i++) sim_workload_release(w, &held[i]);
    size_t per_buf = 64 + 4 * (size_t)((1000 + 999 + 63) / 64);
    CHECK(w && sim_workload_ids_live(w) == 0);
    CHECK_MSG(w && sim_workload_ids_bytes(w) <= 64 * per_buf && peak > 64 * per_buf,
              "%zu bytes after release, %zu at peak", w ? sim_workload_ids_bytes(w) : 0, peak);
    sim_workload_destroy(w);
}

static void test_memory(void)
{
    test_memory_spike();
    memory_case("system_prompt", 1);
    memory_case("multi_turn", 1);
    memory_case("rag", 1);
    memory_case("system_prompt", 0);
}

static void expect_error(const sim_workload_cfg *c, const char *needle)
{
    sim_workload *w = (sim_workload *)0x1;
    sim_err err = {{0}};
    int rc = sim_workload_create(c, 1, &w, &err);
    CHECK_MSG(rc == SIM_EINVAL, "rc %d (%s)", rc, err.msg);
    CHECK(w == NULL);
    CHECK_CONTAINS(err.msg, needle);
}

static void test_errors(void)
{
    sim_workload_cfg c = base_cfg("none", SIM_ARRIVAL_POISSON, 10);
    c.prefix.kind = (sim_prefix_kind)7; /* a config built in code; the loader refuses names it does not know */
    expect_error(&c, "workload.prefix.kind: unknown kind 7");
    c = base_cfg("rag", SIM_ARRIVAL_POISSON, 10);
    c.prefix.docs_per_request = 51;
    expect_error(&c, "workload.prefix.docs_per_request");
    c = base_cfg("rag", SIM_ARRIVAL_POISSON, 10);
    c.prefix.zipf_s = -1;
    expect_error(&c, "workload.prefix.zipf_s");
    c = base_cfg("system_prompt", SIM_ARRIVAL_POISSON, 10);
    c.prefix.block_tokens = 0;
    expect_error(&c, "workload.prefix.block_tokens");
    c = base_cfg("system_prompt", SIM_ARRIVAL_POISSON, 10);
    c.prefix.prompts = 100000000;
    expect_error(&c, "workload.prefix.prompts: at most");
    c.prefix.zipf_s = 0; /* uniform needs no table: fine */
    sim_workload *w = make(&c, 1);
    sim_request_spec r;
    CHECK(w && sim_workload_next(w, &r) == 1 && r.input_tokens > 1000);
    if (w) sim_workload_release(w, &r);
    sim_workload_destroy(w);
    c = base_cfg("multi_turn", SIM_ARRIVAL_POISSON, 10);
    c.prefix.sessions = 0;
    expect_error(&c, "workload.prefix.sessions");
    c = base_cfg("multi_turn", SIM_ARRIVAL_POISSON, 10);
    c.trace.format = SIM_TRACE_CSV;
    snprintf(c.trace.path, sizeof c.trace.path, "x.csv");
    expect_error(&c, "not a trace");
}

static const test_case cases[] = {
    {"none_unchanged", test_none_unchanged},
    {"system_prompt", test_system_prompt},
    {"multi_turn", test_multi_turn},
    {"rag", test_rag},
    {"determinism", test_determinism},
    {"memory", test_memory},
    {"errors", test_errors},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    (void)argv;
    return test_run("test_prefixgen", cases);
}
