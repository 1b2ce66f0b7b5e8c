/* sim_launch_k8s — the Kubernetes launch files (see sim_launch.h): a Dynamo
 * DynamoGraphDeployment (nvidia.com/v1beta1: spec.backendFramework, a
 * spec.components list of {name, type, replicas, multinode.nodeCount,
 * podTemplate with a container named "main"}) with a frontend and vLLM
 * workers, and values for the llm-d-modelservice Helm chart (modelArtifacts,
 * routing, prefill/decode with replicas, parallelism and vLLM containers
 * using modelCommand vllmServe, which adds --port, --tensor-parallel-size and
 * --data-parallel-size from parallelism and the GPU resources from it).
 * Both are written as YAML text; every string is double-quoted. */
#include "sim_launch_impl.h"
#include "sim_yaml.h"

#include <string.h>

/* sim_launch.c */
int launch_write_dynamo(const sim_scenario *sc, const char *label, FILE *f, sim_err *err);
int launch_write_llmd(const sim_scenario *sc, const char *label, FILE *f, sim_err *err);

static void yaml_list(FILE *f, const char *indent, const launch_args *A)
{
    for (int i = 0; i < A->n; i++) {
        fprintf(f, "%s- ", indent);
        sim_yaml_write_quoted(f, A->a[i]);
        fputc('\n', f);
    }
}

/* A DNS-1123 name from the scenario name. */
static void k8s_name(const char *in, const char *suffix, char *out, size_t len)
{
    size_t m = 0;
    for (const char *c = in; *c && m + 1 < len && m < 40; c++) {
        char ch = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (!ok && (m == 0 || out[m - 1] == '-')) continue;
        out[m++] = ok ? ch : '-';
    }
    while (m > 0 && out[m - 1] == '-') m--;
    out[m] = '\0';
    if (m == 0) snprintf(out, len, "servesim");
    size_t l = strlen(out);
    snprintf(out + l, len - l, "%s", suffix);
}

static void header(FILE *f, const sim_scenario *sc, const char *label, const char *what, const char *checked)
{
    /* The scenario's own strings go through sim_yaml_write_comment_text so
     * that a newline in them cannot end the comment. */
    fprintf(f, "# %s for servesim's deployment\n#   ", what);
    sim_yaml_write_comment_text(f, label && *label ? label : sc->name);
    fprintf(f, "\n# written by servesim %s; field and flag names checked against %s.\n", SERVESIM_VERSION, checked);
    fputs("# Simulated: ", f);
    sim_yaml_write_comment_text(f, sc->model);
    fprintf(f, ", %s on %s (%d GPUs per node); routing %s; prefix caching %s\n",
            sim_mode_name(sc->deployment.mode), sc->hardware.gpu,
            sim_hardware_gpus_per_node(&sc->hardware), sim_route_policy_name(sc->routing.policy),
            sc->cache.enabled ? "on" : "off");
    launch_common_notes(f, sc);
}

static const char *component_type(const sim_scenario *sc, const sim_pool_cfg *p)
{
    const char *r = launch_pd_role(sc, p);
    return r ? r : "worker";
}

/* The frontend's flags: its router for the scenario's routing policy (a
 * NOTE where Dynamo's differs), and a NOTE on PD decode routing. */
static void dynamo_router_args(const sim_scenario *sc, FILE *f, launch_args *F)
{
    launch_arg(F, "--http-port");
    launch_arg(F, "8000");
    launch_arg(F, "--router-mode");
    switch (sc->routing.policy) {
    case SIM_ROUTE_CACHE_AWARE:
        launch_arg(F, "kv");
        launch_arg(F, "--kv-overlap-score-weight");
        launch_arg(F, "%g", sc->routing.overlap_score_weight);
        launch_arg(F, "--router-temperature");
        launch_arg(F, "%g", sc->routing.temperature);
        if (sc->routing.preset != SIM_PRESET_DYNAMO)
            fputs("# NOTE: cache_aware routing was simulated with another preset than dynamo; the KV router below\n"
                  "#       uses Dynamo's own rule with the scenario's overlap_score_weight and temperature.\n",
                  f);
        break;
    case SIM_ROUTE_LEAST_LOADED:
    case SIM_ROUTE_POWER_OF_TWO:
        launch_arg(F, "kv");
        launch_arg(F, "--kv-overlap-score-weight");
        launch_arg(F, "0");
        fprintf(f, "# NOTE: servesim simulated %s routing: Dynamo's KV router with overlap weight 0 (load only) "
                   "stands in.\n", sim_route_policy_name(sc->routing.policy));
        break;
    case SIM_ROUTE_RANDOM: launch_arg(F, "random"); break;
    default: launch_arg(F, "round-robin"); break;
    }
    if (launch_is_pd(sc))
        fprintf(f, "# NOTE: Dynamo picks decode workers with its own router (servesim simulated decode routing "
                   "%s).\n", sim_decode_routing_name(sc->deployment.decode_routing));
}

