/* sim_cli_estimate — `servesim estimate` (TTFT, TPOT and throughput of one
 * deployment from flags, the AIConfigurator `estimate` habit) and
 * `servesim init` (a commented starting scenario with a `search:` block).
 *
 * Both build a scenario as YAML text and go through the scenario loader,
 * so every value is checked, and reported, by the loader's own rules. The
 * layout and scheduler flags are not declared here one by one: `--NAME V`
 * is the pool key deployment.pools.0.parallel.NAME (or .scheduler.NAME,
 * '-' read as '_') when the schema table has it, so every parallel and
 * scheduler key of the reference is a flag. Errors: messages on stderr,
 * exit 2 for bad usage or input, 1 when the run or a write fails. */
#include "sim_cli_estimate.h"

#include "sim_clock.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_parse.h"
#include "sim_schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MAX_FLAGS 64

/* deployment.pools.0.<section>.<key> for a flag name, "" when the schema has none. */
static int pool_key(const char *flag, char *set_key, size_t len)
{
    static const char *const sections[] = {"parallel", "scheduler"};
    char name[64];
    size_t n = 0;
    for (const char *c = flag; *c && n + 1 < sizeof name; c++) name[n++] = *c == '-' ? '_' : *c;
    name[n] = '\0';
    for (size_t s = 0; s < 2; s++) {
        char pat[128];
        snprintf(pat, sizeof pat, "deployment.pools.*.%s.%s", sections[s], name);
        const sim_schema_field *f = sim_schema_lookup(pat);
        if (f && f->type != SIM_SCHEMA_MAP && f->type != SIM_SCHEMA_LIST) {
            snprintf(set_key, len, "deployment.pools.0.%s.%s", sections[s], name);
            return 1;
        }
    }
    return 0;
}

/* The pool flags, listed from the schema table for --help. */
static void print_pool_flags(FILE *f)
{
    size_t nt;
    const sim_schema_field *t = sim_schema_table(&nt);
    static const char *const pre[] = {"deployment.pools.*.parallel.", "deployment.pools.*.scheduler."};
    for (int s = 0; s < 2; s++) {
        fprintf(f, "  %s flags:", s ? "scheduler" : "layout");
        int col = 18;
        for (size_t i = 0; i < nt; i++) {
            if (strncmp(t[i].path, pre[s], strlen(pre[s])) != 0) continue;
            char flag[64];
            size_t n = 0;
            for (const char *c = t[i].path + strlen(pre[s]); *c && n + 1 < sizeof flag; c++)
                flag[n++] = *c == '_' ? '-' : *c;
            flag[n] = '\0';
            if (col + (int)n + 3 > 96) {
                fputs("\n                   ", f);
                col = 19;
            }
            col += fprintf(f, " --%s", flag);
        }
        fputc('\n', f);
    }
}

static const char *usage_estimate =
    "usage: servesim estimate --model M --gpu G [--tp N --pp N --dp N --ep N ...] --isl N --osl N\n"
    "                         (--concurrency C | --rate R) [--instances N] [--requests N] [--seed N]\n"
    "                         [--set key.path=value ...] [--no-perf-db] [--json]\n"
    "\n"
    "Simulates one colocated deployment of the model on the GPU with fixed-length requests (ISL\n"
    "prompt tokens, OSL output tokens) and prints TTFT, TPOT, end-to-end latency and throughput.\n"
    "  --concurrency C  closed loop: C clients, each sending its next request on a reply\n"
    "  --rate R         open loop: Poisson arrivals at R requests/s\n"
    "  --instances N    identical instances behind the router (default 1)\n"
    "  --requests N     requests simulated (default: 10 per client or 60 s of arrivals, 200..20000)\n"
    "  --set k=v        any other scenario key (see `servesim schema`)\n"
    "Every parallel and scheduler key of the scenario reference is a flag (--NAME VALUE, '_' as '-'):\n";

static const char *usage_init =
    "usage: servesim init --model M --gpu G --slo-ttft MS --slo-tpot MS [--gpus N] [--isl N --osl N]\n"
    "                     [-o FILE] [--force]\n"
    "\n"
    "Writes a commented scenario for the model on the GPU with the SLO (TTFT and TPOT in ms at\n"
    "p90) and a `search:` block over up to N GPUs (default 8), ready for `servesim search FILE`.\n"
    "The starting deployment is the smallest TP that fits the model; the workload is lognormal\n"
    "around ISL/OSL (default 1024/256). FILE defaults to MODEL-GPU.yaml in the working directory\n"
    "and is not overwritten without --force.\n";

