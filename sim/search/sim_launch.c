/* sim_launch — the launch shell scripts (see sim_launch.h) and the helpers
 * shared with sim_launch_k8s.c. Each script is POSIX sh: one file run on
 * every node with NODES (the hosts, node 0 first) and NODE_RANK; each node
 * starts its own instances in the background, node 0 waits for every
 * server's /health and then starts the router or PD proxy; a trap stops
 * every process the script started when it exits or is interrupted. */
#include "sim_launch_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- argument lists ------------------------------------------------------ */

static void vput(launch_args *A, int raw, const char *fmt, va_list ap)
{
    if (A->n >= LAUNCH_MAX_ARGS || A->used >= sizeof A->store) {
        A->overflow = 1;
        return;
    }
    char *dst = A->store + A->used;
    int m = vsnprintf(dst, sizeof A->store - A->used, fmt, ap);
    if (m < 0 || (size_t)m >= sizeof A->store - A->used) {
        A->overflow = 1;
        return;
    }
    A->a[A->n] = dst;
    A->raw[A->n++] = (unsigned char)raw;
    A->used += (size_t)m + 1;
}

void launch_arg(launch_args *A, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(A, 0, fmt, ap);
    va_end(ap);
}

void launch_arg_raw(launch_args *A, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(A, 1, fmt, ap);
    va_end(ap);
}

/* A literal for sh: bare when it holds only safe characters, else in single quotes. */
static void sh_word(FILE *f, const char *s)
{
    int safe = *s != '\0';
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%", *c)) safe = 0;
    if (safe) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = s; *c; c++)
        if (*c == '\'') fputs("'\\''", f);
        else fputc(*c, f);
    fputc('\'', f);
}

/* The arguments: a new line before a flag once the line passes 80 columns,
 * and between a long flag's values once it passes 130. */
static void sh_args(FILE *f, const launch_args *A, const char *indent)
{
    long col = 40;
    for (int i = 0; i < A->n; i++) {
        int flag = A->a[i][0] == '-' && A->a[i][1] == '-';
        if ((flag && col > 80) || col > 130) {
            fprintf(f, " \\\n%s", indent);
            col = (long)strlen(indent);
        } else {
            fputc(' ', f);
            col++;
        }
        long before = ftell(f);
        if (A->raw[i]) fputs(A->a[i], f);
        else sh_word(f, A->a[i]);
        long after = ftell(f);
        col += before >= 0 && after >= before ? after - before : (long)strlen(A->a[i]);
    }
}

/* ---- shared helpers ------------------------------------------------------ */

