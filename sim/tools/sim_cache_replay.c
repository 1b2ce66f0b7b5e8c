/* sim_cache_replay — see sim_cache_replay.h. */
#include "sim_cache_replay.h"
#include "sim_clock.h"

#include "sim_prefix_keys.h"
#include "sim_parse.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    sim_time t;         /* arrival, ns */
    int64_t key_off;    /* first key in sim_cache_replay.keys */
    int32_t n_keys;     /* the prompt's */
    int32_t n_out_keys; /* its answer's, after them (sim_prefix_keys_answer) */
    int32_t input_tokens;
    int32_t output_tokens;
    uint64_t route;     /* hash of the leading hash ids */
} req;

struct sim_cache_replay {
    sim_cache_replay_cfg cfg;
    req *reqs;
    int64_t n;
    uint64_t *keys;
    int64_t n_keys;        /* prompt keys, the cacheable blocks */
    int64_t n_all_keys;    /* with the answers' */
    int64_t prompt_tokens;
};

void sim_cache_replay_cfg_defaults(sim_cache_replay_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->block_tokens = 512;
    cfg->hash_tokens = 512;
    cfg->policy = SIM_PREFIX_LRU;
    cfg->route = SIM_CACHE_ROUTE_ROUND_ROBIN;
    cfg->route_depth = 2;
}

/* Entry i as a turn of the key chain (its answer named by the line that
 * continues it, else keys of its own salted with i, as the simulator
 * salts with the request id); returns its prompt key count. */
static int32_t entry_turn(const sim_trace *t, int64_t i, const sim_cache_replay_cfg *cfg,
                          sim_prefix_turn *turn)
{
    const sim_trace_entry *e = &t->entries[i];
    int64_t f = sim_trace_continuation(t, i);
    const sim_trace_entry *fe = f >= 0 ? &t->entries[f] : NULL;
    *turn = (sim_prefix_turn){t->hashes + e->hash_off, e->n_hash, e->input_tokens, e->output_tokens,
                              fe && fe->n_hash > 0 ? t->hashes + fe->hash_off : NULL,
                              fe ? fe->n_hash : 0, (uint64_t)i};
    if (e->n_hash <= 0) return 0;
    return sim_prefix_keys_count(e->input_tokens, e->n_hash, cfg->hash_tokens, cfg->block_tokens);
}

int sim_cache_replay_prepare(const sim_trace *t, const sim_cache_replay_cfg *cfg,
                             sim_cache_replay **out, sim_err *err)
{
    *out = NULL;
    if (cfg->block_tokens <= 0 || cfg->hash_tokens <= 0)
        return sim_err_set(err, SIM_EINVAL, "block sizes must be positive (cache %d, hash %d)",
                           cfg->block_tokens, cfg->hash_tokens);
    if (cfg->route_depth <= 0)
        return sim_err_set(err, SIM_EINVAL, "route depth must be positive, not %d",
                           cfg->route_depth);
    sim_cache_replay *r = calloc(1, sizeof *r);
    if (!r) goto nomem;
    r->cfg = *cfg;
    r->n = t->n;
    r->reqs = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof *r->reqs);
    if (!r->reqs) goto nomem;
    int64_t total = 0;
    for (int64_t i = 0; i < t->n; i++) {
        sim_prefix_turn turn;
        int32_t n = entry_turn(t, i, cfg, &turn);
        total += sim_prefix_keys_total(&turn, n, cfg->block_tokens);
    }
    r->keys = malloc((size_t)(total > 0 ? total : 1) * sizeof *r->keys);
    if (!r->keys) goto nomem;
    for (int64_t i = 0; i < t->n; i++) {
        const sim_trace_entry *e = &t->entries[i];
        const uint32_t *ids = t->hashes + e->hash_off;
        req *q = &r->reqs[i];
        sim_prefix_turn turn;
        int32_t n = entry_turn(t, i, cfg, &turn);
        int32_t n_all = sim_prefix_keys_total(&turn, n, cfg->block_tokens);
        uint64_t *keys = r->keys + r->n_all_keys;
        q->t = (sim_time)llround(e->timestamp_s * 1e9);
        q->input_tokens = e->input_tokens;
        q->output_tokens = e->output_tokens;
        q->key_off = r->n_all_keys;
        q->n_keys = sim_prefix_keys_build(ids, e->n_hash, e->input_tokens, cfg->hash_tokens,
                                          cfg->block_tokens, keys, n);
        q->n_out_keys = sim_prefix_keys_answer(&turn, cfg->hash_tokens, cfg->block_tokens, keys,
                                               q->n_keys, n_all);
        r->n_keys += q->n_keys;
        r->n_all_keys += q->n_keys + q->n_out_keys;
        r->prompt_tokens += e->input_tokens;
        uint64_t h = SIM_PREFIX_KEY_ROOT;
        for (int32_t k = 0; k < e->n_hash && k < cfg->route_depth; k++)
            h = sim_prefix_key_mix(h, ids[k]);
        /* Requests without hash ids have nothing to be sticky about. */
        q->route = e->n_hash > 0 ? h : sim_prefix_key_mix(h, (uint64_t)i);
    }
    *out = r;
    return 0;