/* A component's pod: one container of image running `python3 -m module`
 * with the args that follow. */
static void dynamo_container(FILE *f, const char *image, const char *module)
{
    fputs("      podTemplate:\n        spec:\n          containers:\n            - name: main\n"
          "              image: ",
          f);
    sim_yaml_write_quoted(f, image);
    fprintf(f, "\n              command:\n                - \"python3\"\n                - \"-m\"\n"
               "                - \"%s\"\n              args:\n",
            module);
}

/* Pool p's vLLM workers as a component (multinode past one node). */
static int dynamo_worker(const sim_scenario *sc, int32_t p, const char *image, FILE *f, sim_err *err)
{
    const sim_pool_cfg *pc = &sc->deployment.pools[p];
    int gpn = sim_hardware_gpus_per_node(&sc->hardware);
    const char *type = component_type(sc, pc), *role = launch_pd_role(sc, pc);
    int g = launch_pool_gpus(pc), nodes = (g + gpn - 1) / gpn;
    launch_args A = {.n = 0};
    launch_arg(&A, "--model");
    launch_arg(&A, "%s", launch_hf_name(sc->model));
    if (role) {
        launch_arg(&A, "--disaggregation-mode");
        launch_arg(&A, "%s", role);
    }
    launch_vllm_engine_args(&A, sc, pc, LAUNCH_NO_KV_TRANSFER);
    if (A.overflow) return sim_err_set(err, SIM_EINVAL, "launch: too many worker arguments");
    fprintf(f, "    - name: VllmPool%d%s\n      type: %s\n      replicas: %d\n", (int)p,
            role ? (strcmp(role, "prefill") == 0 ? "Prefill" : "Decode") : "Worker", type, (int)pc->instances);
    if (nodes > 1) fprintf(f, "      multinode:\n        nodeCount: %d\n", nodes);
    dynamo_container(f, image, "dynamo.vllm");
    yaml_list(f, "                ", &A);
    fprintf(f, "              envFrom:\n                - secretRef:\n                    name: \"hf-token-secret\"\n"
               "              resources:\n                limits:\n                  nvidia.com/gpu: \"%d\"\n",
            nodes > 1 ? gpn : g);
    return 0;
}

int launch_write_dynamo(const sim_scenario *sc, const char *label, FILE *f, sim_err *err)
{
    int rc;
    header(f, sc, label, "Dynamo DynamoGraphDeployment", sim_launch_flag_version("dynamo.frontend"));
    /* The frontend's router. */
    launch_args F = {.n = 0};
    dynamo_router_args(sc, f, &F);
    char name[64];
    k8s_name(sc->name, "", name, sizeof name);
    const char *image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0";
    fprintf(f, "# Set the runtime image to the Dynamo release you run; the workers read HF_TOKEN from the\n"
               "# secret hf-token-secret.\n");
    fprintf(f, "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: %s\nspec:\n"
               "  backendFramework: vllm\n  components:\n",
            name);
    fputs("    - name: Frontend\n      type: frontend\n      replicas: 1\n", f);
    dynamo_container(f, image, "dynamo.frontend");
    yaml_list(f, "                ", &F);
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        if (!launch_pool_served(&sc->deployment.pools[p])) continue;
        if ((rc = dynamo_worker(sc, p, image, f, err))) return rc;
    }
    return ferror(f) ? sim_err_set(err, SIM_EIO, "writing dynamo.yaml failed") : 0;
}