const char *launch_hf_name(const char *model)
{
    static const char *const map[][2] = {
        {"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"},
        {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
        {"llama-3.1-405b", "meta-llama/Llama-3.1-405B-Instruct"},
        {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
        {"qwen3-32b", "Qwen/Qwen3-32B"},
        {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
        {"mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
        {"gpt-oss-120b", "openai/gpt-oss-120b"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], model) == 0) return map[i][1];
    return model;
}

int launch_pool_gpus(const sim_pool_cfg *p)
{
    return p->parallel.tp * p->parallel.pp * p->parallel.dp;
}

int launch_pool_served(const sim_pool_cfg *p) { return p->role != SIM_ROLE_FFN; }

int launch_is_pd(const sim_scenario *sc)
{
    return sc->deployment.mode == SIM_MODE_PD || sc->deployment.mode == SIM_MODE_PD_AF;
}

const char *launch_pd_role(const sim_scenario *sc, const sim_pool_cfg *p)
{
    if (!launch_is_pd(sc)) return NULL;
    if (p->role == SIM_ROLE_PREFILL) return "prefill";
    if (p->role == SIM_ROLE_DECODE || p->role == SIM_ROLE_ATTENTION) return "decode";
    return NULL;
}

int launch_plan_make(const sim_scenario *sc, launch_plan *pl, sim_err *err)
{
    memset(pl, 0, sizeof *pl);
    int gpn = sim_hardware_gpus_per_node(&sc->hardware);
    int64_t total = 0, nodes_max = 1;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        if (!launch_pool_served(pc)) continue;
        total += pc->instances;
        nodes_max += (int64_t)pc->instances * ((launch_pool_gpus(pc) + gpn - 1) / gpn + 1);
    }
    if (total == 0) return sim_err_set(err, SIM_EINVAL, "launch: the deployment has no engine instance");
    pl->inst = calloc((size_t)total, sizeof *pl->inst);
    int *slots = calloc((size_t)nodes_max, sizeof *slots);
    if (!pl->inst || !slots) {
        free(slots);
        launch_plan_free(pl);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    pl->gpn = gpn;
    int node = 0, gpu = 0;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        if (!launch_pool_served(pc)) continue;
        int g = launch_pool_gpus(pc);
        for (int32_t i = 0; i < pc->instances; i++) {
            launch_inst *x = &pl->inst[pl->n++];
            x->pool = p;
            x->idx = i;
            x->gpus = g;
            if (g > gpn) { /* whole nodes of its own */
                if (gpu > 0) node++, gpu = 0;
                x->node = node;
                x->first_gpu = 0;
                x->nodes = (g + gpn - 1) / gpn;
                x->slot = slots[node]++;
                node += x->nodes;
            } else {
                if (gpu + g > gpn) node++, gpu = 0;
                x->node = node;
                x->first_gpu = gpu;
                x->nodes = 1;
                x->slot = slots[node]++;
                gpu += g;
            }
        }
    }
    pl->nodes = gpu > 0 ? node + 1 : node;
    free(slots);
    return 0;
}

void launch_plan_free(launch_plan *pl)
{
    free(pl->inst);
    pl->inst = NULL;
    pl->n = 0;
}

void launch_vllm_engine_args(launch_args *A, const sim_scenario *sc, const sim_pool_cfg *p, int opts)
{
    const sim_parallel_cfg *par = &p->parallel;
    const sim_sched_cfg *s = &p->scheduler;
    if (!(opts & LAUNCH_NO_TP_DP)) {
        launch_arg(A, "--tensor-parallel-size");
        launch_arg(A, "%d", (int)par->tp);
    }
    launch_arg(A, "--pipeline-parallel-size");
    launch_arg(A, "%d", (int)par->pp);
    if (par->dp > 1 && !(opts & LAUNCH_NO_TP_DP)) {
        launch_arg(A, "--data-parallel-size");
        launch_arg(A, "%d", (int)par->dp);
    }
    if (par->ep > 1) launch_arg(A, "--enable-expert-parallel");
    if (par->dcp > 1) {
        launch_arg(A, "--decode-context-parallel-size");
        launch_arg(A, "%d", (int)par->dcp);
    }
    launch_arg(A, "--max-num-seqs");
    launch_arg(A, "%d", (int)s->max_seqs);
    launch_arg(A, "--max-num-batched-tokens");
    launch_arg(A, "%d", (int)s->max_batched_tokens);
    launch_arg(A, "--enable-chunked-prefill");
    launch_arg(A, "--long-prefill-token-threshold");
    launch_arg(A, "%d", (int)s->chunk_tokens);
    launch_arg(A, "--gpu-memory-utilization");
    launch_arg(A, "%.2f", s->gpu_mem_util);
    launch_arg(A, "--block-size");
    launch_arg(A, "%d", (int)s->block_tokens);
    if (sc->dtype != SIM_DTYPE_BF16 && sc->dtype != SIM_DTYPE_AUTO) {
        launch_arg(A, "--quantization");
        launch_arg(A, "fp8");
    }
    if (sc->kv_dtype != SIM_DTYPE_BF16) {
        launch_arg(A, "--kv-cache-dtype");
        launch_arg(A, "fp8");
    }
    /* vLLM turns prefix caching on by default: say which one was simulated. */
    launch_arg(A, sc->cache.enabled ? "--enable-prefix-caching" : "--no-enable-prefix-caching");
    if (launch_pd_role(sc, p) && !(opts & LAUNCH_NO_KV_TRANSFER)) {
        launch_arg(A, "--kv-transfer-config");
        launch_arg(A, "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}");
    }
}

void launch_common_notes(FILE *f, const sim_scenario *sc)
{
    if (sc->deployment.mode == SIM_MODE_AF || sc->deployment.mode == SIM_MODE_PD_AF)
        fputs("# NOTE: attention/FFN disaggregation has no flag in these engines' releases: the attention pool\n"
              "#       is launched as plain (DP-attention) instances holding the whole model, the FFN pool not at all.\n",
              f);
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        if (pc->parallel.sp > 1)
            fprintf(f, "# NOTE: pool %d was simulated with %d-way prefill sequence parallelism (%s), which these\n"
                       "#       engines have no flag for: its instances run on tp*pp*dp = %d GPUs without it.\n",
                    (int)p, (int)pc->parallel.sp, sim_sp_kind_name(pc->parallel.sp_kind), launch_pool_gpus(pc));
        if (pc->gpu[0] && strcmp(pc->gpu, sc->hardware.gpu) != 0)
            fprintf(f, "# NOTE: pool %d was simulated on %s (the rest on %s): give its nodes those GPUs.\n", (int)p,
                    pc->gpu, sc->hardware.gpu);
        if (pc->autoscale.enabled)
            fprintf(f, "# NOTE: pool %d was simulated autoscaled (%d..%d instances by %s, starting at %d): this file\n"
                       "#       starts its %d starting instances only; scaling them (e.g. a Kubernetes HPA or KEDA on\n"
                       "#       that metric, up to %d) is not in it.\n",
                    (int)p, (int)pc->autoscale.min, (int)pc->autoscale.max,
                    sim_autoscale_metric_name(pc->autoscale.metric), (int)pc->instances, (int)pc->instances,
                    (int)pc->autoscale.max);
        const sim_spec_cfg *sp = &pc->scheduler.spec;
        if (sp->draft_tokens > 0)
            fprintf(f, "# NOTE: pool %d was simulated decoding speculatively (%s, %d draft tokens a step), which this\n"
                       "#       file does not set up: add the engine's speculative-decoding options for that draft.\n",
                    (int)p, sp->method == SIM_SPEC_MTP ? "the model's MTP module" : sp->draft_model,
                    (int)sp->draft_tokens);
    }
    if (sc->deployment.encode_instances > 0 && sim_images_enabled(&sc->workload.images))
        fprintf(f, "# NOTE: the images' vision tower was simulated in an encode pool of %d one-GPU encoder%s on %s\n"
                   "#       (encode -> prefill%s), which this file does not start: the instances below encode\n"
                   "#       their requests' images themselves unless an encoder service (e.g. the engine's\n"
                   "#       encoder-disaggregation mode) is set up in front of them on %d more GPU%s.\n",
                (int)sc->deployment.encode_instances, sc->deployment.encode_instances == 1 ? "" : "s",
                sc->deployment.encode_gpu[0] ? sc->deployment.encode_gpu : sc->hardware.gpu,
                sc->deployment.mode == SIM_MODE_PD ? " -> decode" : "", (int)sc->deployment.encode_instances,
                sc->deployment.encode_instances == 1 ? "" : "s");
    if (sc->cache.enabled && sc->cache.sharing != SIM_SHARING_NONE)
        fprintf(f, "# NOTE: cache.sharing '%s' (KV fetched from peers or a host/remote pool) has no flag here: these\n"
                   "#       instances keep local prefix caches only (an LMCache or Mooncake store would add it).\n",
                sim_cache_sharing_name(sc->cache.sharing));
}

/* ---- the shell scripts --------------------------------------------------- */

typedef struct {
    sim_launch_kind k;
    const sim_scenario *sc;
    const launch_plan *pl;
    FILE *f;
} sh_ctx;

static const char *engine_name(sim_launch_kind k)
{
    return k == SIM_LAUNCH_VLLM ? "vLLM" : k == SIM_LAUNCH_SGLANG ? "SGLang" : "TensorRT-LLM";
}

static const char *engine_program(sim_launch_kind k)
{
    return k == SIM_LAUNCH_VLLM ? "vllm serve" : k == SIM_LAUNCH_SGLANG ? "sglang.launch_server" : "trtllm-serve";
}

static void inst_name(const sh_ctx *c, const launch_inst *x, char *buf, size_t len)
{
    const sim_pool_cfg *pc = &c->sc->deployment.pools[x->pool];
    snprintf(buf, len, "%s-p%d-%d", sim_role_name(pc->role), x->pool, x->idx);
}

static void gpu_list(const launch_inst *x, int node_off, int gpn, char *buf, size_t len)
{
    int n = x->nodes > 1 ? gpn : x->gpus, first = x->nodes > 1 ? 0 : x->first_gpu;
    if (x->nodes > 1 && node_off == x->nodes - 1 && x->gpus % gpn) n = x->gpus % gpn;
    size_t m = 0;
    buf[0] = '\0';
    for (int g = 0; g < n && m < len; g++) m += (size_t)snprintf(buf + m, len - m, "%s%d", g ? "," : "", first + g);
}

static void sh_prelude(const sh_ctx *c, const char *label)
{
    FILE *f = c->f;
    const sim_scenario *sc = c->sc;
    const launch_plan *pl = c->pl;
    fprintf(f, "#!/bin/sh\n# %s launch script for servesim's deployment\n#   %s\n", engine_name(c->k),
            label && *label ? label : sc->name);
    fprintf(f, "# written by servesim %s; flag names checked against %s.\n#\n", SERVESIM_VERSION,
            sim_launch_flag_version(engine_program(c->k)));
    fprintf(f, "# Simulated: %s, %s on %s, %d node(s) of %d GPUs:\n", sc->model, sim_mode_name(sc->deployment.mode),
            sc->hardware.gpu, pl->nodes, pl->gpn);
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        const sim_parallel_cfg *par = &pc->parallel;
        fprintf(f, "#   pool %d: %d x %s, tp %d pp %d dp %d ep %d dcp %d; max_seqs %d, max_batched_tokens %d, "
                   "chunk_tokens %d, %s%s\n",
                (int)p, (int)pc->instances, sim_role_name(pc->role), (int)par->tp, (int)par->pp, (int)par->dp,
                (int)par->ep, (int)par->dcp, (int)pc->scheduler.max_seqs, (int)pc->scheduler.max_batched_tokens,
                (int)pc->scheduler.chunk_tokens, sim_sched_policy_name(pc->scheduler.policy),
                launch_pool_served(pc) ? "" : " (not launched)");
    }
    fprintf(f, "#   routing %s%s%s; prefix caching %s\n#\n", sim_route_policy_name(sc->routing.policy),
            launch_is_pd(sc) ? ", decode routing " : "",
            launch_is_pd(sc) ? sim_decode_routing_name(sc->deployment.decode_routing) : "", sc->cache.enabled ? "on" : "off");
    fprintf(f, "# Run the same file on each node, node 0 first in NODES:\n"
               "#   NODES=\"host0 host1 ...\" NODE_RANK=k sh %s\n"
               "# (one node: plain `sh %s`). Every node starts its instances in the background, logs in\n"
               "# LOG_DIR; node 0 waits for every server's /health and starts the router on ROUTER_PORT.\n"
               "# Ctrl-C, or the script ending, stops every process it started.\n",
            sim_launch_file_name(c->k), sim_launch_file_name(c->k));
    launch_common_notes(f, sc);
}