nomem:
    sim_cache_replay_destroy(r);
    return sim_err_set(err, SIM_ENOMEM, "out of memory preparing the cache replay");
}

void sim_cache_replay_destroy(sim_cache_replay *r)
{
    if (!r) return;
    free(r->reqs);
    free(r->keys);
    free(r);
}

/* q's answer done at once: the full blocks of its KV at completion (its
 * prompt and answer but the last token sampled, never computed) join the
 * index under its answer keys, as the simulator's instance keeps them.
 * The caller holds a reference on keys[0, held); returns how many leading
 * keys it holds one on now, or an error. */
static int32_t insert_answer(sim_prefix *idx, const req *q, int32_t block_tokens,
                             const uint64_t *keys, int32_t held)
{
    int64_t done = ((int64_t)q->input_tokens + q->output_tokens - 1) / block_tokens;
    int64_t most = (int64_t)q->n_keys + q->n_out_keys;
    if (done > most) done = most;
    if (q->n_out_keys <= 0 || done <= held) return held;
    int32_t created = 0;
    int32_t got = sim_prefix_insert(idx, keys, (int32_t)done, q->t, &created);
    if (got < 0) return got;
    int32_t existed_to = got - created;
    if (existed_to > held) {
        /* Chains walk from the root: take the whole run, then drop the part
         * already held, netting +1 on the rest. */
        sim_prefix_acquire(idx, keys, existed_to, q->t);
        sim_prefix_release(idx, keys, held, q->t);
    }
    return got;
}

int sim_cache_replay_run(const sim_cache_replay *r, int32_t n_caches, int64_t blocks_per_cache,
                         sim_cache_replay_result *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (n_caches <= 0)
        return sim_err_set(err, SIM_EINVAL, "need at least one cache, not %d", n_caches);
    if (blocks_per_cache < -1)
        return sim_err_set(err, SIM_EINVAL, "cache capacity %lld blocks out of range",
                           (long long)blocks_per_cache);
    int rc = 0;
    sim_prefix **caches = calloc((size_t)n_caches, sizeof *caches);
    if (!caches) return sim_err_set(err, SIM_ENOMEM, "out of memory for %d caches", n_caches);
    /* An index with capacity 0 is bounded by its owner; here nothing ever
     * evicts from it, which is exactly an infinite cache. */
    int64_t cap = blocks_per_cache < 0 ? 0 : blocks_per_cache;
    if (blocks_per_cache != 0) {
        for (int32_t c = 0; c < n_caches; c++)
            if ((rc = sim_prefix_create(cap, r->cfg.policy, &caches[c], err)) < 0) goto fail;
    }
    out->requests = r->n;
    out->prompt_tokens = r->prompt_tokens;
    out->cacheable_blocks = r->n_keys;
    for (int64_t i = 0; i < r->n && blocks_per_cache != 0; i++) {
        const req *q = &r->reqs[i];
        if (q->n_keys == 0) continue;
        uint64_t which = r->cfg.route == SIM_CACHE_ROUTE_HASH ? q->route % (uint64_t)n_caches
                                                               : (uint64_t)(i % n_caches);
        sim_prefix *idx = caches[which];
        const uint64_t *keys = r->keys + q->key_off;
        int32_t m = sim_prefix_match(idx, keys, q->n_keys, q->t);
        out->matched_blocks += m;
        sim_prefix_acquire(idx, keys, m, q->t);
        int32_t created = 0;
        int32_t have = sim_prefix_insert(idx, keys, q->n_keys, q->t, &created);
        if (have < 0) {
            rc = sim_err_set(err, have, "out of memory inserting request %lld", (long long)i);
            goto fail;
        }
        if (have < q->n_keys) out->short_inserts++;
        else if ((have = insert_answer(idx, q, r->cfg.block_tokens, keys, have)) < 0) {
            rc = sim_err_set(err, have, "out of memory inserting request %lld's answer", (long long)i);
            goto fail;
        }
        sim_prefix_release(idx, keys, have, q->t);
    }
    for (int32_t c = 0; c < n_caches; c++) {
        if (!caches[c]) continue;
        sim_prefix_stats st;
        sim_prefix_stats_get(caches[c], &st);
        out->evicted_blocks += st.evicted;
    }
    out->matched_tokens = out->matched_blocks * r->cfg.block_tokens;
    out->token_hit = out->prompt_tokens ? (double)out->matched_tokens / out->prompt_tokens : 0;
    out->block_hit =
        out->cacheable_blocks ? (double)out->matched_blocks / out->cacheable_blocks : 0;
fail:
    for (int32_t c = 0; c < n_caches; c++) sim_prefix_destroy(caches[c]);
    free(caches);
    return rc;
}