/* Strict positive integer (the whole string). */
static int parse_pos(const char *v, long long *out)
{
    int64_t x;
    if (sim_parse_i64(v, &x) != SIM_PARSE_OK || x <= 0) return -1;
    *out = x;
    return 0;
}

static int parse_posd(const char *v, double *out)
{
    double x;
    if (sim_parse_double(v, &x) != SIM_PARSE_OK || !(x > 0)) return -1;
    *out = x;
    return 0;
}

/* A YAML-safe scalar: catalogue names and config paths only. */
static int plain_scalar(const char *v)
{
    if (!*v) return 0;
    for (const char *c = v; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("-_./+", *c)))
            return 0;
    return 1;
}

/* The command line of `servesim estimate`. */
typedef struct {
    const char *model, *gpu, *sets[MAX_FLAGS + 4];
    char keys[MAX_FLAGS][160]; /* parallel / scheduler flags as key=value sets */
    int n_sets, json, no_perf_db;
    long long isl, osl, conc, instances, requests, seed;
    double rate;
} estimate_args;

/* One "--flag value" (f the flag's name without "--"): 0, or EXIT_USAGE
 * after the message. */
static int estimate_flag(estimate_args *e, const char *a, const char *f, const char *v)
{
    long long *ip = strcmp(f, "isl") == 0 ? &e->isl : strcmp(f, "osl") == 0 ? &e->osl
                  : strcmp(f, "concurrency") == 0 ? &e->conc : strcmp(f, "instances") == 0 ? &e->instances
                  : strcmp(f, "requests") == 0 ? &e->requests : strcmp(f, "seed") == 0 ? &e->seed : NULL;
    if (strcmp(f, "model") == 0) e->model = v;
    else if (strcmp(f, "gpu") == 0) e->gpu = v;
    else if (ip) {
        if (parse_pos(v, ip) < 0) {
            fprintf(stderr, "servesim: estimate: %s: expected a positive integer, got '%s'\n", a, v);
            return EXIT_USAGE;
        }
    } else if (strcmp(f, "rate") == 0) {
        if (parse_posd(v, &e->rate) < 0) {
            fprintf(stderr, "servesim: estimate: --rate: expected requests/s > 0, got '%s'\n", v);
            return EXIT_USAGE;
        }
    } else if (strcmp(f, "set") == 0) {
        if (!strchr(v, '=') || e->n_sets == MAX_FLAGS) {
            fprintf(stderr, "servesim: estimate: --set needs key.path=value (at most %d)\n", MAX_FLAGS);
            return EXIT_USAGE;
        }
        e->sets[e->n_sets++] = v;
    } else if (e->n_sets < MAX_FLAGS && pool_key(f, e->keys[e->n_sets], sizeof e->keys[e->n_sets] - 40)) {
        size_t kl = strlen(e->keys[e->n_sets]);
        snprintf(e->keys[e->n_sets] + kl, sizeof e->keys[e->n_sets] - kl, "=%.38s", v);
        e->sets[e->n_sets] = e->keys[e->n_sets];
        e->n_sets++;
    } else {
        fprintf(stderr, "servesim: estimate: unknown option '%s' (not a parallel or scheduler key either)\n%s", a,
                usage_estimate);
        print_pool_flags(stderr);
        return EXIT_USAGE;
    }
    return 0;
}

/* Parses and checks the command line: -1 to go on, else the exit status. */
static int estimate_parse(int argc, char **argv, estimate_args *e)
{
    memset(e, 0, sizeof *e);
    e->instances = 1;
    e->seed = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_estimate, stdout);
            print_pool_flags(stdout);
            return 0;
        }
        if (strcmp(a, "--json") == 0) {
            e->json = 1;
            continue;
        }
        if (strcmp(a, "--no-perf-db") == 0) {
            e->no_perf_db = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "servesim: estimate: unexpected argument '%s'\n%s", a, usage_estimate);
            return EXIT_USAGE;
        }
        if (!v) {
            fprintf(stderr, "servesim: estimate: %s needs a value\n", a);
            return EXIT_USAGE;
        }
        i++;
        int rc = estimate_flag(e, a, a + 2, v);
        if (rc) return rc;
    }
    if (!e->model || !e->gpu || !e->isl || !e->osl || (e->conc > 0) == (e->rate > 0)) {
        fprintf(stderr, "servesim: estimate: needs --model, --gpu, --isl, --osl and one of --concurrency or --rate\n%s",
                usage_estimate);
        return EXIT_USAGE;
    }
    if (!plain_scalar(e->model) || !plain_scalar(e->gpu)) {
        fprintf(stderr, "servesim: estimate: --model and --gpu take a catalogue name or a config path\n");
        return EXIT_USAGE;
    }
    if (e->no_perf_db) e->sets[e->n_sets++] = "hardware.perf_db=" SIM_PERF_DB_NONE;
    if (e->requests == 0) {
        e->requests = e->conc > 0 ? 10 * e->conc : (long long)(60 * e->rate);
        if (e->requests < 200) e->requests = 200;
        if (e->requests > 20000) e->requests = 20000;
    }
    return -1;
}