static void sh_setup(const sh_ctx *c)
{
    FILE *f = c->f;
    fprintf(f, "\nset -eu\n"
               "MODEL=\"${MODEL:-%s}\"\n"
               "NODES=\"${NODES:-localhost}\"\n"
               "NODE_RANK=\"${NODE_RANK:-0}\"\n"
               "PORT_BASE=\"${PORT_BASE:-8100}\"        # HTTP port of the k-th instance on a node: PORT_BASE + k\n"
               "ROUTER_PORT=\"${ROUTER_PORT:-8000}\"\n"
               "LOG_DIR=\"${LOG_DIR:-./servesim-logs}\"\n"
               "HEALTH_TIMEOUT_S=\"${HEALTH_TIMEOUT_S:-1800}\"\n",
            launch_hf_name(c->sc->model));
    if (c->k == SIM_LAUNCH_VLLM)
        fputs("NIXL_PORT_BASE=\"${NIXL_PORT_BASE:-5600}\"  # VLLM_NIXL_SIDE_CHANNEL_PORT of the k-th instance: + k*dp\n"
              "VLLM_SRC=\"${VLLM_SRC:-./vllm}\"            # a vLLM source checkout (for the PD proxy)\n",
              f);
    if (c->k == SIM_LAUNCH_SGLANG)
        fputs("BOOTSTRAP_PORT_BASE=\"${BOOTSTRAP_PORT_BASE:-8998}\"  # --disaggregation-bootstrap-port: + k\n"
              "DIST_PORT_BASE=\"${DIST_PORT_BASE:-5000}\"            # --dist-init-addr port of multi-node instances\n",
              f);
    fprintf(f, "\nset -- $NODES\n"
               "if [ \"$#\" -lt %d ]; then\n"
               "  echo \"launch: this deployment needs %d node(s) of %d GPUs; NODES names $#\" >&2\n"
               "  exit 2\n"
               "fi\n"
               "mkdir -p \"$LOG_DIR\"\n"
               "PIDS=\"\"\n"
               "cleanup() {\n"
               "  trap - EXIT INT TERM\n"
               "  for p in $PIDS; do kill \"$p\" 2>/dev/null || true; done\n"
               "  wait 2>/dev/null || true\n"
               "}\n"
               "trap cleanup EXIT\n"
               "trap 'exit 130' INT TERM\n"
               "host() {\n"
               "  i=0\n"
               "  for h in $NODES; do\n"
               "    if [ \"$i\" -eq \"$1\" ]; then echo \"$h\"; return 0; fi\n"
               "    i=$((i + 1))\n"
               "  done\n"
               "  return 1\n"
               "}\n"
               "# wait_health URL [PID LOG]: until URL/health answers; fails when PID (started here) has ended.\n"
               "wait_health() {\n"
               "  t=0\n"
               "  until curl -sf \"$1/health\" >/dev/null 2>&1; do\n"
               "    if [ \"$#\" -ge 3 ] && ! kill -0 \"$2\" 2>/dev/null; then\n"
               "      echo \"launch: the server for $1 exited; see $3\" >&2\n"
               "      exit 1\n"
               "    fi\n"
               "    if [ \"$t\" -ge \"$HEALTH_TIMEOUT_S\" ]; then\n"
               "      echo \"launch: $1 not healthy after $HEALTH_TIMEOUT_S s\" >&2\n"
               "      exit 1\n"
               "    fi\n"
               "    sleep 5\n"
               "    t=$((t + 5))\n"
               "  done\n"
               "  echo \"launch: $1 is up\"\n"
               "}\n",
            c->pl->nodes, c->pl->nodes, c->pl->gpn);
}