int launch_write_llmd(const sim_scenario *sc, const char *label, FILE *f, sim_err *err)
{
    int gpn = sim_hardware_gpus_per_node(&sc->hardware);
    header(f, sc, label, "llm-d-modelservice Helm values", "the llm-d-modelservice chart (llm-d 0.3)");
    int pd = launch_is_pd(sc), multinode = 0;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++)
        if (launch_pool_served(&sc->deployment.pools[p]) && launch_pool_gpus(&sc->deployment.pools[p]) > gpn)
            multinode = 1;
    /* llm-d's inference scheduler (EPP) scores prefix, queue and KV use. */
    if (sc->routing.policy == SIM_ROUTE_CACHE_AWARE && sc->routing.preset == SIM_PRESET_LLMD)
        fprintf(f, "# Simulated routing: llm-d's weighted scorers, prefix %g, queue %g, KV-cache use %g: set them in\n"
                   "# the inference scheduler's (EPP) plugin configuration.\n",
                sc->routing.w_prefix, sc->routing.w_load, sc->routing.w_kv);
    else
        fprintf(f, "# NOTE: routing %s was simulated; llm-d routes with its inference scheduler (EPP) scorers "
                   "instead.\n", sim_route_policy_name(sc->routing.policy));
    if (pd)
        fputs("# The decode pods get llm-d's routing sidecar (routing.proxy), which runs each request's prefill on a\n"
              "# prefill pod and moves the KV with NIXL.\n",
              f);
    int n_pools_served = 0, decode_pools = 0, prefill_pools = 0;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        if (!launch_pool_served(pc)) continue;
        n_pools_served++;
        const char *r = launch_pd_role(sc, pc);
        if (r && strcmp(r, "prefill") == 0) prefill_pools++;
        else decode_pools++;
    }
    if (prefill_pools > 1 || decode_pools > 1)
        fputs("# NOTE: the chart has one prefill and one decode section: only the first pool of each role is "
              "written.\n", f);
    (void)n_pools_served;
    fprintf(f, "multinode: %s\n", multinode ? "true" : "false");
    fputs("modelArtifacts:\n  name: ", f);
    sim_yaml_write_quoted(f, launch_hf_name(sc->model));
    fputs("\n  uri: ", f);
    char uri[600];
    snprintf(uri, sizeof uri, "hf://%s", launch_hf_name(sc->model));
    sim_yaml_write_quoted(f, uri);
    fprintf(f, "\nrouting:\n  servicePort: 8000\n  proxy:\n    enabled: %s\n", pd ? "true" : "false");
    for (int side = 0; side < 2; side++) { /* 0 decode (or colocated), 1 prefill */
        const sim_pool_cfg *pc = NULL;
        for (int32_t p = 0; p < sc->deployment.n_pools && !pc; p++) {
            const sim_pool_cfg *q = &sc->deployment.pools[p];
            if (!launch_pool_served(q)) continue;
            const char *r = launch_pd_role(sc, q);
            int is_prefill = r && strcmp(r, "prefill") == 0;
            if (is_prefill == side) pc = q;
        }
        fprintf(f, "%s:\n", side ? "prefill" : "decode");
        if (!pc) {
            fputs("  create: false\n", f);
            continue;
        }
        launch_args A = {.n = 0};
        launch_vllm_engine_args(&A, sc, pc, LAUNCH_NO_TP_DP);
        if (A.overflow) return sim_err_set(err, SIM_EINVAL, "launch: too many container arguments");
        int g = launch_pool_gpus(pc);
        fprintf(f, "  create: true\n  replicas: %d\n  parallelism:\n    tensor: %d\n    data: %d\n", (int)pc->instances,
                (int)pc->parallel.tp, (int)pc->parallel.dp);
        if (g > gpn) fprintf(f, "    workers: %d\n", (g + gpn - 1) / gpn);
        fputs("  containers:\n    - name: \"vllm\"\n      image: \"ghcr.io/llm-d/llm-d-cuda:v0.3.0\"\n"
              "      modelCommand: \"vllmServe\"\n      args:\n",
              f);
        yaml_list(f, "        ", &A);
        if (launch_pd_role(sc, pc))
            fputs("      env:\n        - name: \"VLLM_NIXL_SIDE_CHANNEL_PORT\"\n          value: \"5557\"\n"
                  "        - name: \"VLLM_NIXL_SIDE_CHANNEL_HOST\"\n          valueFrom:\n            fieldRef:\n"
                  "              fieldPath: \"status.podIP\"\n      ports:\n        - containerPort: 5557\n"
                  "          protocol: \"TCP\"\n",
                  f);
        fputs("      mountModelVolume: true\n", f);
    }
    return ferror(f) ? sim_err_set(err, SIM_EIO, "writing llm-d-values.yaml failed") : 0;
}