/* The scenario the flags describe, as YAML the loader reads. */
static void estimate_yaml(const estimate_args *e, char *yaml, size_t len)
{
    char arrival[128];
    if (e->conc > 0) snprintf(arrival, sizeof arrival, "{process: closed_loop, concurrency: %lld}", e->conc);
    else snprintf(arrival, sizeof arrival, "{process: poisson, rate: %.17g}", e->rate);
    snprintf(yaml, len,
             "name: estimate\nmodel: %s\nhardware: {gpu: %s}\n"
             "workload:\n  requests: %lld\n  arrival: %s\n"
             "  input_tokens: {dist: fixed, value: %lld, max: %lld}\n"
             "  output_tokens: {dist: fixed, value: %lld, max: %lld}\n"
             "deployment:\n  mode: colocated\n  pools:\n    - {role: colocated, instances: %lld}\n",
             e->model, e->gpu, e->requests, arrival, e->isl, e->isl, e->osl, e->osl, e->instances);
    if (e->seed >= 0) {
        size_t l = strlen(yaml);
        snprintf(yaml + l, len - l, "seed: %lld\n", e->seed);
    }
}

/* The estimate as a short table. */
static void estimate_print(const estimate_args *e, const sim_cluster *cl, const sim_summary *sum)
{
    char desc[512];
    sim_cluster_describe(cl, desc, sizeof desc);
    printf("estimate: %s\n", desc);
    if (e->conc > 0)
        printf("workload: ISL %lld, OSL %lld, %lld concurrent clients (closed loop), %lld requests\n", e->isl, e->osl,
               e->conc, e->requests);
    else printf("workload: ISL %lld, OSL %lld, Poisson %.4g req/s, %lld requests\n", e->isl, e->osl, e->rate, e->requests);
    printf("\n%-8s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p99");
    const sim_stat *st[] = {&sum->ttft_ms, &sum->tpot_ms, &sum->e2e_ms};
    static const char *const nm[] = {"TTFT", "TPOT", "E2E"};
    for (int k = 0; k < 3; k++)
        printf("%-8s %10.2f %10.2f %10.2f %10.2f\n", nm[k], st[k]->mean, st[k]->p50, st[k]->p90, st[k]->p99);
    printf("\nthroughput %.3f req/s   %.1f output tok/s   %.1f output tok/s/GPU   %.1f tok/s per user\n",
           sum->req_per_s, sum->output_tokens_per_s, sum->output_tokens_per_s_per_gpu,
           sum->tpot_ms.mean > 0 ? 1000.0 / sum->tpot_ms.mean : 0.0);
    printf("(simulated %.1f s of serving in %.3f s%s)\n", sum->sim_time_s, sum->wall_time_s,
           sum->overloaded ? "; OVERLOADED: the rate exceeds what the deployment serves" : "");
}

int sim_cli_estimate(int argc, char **argv)
{
    estimate_args e;
    int rc = estimate_parse(argc, argv, &e);
    if (rc >= 0) return rc;
    char yaml[2048];
    estimate_yaml(&e, yaml, sizeof yaml);
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_cluster *cl = NULL;
    rc = EXIT_USAGE;
    if (!sc) return 1;
    if (sim_loader_load_string(yaml, strlen(yaml), "estimate", e.sets, e.n_sets, sc, &err) < 0) {
        fprintf(stderr, "servesim: estimate: %s\n", err.msg);
        goto out;
    }
    if (sim_cluster_create(sc, &cl, &err) < 0) {
        fprintf(stderr, "servesim: estimate: %s\n", err.msg);
        goto out;
    }
    sim_summary sum;
    double t0 = sim_wall_s();
    if (sim_cluster_run(cl, &sum, &err) < 0) {
        fprintf(stderr, "servesim: estimate: run failed: %s\n", err.msg);
        rc = 1;
        goto out;
    }
    sum.wall_time_s = sim_wall_s() - t0;
    if (e.json) sim_summary_print_json(stdout, &sum);
    else estimate_print(&e, cl, &sum);
    rc = sum.overloaded ? 3 : 0;
out:
    sim_cluster_destroy(cl);
    free(sc);
    return rc;
}