/* Ends a server's command line: output to $LOG_DIR/LOG.log, in the
 * background, its PID kept for the trap. */
static void sh_background(FILE *f, const char *log)
{
    fprintf(f, " \\\n    > \"$LOG_DIR/%s.log\" 2>&1 &\n  PIDS=\"$PIDS $!\"\n", log);
}

/* The PID variable of an instance started on this node (for wait_health). */
static void sh_start_tail(FILE *f, const char *name)
{
    sh_background(f, name);
    fprintf(f, "  PID_%s=$!\n", name);
}

/* --host 0.0.0.0 --port P: an instance's port PORT_BASE + slot, or the
 * router's $ROUTER_PORT (slot LISTEN_ROUTER). */
#define LISTEN_ROUTER (-1)
static void listen_args(launch_args *A, int slot)
{
    launch_arg(A, "--host");
    launch_arg(A, "0.0.0.0");
    launch_arg(A, "--port");
    if (slot == LISTEN_ROUTER) launch_arg_raw(A, "\"$ROUTER_PORT\"");
    else launch_arg_raw(A, "$((PORT_BASE + %d))", slot);
}

static void pid_var(char *name)
{
    for (char *c = name; *c; c++)
        if (*c == '-') *c = '_';
}

/* vLLM ---------------------------------------------------------------------- */

static void vllm_instance(const sh_ctx *c, const launch_inst *x)
{
    FILE *f = c->f;
    const sim_pool_cfg *pc = &c->sc->deployment.pools[x->pool];
    char name[64], gl[256];
    inst_name(c, x, name, sizeof name);
    pid_var(name);
    gpu_list(x, 0, c->pl->gpn, gl, sizeof gl);
    launch_args A = {.n = 0};
    launch_arg_raw(&A, "\"$MODEL\"");
    listen_args(&A, x->slot);
    launch_vllm_engine_args(&A, c->sc, pc, 0);
    fprintf(f, "\n# %s instance %d of %d: node %d, GPUs %s, port PORT_BASE+%d\n", sim_role_name(pc->role), x->idx,
            (int)pc->instances, x->node, gl, x->slot);
    fprintf(f, "if [ \"$NODE_RANK\" -eq %d ]; then\n  CUDA_VISIBLE_DEVICES=%s", x->node, gl);
    if (launch_pd_role(c->sc, pc))
        fprintf(f, " UCX_NET_DEVICES=\"${UCX_NET_DEVICES:-all}\" VLLM_NIXL_SIDE_CHANNEL_HOST=\"$(host %d)\" \\\n"
                   "  VLLM_NIXL_SIDE_CHANNEL_PORT=$((NIXL_PORT_BASE + %d))",
                x->node, x->slot * (int)pc->parallel.dp);
    fputs(" \\\n  vllm serve", f);
    sh_args(f, &A, "    ");
    sh_start_tail(f, name);
    fputs("fi\n", f);
}

/* SGLang -------------------------------------------------------------------- */

static const char *sglang_policy(sim_route_policy p)
{
    switch (p) {
    case SIM_ROUTE_RANDOM: return "random";
    case SIM_ROUTE_POWER_OF_TWO: return "power_of_two";
    case SIM_ROUTE_LEAST_LOADED: return "power_of_two";
    case SIM_ROUTE_CACHE_AWARE: return "cache_aware";
    default: return "round_robin";
    }
}