/* ---- CLI ------------------------------------------------------------------ */

#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define MAX_CAPS 64

static const char usage[] =
    "usage: servesim cache-replay TRACE [options]\n"
    "\n"
    "Replays a trace's prefix blocks in timestamp order against prefix caches of\n"
    "the given sizes (no timing: each request matches, inserts its prompt's\n"
    "blocks and the full blocks of its answer, as the simulator's instances keep\n"
    "them for a session's next turn, and releases them before the next arrives)\n"
    "and prints the hit rates: matched\n"
    "prompt tokens / prompt tokens and matched blocks / cacheable blocks, with\n"
    "the theoretical maximum (an infinite global cache).\n"
    "\n"
    "options:\n"
    "  --format mooncake|csv     trace format (default mooncake; csv has no hash ids)\n"
    "  --block-tokens C          cache block size in tokens (default 512)\n"
    "  --hash-tokens H           tokens per trace hash id (default 512, Mooncake)\n"
    "  --capacity-tokens N ...   cache sizes in tokens: integers with an optional\n"
    "                            K/M/G suffix, or inf; comma-separated, several\n"
    "                            values or the flag repeated\n"
    "                            (default 1M,3M,10M,50M,inf)\n"
    "  --policy lru|lfu          eviction order (default lru)\n"
    "  --instances K             also split the trace over K per-instance caches and\n"
    "                            print, per size N: one global pool of N, K local\n"
    "                            caches of N/K (same total memory) and K local\n"
    "                            caches of N each (default 1: global only)\n"
    "  --route round_robin|hash  how requests pick an instance (default round_robin);\n"
    "                            hash = hash of the first D hash ids (sticky prefixes)\n"
    "  --route-depth D           hash ids the hash route looks at (default 2)\n"
    "  --json                    one JSON object instead of the table\n";

typedef struct {
    const char *path;
    sim_trace_format fmt;
    sim_cache_replay_cfg cfg;
    int64_t caps[MAX_CAPS]; /* tokens, -1 = infinite */
    int n_caps;
    int32_t instances;
    int json;
} cli_args;