/* ---- init ---------------------------------------------------------------- */

/* The command line of `servesim init`. */
typedef struct {
    const char *model, *gpu, *out;
    double ttft, tpot;
    long long gpus, isl, osl;
    int force;
} init_args;

/* Parses and checks the command line: -1 to go on, else the exit status. */
static int init_parse(int argc, char **argv, init_args *a)
{
    *a = (init_args){.gpus = 8, .isl = 1024, .osl = 256};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            fputs(usage_init, stdout);
            return 0;
        }
        if (strcmp(f, "--force") == 0) {
            a->force = 1;
            continue;
        }
        if (f[0] != '-' || !v) {
            fprintf(stderr, "servesim: init: %s '%s'\n%s", f[0] == '-' ? "missing the value of" : "unexpected argument",
                    f, usage_init);
            return EXIT_USAGE;
        }
        i++;
        int bad = 0;
        if (strcmp(f, "--model") == 0) a->model = v;
        else if (strcmp(f, "--gpu") == 0) a->gpu = v;
        else if (strcmp(f, "-o") == 0 || strcmp(f, "--out") == 0) a->out = v;
        else if (strcmp(f, "--slo-ttft") == 0) bad = parse_posd(v, &a->ttft);
        else if (strcmp(f, "--slo-tpot") == 0) bad = parse_posd(v, &a->tpot);
        else if (strcmp(f, "--gpus") == 0) bad = parse_pos(v, &a->gpus);
        else if (strcmp(f, "--isl") == 0) bad = parse_pos(v, &a->isl);
        else if (strcmp(f, "--osl") == 0) bad = parse_pos(v, &a->osl);
        else {
            fprintf(stderr, "servesim: init: unknown option '%s'\n%s", f, usage_init);
            return EXIT_USAGE;
        }
        if (bad) {
            fprintf(stderr, "servesim: init: %s: expected a positive number, got '%s'\n", f, v);
            return EXIT_USAGE;
        }
    }
    if (!a->model || !a->gpu || a->ttft <= 0 || a->tpot <= 0) {
        fprintf(stderr, "servesim: init: needs --model, --gpu, --slo-ttft and --slo-tpot\n%s", usage_init);
        return EXIT_USAGE;
    }
    if (!plain_scalar(a->model) || !plain_scalar(a->gpu)) {
        fprintf(stderr, "servesim: init: --model and --gpu take a catalogue name or a config path\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* The commented starting scenario at TP tp, written to path as name. */
static void init_yaml(const init_args *a, const char *path, const char *name, long long tp, char *yaml, size_t len)
{
    snprintf(yaml, len,
             "# A starting scenario written by `servesim init`: %s on %s, SLO TTFT p90 <= %g ms and\n"
             "# TPOT p90 <= %g ms, deployments of up to %lld GPUs. Edit it, then:\n"
             "#   servesim search %s --out out/     # best deployment under the SLO\n"
             "#   servesim run %s                   # the starting deployment below\n"
             "# Every key: `servesim schema`.\n"
             "name: %s\n"
             "model: %s\n"
             "hardware:\n"
             "  gpu: %s\n"
             "  gpus_per_node: 8                # GPUs per NVLink node\n"
             "workload:\n"
             "  requests: 1000                  # per `servesim run`; the search uses search.requests\n"
             "  arrival: {process: poisson, rate: 5}   # req/s; the search finds the highest rate meeting the SLO\n"
             "  input_tokens: {dist: lognormal, mean: %lld, std: %lld, min: 16, max: %lld}   # prompt tokens\n"
             "  output_tokens: {dist: lognormal, mean: %lld, std: %lld, min: 1, max: %lld}  # generated tokens\n"
             "slo:\n"
             "  ttft_ms: %g                     # time to first token, at search.percentile\n"
             "  tpot_ms: %g                     # time per output token\n"
             "deployment:                       # what `servesim run` simulates; the search replaces it\n"
             "  mode: colocated\n"
             "  pools:\n"
             "    - role: colocated\n"
             "      instances: 1\n"
             "      parallel: {tp: %lld}        # the smallest TP that fits the weights and KV\n"
             "search:\n"
             "  max_gpus: %lld                  # GPU budget of one deployment\n"
             "  modes: \"\"                       # \"\" = colocated and pd (and af for MoE models)\n"
             "  layouts: \"\"                     # \"\" = defaults for the model, e.g. \"tp2,tp4,tp8\"\n"
             "  max_seqs: \"\"                    # \"\" = 64,128,256,512\n"
             "  percentile: 90                  # SLO percentile: 50, 90, 99 or 99.9\n"
             "  requests: 400                   # requests per simulation during the search\n"
             "  # prices: \"%s=2.5\"              # USD per GPU-hour: rank by cost per million tokens\n",
             a->model, a->gpu, a->ttft, a->tpot, a->gpus, path, path, name, a->model, a->gpu, a->isl, a->isl / 2,
             8 * a->isl, a->osl, a->osl / 2, 4 * a->osl, a->ttft, a->tpot, tp, a->gpus, a->gpu);
}

/* The smallest TP (power of two, within the budget) whose deployment
 * builds, into *tp with its scenario in yaml: -1 to go on (*tp 0: none
 * fits, err says why), else the exit status after the message. */
static int init_pick_tp(const init_args *a, const char *path, const char *name, char *yaml, size_t len, long long *tp,
                        sim_err *err)
{
    sim_scenario *sc = malloc(sizeof *sc);
    *tp = 0;
    if (!sc) return 1;
    for (long long t = 1; t <= a->gpus && t <= 64 && !*tp; t *= 2) {
        init_yaml(a, path, name, t, yaml, len);
        sim_cluster *cl = NULL;
        if (sim_loader_load_string(yaml, strlen(yaml), path, NULL, 0, sc, err) < 0) {
            fprintf(stderr, "servesim: init: %s\n", err->msg);
            free(sc);
            return EXIT_USAGE;
        }
        int crc = sim_cluster_create(sc, &cl, err);
        sim_cluster_destroy(cl);
        if (crc == 0) *tp = t;
        else if (crc != SIM_ERANGE && crc != SIM_EINVAL) break;
        else if (t == 1 && !strstr(err->msg, "tp=") && !strstr(err->msg, "memory") && !strstr(err->msg, "fit")) {
            /* not a layout that is too small: an unknown model or GPU */
            fprintf(stderr, "servesim: init: %s\n", err->msg);
            free(sc);
            return EXIT_USAGE;
        }
    }
    free(sc);
    return -1;
}

int sim_cli_init(int argc, char **argv)
{
    init_args a;
    int rc = init_parse(argc, argv, &a);
    if (rc >= 0) return rc;
    char name[256], path[1024];
    const char *base = strrchr(a.model, '/');
    snprintf(name, sizeof name, "%s-%s", base ? base + 1 : a.model, a.gpu);
    for (char *c = name; *c; c++)
        if (*c == '.' && (strcmp(c, ".json") == 0 || strcmp(c, ".yaml") == 0)) *c = '\0';
    snprintf(path, sizeof path, "%s", a.out ? a.out : name);
    if (!a.out) strncat(path, ".yaml", sizeof path - strlen(path) - 1);
    sim_err err = {{0}};
    char yaml[8192];
    long long tp = 0;
    if ((rc = init_pick_tp(&a, path, name, yaml, sizeof yaml, &tp, &err)) >= 0) return rc;
    if (!tp) {
        fprintf(stderr, "servesim: init: no TP up to %lld GPUs fits %s on %s: %s\n", a.gpus, a.model, a.gpu, err.msg);
        return EXIT_USAGE;
    }
    int fd = open(path, O_WRONLY | O_CREAT | (a.force ? O_TRUNC : O_EXCL), 0666);
    if (fd < 0) {
        fprintf(stderr, "servesim: init: %s: %s%s\n", path, strerror(errno), errno == EEXIST ? " (--force overwrites)" : "");
        return errno == EEXIST ? EXIT_USAGE : 1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) close(fd);
    if (!f || fputs(yaml, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "servesim: init: writing %s failed\n", path);
        return 1;
    }
    printf("wrote %s (%s on %s, starting at tp %lld; search over up to %lld GPUs)\n"
           "next: servesim search %s --out out/\n",
           path, a.model, a.gpu, tp, a.gpus, path);
    return 0;
}