/* The launch_server flags of node r of SGLang instance x. */
static void sglang_args(const sh_ctx *c, const launch_inst *x, int r, launch_args *A)
{
    const sim_pool_cfg *pc = &c->sc->deployment.pools[x->pool];
    const sim_parallel_cfg *par = &pc->parallel;
    const sim_sched_cfg *s = &pc->scheduler;
    const char *role = launch_pd_role(c->sc, pc);
    launch_arg(A, "--model-path");
    launch_arg_raw(A, "\"$MODEL\"");
    listen_args(A, x->slot);
    /* SGLang counts the DP-attention ranks inside --tp-size. */
    launch_arg(A, "--tp-size");
    launch_arg(A, "%d", (int)(par->tp * par->dp));
    if (par->pp > 1) {
        launch_arg(A, "--pp-size");
        launch_arg(A, "%d", (int)par->pp);
    }
    if (par->dp > 1) {
        launch_arg(A, "--dp-size");
        launch_arg(A, "%d", (int)par->dp);
        launch_arg(A, "--enable-dp-attention");
    }
    if (par->ep > 1) {
        launch_arg(A, "--ep-size");
        launch_arg(A, "%d", (int)par->ep);
    }
    if (x->nodes > 1) {
        launch_arg(A, "--dist-init-addr");
        launch_arg_raw(A, "\"$(host %d):$((DIST_PORT_BASE + %d))\"", x->node, x->slot);
        launch_arg(A, "--nnodes");
        launch_arg(A, "%d", x->nodes);
        launch_arg(A, "--node-rank");
        launch_arg(A, "%d", r);
    }
    launch_arg(A, "--max-running-requests");
    launch_arg(A, "%d", (int)s->max_seqs);
    launch_arg(A, "--max-prefill-tokens");
    launch_arg(A, "%d", (int)s->max_batched_tokens);
    launch_arg(A, "--chunked-prefill-size");
    launch_arg(A, "%d", (int)s->chunk_tokens);
    /* decode_first = decoding requests ride along every prefill iteration: SGLang's mixed chunks. */
    if (s->policy == SIM_POLICY_DECODE_FIRST) launch_arg(A, "--enable-mixed-chunk");
    launch_arg(A, "--schedule-policy");
    launch_arg(A, "fcfs");
    launch_arg(A, "--mem-fraction-static");
    launch_arg(A, "%.2f", s->gpu_mem_util);
    launch_arg(A, "--page-size");
    launch_arg(A, "%d", (int)s->block_tokens);
    if (c->sc->dtype != SIM_DTYPE_BF16 && c->sc->dtype != SIM_DTYPE_AUTO) {
        launch_arg(A, "--quantization");
        launch_arg(A, "fp8");
    }
    if (c->sc->kv_dtype != SIM_DTYPE_BF16) {
        launch_arg(A, "--kv-cache-dtype");
        launch_arg(A, "fp8_e4m3");
    }
    if (!c->sc->cache.enabled) launch_arg(A, "--disable-radix-cache");
    if (role) {
        launch_arg(A, "--disaggregation-mode");
        launch_arg(A, "%s", role);
        launch_arg(A, "--disaggregation-transfer-backend");
        launch_arg(A, "nixl");
        if (strcmp(role, "prefill") == 0) {
            launch_arg(A, "--disaggregation-bootstrap-port");
            launch_arg_raw(A, "$((BOOTSTRAP_PORT_BASE + %d))", x->slot);
        }
    }
}

static void sglang_instance(const sh_ctx *c, const launch_inst *x)
{
    FILE *f = c->f;
    const sim_pool_cfg *pc = &c->sc->deployment.pools[x->pool];
    char name[64];
    inst_name(c, x, name, sizeof name);
    pid_var(name);
    for (int r = 0; r < x->nodes; r++) {
        char gl[256];
        gpu_list(x, r, c->pl->gpn, gl, sizeof gl);
        launch_args A = {.n = 0};
        sglang_args(c, x, r, &A);
        fprintf(f, "\n# %s instance %d of %d", sim_role_name(pc->role), x->idx, (int)pc->instances);
        if (x->nodes > 1) fprintf(f, ", node %d of its %d", r, x->nodes);
        fprintf(f, ": node %d, GPUs %s, port PORT_BASE+%d\n", x->node + r, gl, x->slot);
        fprintf(f, "if [ \"$NODE_RANK\" -eq %d ]; then\n  CUDA_VISIBLE_DEVICES=%s python -m sglang.launch_server",
                x->node + r, gl);
        sh_args(f, &A, "    ");
        char nm[80];
        if (r > 0) snprintf(nm, sizeof nm, "%s_rank%d", name, r);
        else snprintf(nm, sizeof nm, "%s", name);
        sh_start_tail(f, nm);
        fputs("fi\n", f);
    }
}

/* TensorRT-LLM ---------------------------------------------------------------- */

static void trtllm_instance(const sh_ctx *c, const launch_inst *x)
{
    FILE *f = c->f;
    const sim_pool_cfg *pc = &c->sc->deployment.pools[x->pool];
    const sim_parallel_cfg *par = &pc->parallel;
    const sim_sched_cfg *s = &pc->scheduler;
    const char *role = launch_pd_role(c->sc, pc);
    char name[64], gl[256];
    inst_name(c, x, name, sizeof name);
    pid_var(name);
    gpu_list(x, 0, c->pl->gpn, gl, sizeof gl);
    fprintf(f, "\n# %s instance %d of %d: node %d, GPUs %s, port PORT_BASE+%d\n", sim_role_name(pc->role), x->idx,
            (int)pc->instances, x->node, gl, x->slot);
    fprintf(f, "if [ \"$NODE_RANK\" -eq %d ]; then\n  cat > \"$LOG_DIR/%s.yaml\" <<'EOF'\n", x->node, name);
    fputs("enable_chunked_prefill: true\n", f);
    fprintf(f, "kv_cache_config:\n  enable_block_reuse: %s\n  free_gpu_memory_fraction: %.2f\n",
            c->sc->cache.enabled ? "true" : "false", s->gpu_mem_util);
    if (c->sc->kv_dtype != SIM_DTYPE_BF16) fputs("  dtype: fp8\n", f);
    fprintf(f, "scheduler_config:\n  capacity_scheduler_policy: %s\n",
            s->admission == SIM_ADMISSION_RESERVE ? "GUARANTEED_NO_EVICT" : "MAX_UTILIZATION");
    if (par->dp > 1) fputs("enable_attention_dp: true\n", f);
    if (role) {
        fputs("cache_transceiver_config:\n  backend: UCX\n", f);
        fprintf(f, "  max_tokens_in_buffer: %d\n", (int)s->max_batched_tokens);
        if (strcmp(role, "prefill") == 0) fputs("disable_overlap_scheduler: true\n", f);
    }
    fputs("EOF\n", f);
    launch_args A = {.n = 0};
    launch_arg_raw(&A, "\"$MODEL\"");
    listen_args(&A, x->slot);
    launch_arg(&A, "--backend");
    launch_arg(&A, "pytorch");
    /* Attention DP counts its ranks inside tp_size. */
    launch_arg(&A, "--tp_size");
    launch_arg(&A, "%d", (int)(par->tp * par->dp));
    launch_arg(&A, "--pp_size");
    launch_arg(&A, "%d", (int)par->pp);
    if (par->ep > 1) {
        launch_arg(&A, "--ep_size");
        launch_arg(&A, "%d", (int)par->ep);
    }
    launch_arg(&A, "--max_batch_size");
    launch_arg(&A, "%d", (int)s->max_seqs);
    launch_arg(&A, "--max_num_tokens");
    launch_arg(&A, "%d", (int)s->max_batched_tokens);
    launch_arg(&A, "--extra_llm_api_options");
    launch_arg_raw(&A, "\"$LOG_DIR/%s.yaml\"", name);
    fprintf(f, "  CUDA_VISIBLE_DEVICES=%s trtllm-serve", gl);
    sh_args(f, &A, "    ");
    sh_start_tail(f, name);
    fputs("fi\n", f);
}