/* "3M", "62.5K", "1000000", "inf" → tokens (-1 = infinite). */
static int parse_tokens(const char *s, int64_t *out)
{
    if (strcmp(s, "inf") == 0 || strcmp(s, "infinite") == 0) {
        *out = -1;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return SIM_EINVAL;
    double mult = 1;
    if (*end == 'k' || *end == 'K') mult = 1e3, end++;
    else if (*end == 'm' || *end == 'M') mult = 1e6, end++;
    else if (*end == 'g' || *end == 'G') mult = 1e9, end++;
    if (*end != '\0' || !(v > 0) || v * mult > 1e15) return SIM_EINVAL;
    double tok = v * mult;
    if (tok != floor(tok)) return SIM_EINVAL;
    *out = (int64_t)tok;
    return 0;
}

/* Adds each comma-separated value of s; SIM_EINVAL if any is bad. */
static int add_caps(cli_args *a, const char *s)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return SIM_EINVAL;
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (a->n_caps >= MAX_CAPS) return SIM_ERANGE;
        if (parse_tokens(tok, &a->caps[a->n_caps]) < 0) return SIM_EINVAL;
        a->n_caps++;
    }
    return 0;
}

static int parse_int(const char *s, int32_t lo, int32_t hi, int32_t *out)
{
    int64_t v;
    if (sim_parse_i64(s, &v) != SIM_PARSE_OK || v < lo || v > hi) return SIM_EINVAL;
    *out = (int32_t)v;
    return 0;
}

static int parse_args(int argc, char **argv, cli_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    sim_cache_replay_cfg_defaults(&a->cfg);
    a->fmt = SIM_TRACE_MOONCAKE;
    a->instances = 1;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (strcmp(o, "--json") == 0) {
            a->json = 1;
            continue;
        }
        if (o[0] != '-') {
            if (a->path) {
                fprintf(stderr, "servesim cache-replay: more than one trace ('%s', '%s')\n",
                        a->path, o);
                return SIM_EINVAL;
            }
            a->path = o;
            continue;
        }
        if (!v) {
            fprintf(stderr, "servesim cache-replay: %s needs a value\n", o);
            return SIM_EINVAL;
        }
        int bad = 0;
        i++;
        if (strcmp(o, "--format") == 0) {
            if (strcmp(v, "mooncake") == 0) a->fmt = SIM_TRACE_MOONCAKE;
            else if (strcmp(v, "csv") == 0) a->fmt = SIM_TRACE_CSV;
            else bad = 1;
        } else if (strcmp(o, "--block-tokens") == 0) {
            bad = parse_int(v, 1, 1 << 24, &a->cfg.block_tokens) < 0;
        } else if (strcmp(o, "--hash-tokens") == 0) {
            bad = parse_int(v, 1, 1 << 24, &a->cfg.hash_tokens) < 0;
        } else if (strcmp(o, "--capacity-tokens") == 0) {
            bad = add_caps(a, v) < 0;
            /* Further bare values belong to this flag too. */
            int64_t probe;
            while (!bad && i + 1 < argc && argv[i + 1][0] != '-' &&
                   (parse_tokens(argv[i + 1], &probe) == 0 || strchr(argv[i + 1], ',')) &&
                   add_caps(a, argv[i + 1]) == 0)
                i++;
        } else if (strcmp(o, "--policy") == 0) {
            bad = sim_prefix_policy_parse(v, &a->cfg.policy) < 0;
        } else if (strcmp(o, "--instances") == 0) {
            bad = parse_int(v, 1, 1 << 20, &a->instances) < 0;
        } else if (strcmp(o, "--route") == 0) {
            if (strcmp(v, "round_robin") == 0) a->cfg.route = SIM_CACHE_ROUTE_ROUND_ROBIN;
            else if (strcmp(v, "hash") == 0) a->cfg.route = SIM_CACHE_ROUTE_HASH;
            else bad = 1;
        } else if (strcmp(o, "--route-depth") == 0) {
            bad = parse_int(v, 1, 1 << 20, &a->cfg.route_depth) < 0;
        } else {
            fprintf(stderr, "servesim cache-replay: unknown option '%s'\n", o);
            return SIM_EINVAL;
        }
        if (bad) {
            fprintf(stderr, "servesim cache-replay: bad value '%s' for %s\n", v, o);
            return SIM_EINVAL;
        }
    }
    if (!a->path) {
        fprintf(stderr, "servesim cache-replay: no trace given\n");
        return SIM_EINVAL;
    }
    if (a->n_caps == 0) add_caps(a, "1M,3M,10M,50M,inf");
    return 0;
}