static const char *trtllm_router(sim_route_policy p)
{
    switch (p) {
    case SIM_ROUTE_CACHE_AWARE: return "kv_cache_aware";
    case SIM_ROUTE_LEAST_LOADED:
    case SIM_ROUTE_POWER_OF_TWO: return "load_balancing";
    default: return "round_robin";
    }
}

/* Engine notes ---------------------------------------------------------------- */

static void engine_notes(const sh_ctx *c, int *refuse)
{
    FILE *f = c->f;
    const sim_scenario *sc = c->sc;
    int pd = launch_is_pd(sc), n_served = 0;
    for (int i = 0; i < c->pl->n; i++) n_served++;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        const sim_sched_cfg *s = &pc->scheduler;
        if (!launch_pool_served(pc)) continue;
        if (launch_pool_gpus(pc) > c->pl->gpn && c->k != SIM_LAUNCH_SGLANG) {
            fprintf(f, "# NOTE: pool %d's instances span %d nodes (%d GPUs each); this script does not launch\n"
                       "#       multi-node %s instances (%s): it stops with that reason.\n",
                    (int)p, (launch_pool_gpus(pc) + c->pl->gpn - 1) / c->pl->gpn, launch_pool_gpus(pc),
                    engine_name(c->k),
                    c->k == SIM_LAUNCH_VLLM ? "a Ray cluster over those nodes" : "mpirun with trtllm-llmapi-launch");
            *refuse = 1;
        }
        if (c->k == SIM_LAUNCH_VLLM) {
            if (s->policy == SIM_POLICY_PREFILL_FIRST)
                fprintf(f, "# NOTE: pool %d was simulated prefill_first; vLLM's scheduler always decodes first.\n",
                        (int)p);
            if (s->admission != SIM_ADMISSION_OPTIMISTIC)
                fprintf(f, "# NOTE: pool %d was simulated with %s admission; vLLM admits optimistically and "
                           "preempts.\n", (int)p, sim_admission_name(s->admission));
        } else if (c->k == SIM_LAUNCH_SGLANG) {
            if (pc->parallel.dcp > 1)
                fprintf(f, "# NOTE: pool %d was simulated with decode context parallelism %d; SGLang has no flag "
                           "for it.\n", (int)p, (int)pc->parallel.dcp);
            if (s->admission == SIM_ADMISSION_RESERVE)
                fprintf(f, "# NOTE: pool %d was simulated with reserve admission; SGLang has no exact "
                           "equivalent (see --schedule-conservativeness).\n", (int)p);
        } else {
            if (pc->parallel.dcp > 1)
                fprintf(f, "# NOTE: pool %d was simulated with decode context parallelism %d; trtllm-serve has "
                           "no flag for it.\n", (int)p, (int)pc->parallel.dcp);
            if (s->chunk_tokens < s->max_batched_tokens)
                fprintf(f, "# NOTE: pool %d caps one request's prefill chunk at %d tokens; TensorRT-LLM chunks at "
                           "--max_num_tokens (%d) only.\n", (int)p, (int)s->chunk_tokens,
                        (int)s->max_batched_tokens);
            if (s->policy == SIM_POLICY_PREFILL_FIRST)
                fprintf(f, "# NOTE: pool %d was simulated prefill_first; TensorRT-LLM's in-flight batching mixes "
                           "context and generation.\n", (int)p);
            fprintf(f, "# NOTE: pool %d: free_gpu_memory_fraction %.2f is of the memory left after the weights "
                       "(servesim's gpu_mem_util: of all of it);\n#       KV blocks stay at TensorRT-LLM's default "
                       "size (servesim simulated %d tokens).\n",
                    (int)p, s->gpu_mem_util, (int)s->block_tokens);
        }
    }
    sim_route_policy rp = sc->routing.policy;
    const char *pol = sim_route_policy_name(rp);
    if (c->k == SIM_LAUNCH_VLLM) {
        if (pd)
            fprintf(f, "# NOTE: the PD proxy is vLLM's NIXL example (toy_proxy_server.py, round robin over "
                       "prefill and over decode\n#       instances); servesim simulated routing %s and decode "
                       "routing %s.\n", pol, sim_decode_routing_name(sc->deployment.decode_routing));
        else if (n_served > 1)
            fprintf(f, "# NOTE: vLLM has no router of its own: put a load balancer over the instance ports below "
                       "(servesim\n#       simulated routing %s).\n", pol);
    } else if (c->k == SIM_LAUNCH_SGLANG) {
        if (rp == SIM_ROUTE_LEAST_LOADED)
            fputs("# NOTE: sglang_router has no least-loaded policy: power_of_two (two sampled, the less loaded "
                  "wins) stands in.\n", f);
        if (rp == SIM_ROUTE_CACHE_AWARE && sc->routing.preset != SIM_PRESET_SGLANG)
            fprintf(f, "# NOTE: servesim simulated cache_aware routing with preset %s (lambda %g); sglang_router's "
                       "cache_aware\n#       is SGLang's own rule (preset sglang).\n",
                    sc->routing.preset == SIM_PRESET_DYNAMO ? "dynamo" : sc->routing.preset == SIM_PRESET_LLMD ? "llmd"
                                                                                                                : "none",
                    sc->routing.lambda);
        if (pd && sc->deployment.decode_routing == SIM_DECODE_LEAST_LOADED)
            fputs("# NOTE: decode routing least_loaded was simulated; --decode-policy power_of_two stands in.\n", f);
    } else {
        if (pd && (rp == SIM_ROUTE_RANDOM || rp == SIM_ROUTE_CACHE_AWARE))
            fprintf(f, "# NOTE: servesim simulated routing %s; the disaggregated server's router is %s.\n", pol,
                    trtllm_router(rp));
        if (!pd && n_served > 1)
            fprintf(f, "# NOTE: trtllm-serve has no router for aggregated instances: put a load balancer over "
                       "the instance\n#       ports below (servesim simulated routing %s).\n", pol);
    }
}

/* Whether instance i serves PD side `side` (0 prefill, 1 decode). */
static int inst_on_side(const sh_ctx *c, int i, int side)
{
    const char *r = launch_pd_role(c->sc, &c->sc->deployment.pools[c->pl->inst[i].pool]);
    return r && (strcmp(r, "decode") == 0) == side;
}

/* vLLM's PD proxy (its NIXL example), over the prefill and decode instances. */
static void sh_router_vllm_pd(const sh_ctx *c)
{
    FILE *f = c->f;
    const launch_plan *pl = c->pl;
    launch_args A = {.n = 0};
    listen_args(&A, LISTEN_ROUTER);
    for (int side = 0; side < 2; side++) {
        launch_arg(&A, side ? "--decoder-hosts" : "--prefiller-hosts");
        for (int i = 0; i < pl->n; i++)
            if (inst_on_side(c, i, side)) launch_arg_raw(&A, "\"$(host %d)\"", pl->inst[i].node);
        launch_arg(&A, side ? "--decoder-ports" : "--prefiller-ports");
        for (int i = 0; i < pl->n; i++)
            if (inst_on_side(c, i, side)) launch_arg_raw(&A, "$((PORT_BASE + %d))", pl->inst[i].slot);
    }
    fputs("  python \"$VLLM_SRC/tests/v1/kv_connector/nixl_integration/toy_proxy_server.py\"", f);
    sh_args(f, &A, "    ");
    sh_background(f, "proxy");
    fputs("  echo \"launch: serving on http://$(host 0):$ROUTER_PORT (OpenAI API, PD proxy)\"\n", f);
}

/* sglang_router over the PD instances, or over the aggregated ones. */
static void sh_router_sglang(const sh_ctx *c, int pd)
{
    FILE *f = c->f;
    const sim_scenario *sc = c->sc;
    const launch_plan *pl = c->pl;
    launch_args A = {.n = 0};
    if (pd) {
        launch_arg(&A, "--pd-disaggregation");
        for (int i = 0; i < pl->n; i++) {
            const launch_inst *x = &pl->inst[i];
            const char *r = launch_pd_role(sc, &sc->deployment.pools[x->pool]);
            if (!r) continue;
            launch_arg(&A, strcmp(r, "prefill") == 0 ? "--prefill" : "--decode");
            launch_arg_raw(&A, "\"http://$(host %d):$((PORT_BASE + %d))\"", x->node, x->slot);
            if (strcmp(r, "prefill") == 0) launch_arg_raw(&A, "$((BOOTSTRAP_PORT_BASE + %d))", x->slot);
        }
        launch_arg(&A, "--prefill-policy");
        launch_arg(&A, "%s", sglang_policy(sc->routing.policy));
        launch_arg(&A, "--decode-policy");
        launch_arg(&A, "%s",
                   sc->deployment.decode_routing == SIM_DECODE_ROUND_ROBIN ? "round_robin" : "power_of_two");
    } else {
        launch_arg(&A, "--worker-urls");
        for (int i = 0; i < pl->n; i++)
            launch_arg_raw(&A, "\"http://$(host %d):$((PORT_BASE + %d))\"", pl->inst[i].node, pl->inst[i].slot);
        launch_arg(&A, "--policy");
        launch_arg(&A, "%s", sglang_policy(sc->routing.policy));
    }
    if (sc->routing.policy == SIM_ROUTE_CACHE_AWARE) {
        launch_arg(&A, "--cache-threshold");
        launch_arg(&A, "%g", sc->routing.cache_threshold);
        launch_arg(&A, "--balance-abs-threshold");
        launch_arg(&A, "%g", sc->routing.balance_abs_threshold);
        launch_arg(&A, "--balance-rel-threshold");
        launch_arg(&A, "%g", sc->routing.balance_rel_threshold);
    }
    listen_args(&A, LISTEN_ROUTER);
    fputs("  python -m sglang_router.launch_router", f);
    sh_args(f, &A, "    ");
    sh_background(f, "router");
    fputs("  wait_health \"http://$(host 0):$ROUTER_PORT\"\n", f);
    fputs("  echo \"launch: serving on http://$(host 0):$ROUTER_PORT (OpenAI API, sglang_router)\"\n", f);
}

/* TensorRT-LLM's disaggregated server over the context and generation
 * instances. */