/* 62500 → "62.5K", 3000000 → "3M", -1 → "inf". */
static void fmt_tokens(char *buf, size_t n, int64_t tok)
{
    if (tok < 0) {
        snprintf(buf, n, "inf");
        return;
    }
    static const struct { double div; const char *sfx; } u[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        if (tok >= u[i].div) {
            snprintf(buf, n, "%.4g%s", tok / u[i].div, u[i].sfx);
            return;
        }
    }
    snprintf(buf, n, "%lld", (long long)tok);
}

typedef struct {
    int64_t cap_tokens;        /* total asked for, -1 = infinite */
    const char *layout;        /* global | local_split | local_each | local */
    int32_t caches;
    int64_t tokens_per_cache;  /* -1 = infinite */
    sim_cache_replay_result res;
} row;

static int64_t blocks_of(int64_t tokens, int32_t block_tokens)
{
    return tokens < 0 ? -1 : tokens / block_tokens;
}

/* The rows to replay for each capacity asked for (a global cache, and with
 * several instances local caches that split it or each hold it), into
 * *rows (the caller frees it). -1 when out of memory. */
static int replay_rows(const cli_args *a, row **rows, int *n_rows)
{
    const int32_t K = a->instances;
    row *w = calloc((size_t)a->n_caps * 3 + 2, sizeof *w);
    *rows = w;
    *n_rows = 0;
    if (!w) return -1;
    int n = 0;
    for (int c = 0; c < a->n_caps; c++) {
        int64_t N = a->caps[c];
        w[n++] = (row){N, "global", 1, N, {0}};
        if (K > 1 && N < 0) w[n++] = (row){N, "local", K, -1, {0}};
        if (K > 1 && N >= 0) {
            w[n++] = (row){N, "local_split", K, N / K, {0}};
            w[n++] = (row){N, "local_each", K, N, {0}};
        }
    }
    *n_rows = n;
    return 0;
}

/* The replay as one JSON document on stdout (m: the infinite global
 * cache's result). -1 when out of memory. */