static void sh_router_trtllm_pd(const sh_ctx *c)
{
    FILE *f = c->f;
    const sim_scenario *sc = c->sc;
    const launch_plan *pl = c->pl;
    fputs("  cat > \"$LOG_DIR/disagg.yaml\" <<EOF\nhostname: 0.0.0.0\nport: $ROUTER_PORT\nbackend: pytorch\n", f);
    for (int side = 0; side < 2; side++) {
        int n = 0;
        for (int i = 0; i < pl->n; i++) n += inst_on_side(c, i, side);
        fprintf(f, "%s:\n  num_instances: %d\n  router:\n    type: %s\n  urls:\n",
                side ? "generation_servers" : "context_servers", n,
                side ? (sc->deployment.decode_routing == SIM_DECODE_ROUND_ROBIN ? "round_robin" : "load_balancing")
                     : trtllm_router(sc->routing.policy));
        for (int i = 0; i < pl->n; i++)
            if (inst_on_side(c, i, side))
                fprintf(f, "    - \"$(host %d):$((PORT_BASE + %d))\"\n", pl->inst[i].node, pl->inst[i].slot);
    }
    fputs("EOF\n  trtllm-serve disaggregated -c \"$LOG_DIR/disagg.yaml\" > \"$LOG_DIR/disagg.log\" 2>&1 &\n"
          "  PIDS=\"$PIDS $!\"\n"
          "  echo \"launch: serving on http://$(host 0):$ROUTER_PORT (OpenAI API, disaggregated server)\"\n",
          f);
}

/* Node 0: wait for every server, then start the router. */
static void sh_router(const sh_ctx *c)
{
    FILE *f = c->f;
    const sim_scenario *sc = c->sc;
    const launch_plan *pl = c->pl;
    int pd = launch_is_pd(sc);
    fputs("\nif [ \"$NODE_RANK\" -eq 0 ]; then\n", f);
    for (int i = 0; i < pl->n; i++) {
        const launch_inst *x = &pl->inst[i];
        char name[64];
        inst_name(c, x, name, sizeof name);
        pid_var(name);
        if (x->node == 0)
            fprintf(f, "  wait_health \"http://$(host 0):$((PORT_BASE + %d))\" \"$PID_%s\" \"$LOG_DIR/%s.log\"\n",
                    x->slot, name, name);
        else
            fprintf(f, "  wait_health \"http://$(host %d):$((PORT_BASE + %d))\"\n", x->node, x->slot);
    }
    if (c->k == SIM_LAUNCH_VLLM && pd) {
        sh_router_vllm_pd(c);
    } else if (c->k == SIM_LAUNCH_SGLANG && (pd || pl->n > 1)) {
        sh_router_sglang(c, pd);
    } else if (c->k == SIM_LAUNCH_TRTLLM && pd) {
        sh_router_trtllm_pd(c);
    } else if (pl->n == 1) {
        fputs("  echo \"launch: serving on http://$(host 0):$PORT_BASE (OpenAI API)\"\n", f);
    } else {
        fputs("  echo \"launch: every instance is up (no router: see the NOTE above); ports:\"\n", f);
        for (int i = 0; i < pl->n; i++)
            fprintf(f, "  echo \"  http://$(host %d):$((PORT_BASE + %d))\"\n", pl->inst[i].node, pl->inst[i].slot);
    }
    fputs("fi\nwait\n", f);
}

static int write_script(sim_launch_kind k, const sim_scenario *sc, const char *label, FILE *f, sim_err *err)
{
    launch_plan pl;
    int rc = launch_plan_make(sc, &pl, err);
    if (rc < 0) return rc;
    sh_ctx c = {.k = k, .sc = sc, .pl = &pl, .f = f};
    sh_prelude(&c, label);
    int refuse = 0;
    engine_notes(&c, &refuse);
    sh_setup(&c);
    if (refuse)
        fprintf(f, "echo \"launch: this deployment has instances larger than a node; multi-node %s instances are "
                   "not generated (see the NOTE at the top)\" >&2\nexit 2\n",
                engine_name(k));
    for (int i = 0; i < pl.n; i++) {
        if (k == SIM_LAUNCH_VLLM) vllm_instance(&c, &pl.inst[i]);
        else if (k == SIM_LAUNCH_SGLANG) sglang_instance(&c, &pl.inst[i]);
        else trtllm_instance(&c, &pl.inst[i]);
    }
    sh_router(&c);
    launch_plan_free(&pl);
    return ferror(f) ? sim_err_set(err, SIM_EIO, "writing %s failed", sim_launch_file_name(k)) : 0;
}

/* sim_launch_k8s.c */
int launch_write_dynamo(const sim_scenario *sc, const char *label, FILE *f, sim_err *err);
int launch_write_llmd(const sim_scenario *sc, const char *label, FILE *f, sim_err *err);

const char *sim_launch_file_name(sim_launch_kind k)
{
    static const char *const names[] = {"launch-vllm.sh", "launch-sglang.sh", "launch-trtllm.sh", "dynamo.yaml",
                                        "llm-d-values.yaml"};
    return (unsigned)k < SIM_LAUNCH_KINDS ? names[k] : "?";
}

int sim_launch_write(sim_launch_kind k, const sim_scenario *sc, const char *label, FILE *f, sim_err *err)
{
    switch (k) {
    case SIM_LAUNCH_VLLM:
    case SIM_LAUNCH_SGLANG:
    case SIM_LAUNCH_TRTLLM: return write_script(k, sc, label, f, err);
    case SIM_LAUNCH_DYNAMO: return launch_write_dynamo(sc, label, f, err);
    case SIM_LAUNCH_LLMD: return launch_write_llmd(sc, label, f, err);
    default: return sim_err_set(err, SIM_EINVAL, "launch: unknown kind %d", (int)k);
    }
}