static int print_json(const cli_args *a, const row *rows, int n_rows, const sim_cache_replay_result *m)
{
    const int32_t C = a->cfg.block_tokens;
    json_t *doc = json_object(), *jrows = json_array();
    int rc = -1;
    if (!doc || !jrows) {
        json_decref(jrows);
        goto out;
    }
    json_object_set_new(doc, "trace", json_string(a->path));
    json_object_set_new(doc, "requests", json_integer(m->requests));
    json_object_set_new(doc, "prompt_tokens", json_integer(m->prompt_tokens));
    json_object_set_new(doc, "cacheable_blocks", json_integer(m->cacheable_blocks));
    json_object_set_new(doc, "block_tokens", json_integer(C));
    json_object_set_new(doc, "hash_tokens", json_integer(a->cfg.hash_tokens));
    json_object_set_new(doc, "policy", json_string(sim_prefix_policy_name(a->cfg.policy)));
    json_object_set_new(doc, "instances", json_integer(a->instances));
    json_object_set_new(doc, "route", json_string(a->cfg.route == SIM_CACHE_ROUTE_HASH ? "hash" : "round_robin"));
    json_object_set_new(doc, "max_token_hit_rate", json_real(m->token_hit));
    json_object_set_new(doc, "max_block_hit_rate", json_real(m->block_hit));
    json_object_set_new(doc, "rows", jrows);
    for (int i = 0; i < n_rows; i++) {
        const row *w = &rows[i];
        json_t *o = json_object();
        if (!o) goto out;
        json_array_append_new(jrows, o);
        json_object_set_new(o, "capacity_tokens", w->cap_tokens < 0 ? json_null() : json_integer(w->cap_tokens));
        json_object_set_new(o, "layout", json_string(w->layout));
        json_object_set_new(o, "caches", json_integer(w->caches));
        json_object_set_new(o, "capacity_blocks_per_cache",
                            w->tokens_per_cache < 0 ? json_null() : json_integer(blocks_of(w->tokens_per_cache, C)));
        json_object_set_new(o, "token_hit_rate", json_real(w->res.token_hit));
        json_object_set_new(o, "block_hit_rate", json_real(w->res.block_hit));
        json_object_set_new(o, "matched_blocks", json_integer(w->res.matched_blocks));
        json_object_set_new(o, "evicted_blocks", json_integer(w->res.evicted_blocks));
        json_object_set_new(o, "short_inserts", json_integer(w->res.short_inserts));
    }
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    if (!s) goto out;
    puts(s);
    free(s);
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

/* The replay as a table (m: the infinite global cache's result). */
static void print_table(const cli_args *a, const row *rows, int n_rows, const sim_cache_replay_result *m,
                        double elapsed)
{
    const int32_t K = a->instances, C = a->cfg.block_tokens;
    printf("cache-replay: %s\n", a->path);
    printf("  %lld requests, %lld prompt tokens, %lld cacheable blocks of %d tokens; "
           "policy %s",
           (long long)m->requests, (long long)m->prompt_tokens, (long long)m->cacheable_blocks, C,
           sim_prefix_policy_name(a->cfg.policy));
    if (K > 1) printf("; %d instances, route %s", K, a->cfg.route == SIM_CACHE_ROUTE_HASH ? "hash" : "round_robin");
    printf("\n\n%-10s %-22s %10s %10s %12s\n", "capacity", "layout", "token_hit", "block_hit", "evicted");
    for (int i = 0; i < n_rows; i++) {
        const row *w = &rows[i];
        char cap[32], per[32], layout[64];
        fmt_tokens(cap, sizeof cap, w->cap_tokens);
        fmt_tokens(per, sizeof per, w->tokens_per_cache);
        snprintf(layout, sizeof layout, "%s %d x %s", w->caches == 1 ? "global" : "local", w->caches, per);
        printf("%-10s %-22s %10.4f %10.4f %12lld\n", cap, layout, w->res.token_hit, w->res.block_hit,
               (long long)w->res.evicted_blocks);
    }
    printf("\ntheoretical maximum (infinite global cache): token hit %.4f, block hit %.4f\n", m->token_hit,
           m->block_hit);
    if (m->cacheable_blocks == 0) printf("note: the trace has no hash ids, so nothing is cacheable\n");
    printf("replayed %d configurations in %.3f s\n", n_rows + 1, elapsed);
}

int sim_cli_cache_replay(int argc, char **argv)
{
    cli_args a;
    int help = 0;
    if (parse_args(argc, argv, &a, &help) < 0) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    if (help) {
        fputs(usage, stdout);
        return 0;
    }
    int code = EXIT_FAIL;
    sim_err err = {{0}};
    sim_trace *t = NULL;
    sim_cache_replay *r = NULL;
    row *rows = NULL;
    int n_rows = 0;
    int rc = sim_trace_load(a.path, a.fmt, &t, &err);
    if (rc < 0) {
        fprintf(stderr, "servesim cache-replay: %s\n", err.msg);
        code = rc == SIM_ENOMEM ? EXIT_FAIL : EXIT_USAGE;
        goto fail;
    }
    if ((rc = sim_cache_replay_prepare(t, &a.cfg, &r, &err)) < 0) {
        fprintf(stderr, "servesim cache-replay: %s\n", err.msg);
        code = rc == SIM_EINVAL ? EXIT_USAGE : EXIT_FAIL;
        goto fail;
    }
    if (replay_rows(&a, &rows, &n_rows) < 0) goto fail;
    double t0 = sim_wall_s();
    row max = {-1, "global", 1, -1, {0}};
    for (int i = 0; i <= n_rows; i++) {
        row *w = i < n_rows ? &rows[i] : &max;
        rc = sim_cache_replay_run(r, w->caches, blocks_of(w->tokens_per_cache, a.cfg.block_tokens), &w->res, &err);
        if (rc < 0) {
            fprintf(stderr, "servesim cache-replay: %s\n", err.msg);
            goto fail;
        }
    }
    double elapsed = sim_wall_s() - t0;
    if (a.json) {
        if (print_json(&a, rows, n_rows, &max.res) < 0) goto fail;
    } else {
        print_table(&a, rows, n_rows, &max.res, elapsed);
    }
    code = 0;
fail:
    if (code == EXIT_FAIL && rc >= 0) fprintf(stderr, "servesim cache-replay: out of memory\n");
    free(rows);
    sim_cache_replay_destroy(r);
    sim_trace_destroy(t);
    return code;
}
