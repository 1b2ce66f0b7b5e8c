/* test_launch — the generated launch files: every script passes `sh -n`
 * (and `bash -n` where bash is installed); every flag of every engine,
 * router and proxy command, and every top-level key of the TensorRT-LLM
 * config files the scripts write, is in the known-flag table of its
 * program (sim_launch_flags.c); instances get disjoint GPUs and distinct
 * ports on their node; the PD, prefix-cache, mixed-chunk, DP/EP and
 * multi-node settings follow the scenario; the scripts run against fake
 * engines (started in the background, health waited for, the router
 * started, every server stopped by the trap on SIGTERM); the Dynamo and
 * llm-d YAML parse back with libyaml with the pools' roles, replicas, GPUs
 * and flags in place. */
#include "test_util.h"

#include "sim_launch.h"
#include "sim_loader.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml.h>

static const char *pd_yaml =
    "name: t-launch-pd\nmodel: llama-3.1-70b\nhardware: {gpu: h100-sxm}\n"
    "routing: {policy: least_loaded}\n"
    "deployment:\n  mode: pd\n  pools:\n"
    "    - {role: prefill, instances: 12, parallel: {tp: 2}, scheduler: {policy: decode_first}}\n"
    "    - {role: decode, instances: 2, parallel: {tp: 4}, scheduler: {policy: decode_first, max_seqs: 128}}\n";

static const char *colo_yaml =
    "name: t-launch-colo\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
    "routing: {policy: cache_aware, preset: sglang}\ncache: {enabled: true}\n"
    "deployment:\n  pools:\n"
    "    - {instances: 4, parallel: {tp: 2}, scheduler: {policy: prefill_first, admission: reserve, "
    "chunk_tokens: 1024}}\n";

static const char *moe_yaml =
    "name: t-launch-moe\nmodel: deepseek-v3\nhardware: {gpu: h200-sxm}\nkv_dtype: fp8\n"
    "deployment:\n  pools:\n    - {instances: 2, parallel: {tp: 1, dp: 8, ep: 8}}\n";

static const char *big_yaml =
    "name: t-launch-big\nmodel: llama-3.1-405b\nhardware: {gpu: h100-sxm}\n"
    "deployment:\n  pools:\n    - {instances: 1, parallel: {tp: 16}}\n";

static char *write_kind(const sim_scenario *sc, sim_launch_kind k, const char *dir)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sim_launch_file_name(k));
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    sim_err err = {{0}};
    int rc = sim_launch_write(k, sc, "test deployment", f, &err);
    fclose(f);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc == 0 ? path : NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (b) b[n] = '\0';
    fclose(f);
    return b;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The script with "\\\n" continuations joined into logical lines. */
static char *joined(const char *text)
{
    char *o = malloc(strlen(text) + 1), *w = o;
    for (const char *p = text; o && *p; p++) {
        if (p[0] == '\\' && p[1] == '\n') {
            p++;
            continue;
        }
        *w++ = *p;
    }
    if (o) *w = '\0';
    return o;
}

static const char *program_of(const char *line)
{
    if (strstr(line, "toy_proxy_server.py")) return "toy_proxy_server.py";
    if (strstr(line, "sglang_router.launch_router")) return "sglang_router.launch_router";
    if (strstr(line, "sglang.launch_server")) return "sglang.launch_server";
    if (strstr(line, "trtllm-serve disaggregated")) return NULL; /* only -c FILE */
    if (strstr(line, "trtllm-serve ")) return "trtllm-serve";
    if (strstr(line, "vllm serve")) return "vllm serve";
    return NULL;
}

/* Every --flag on an engine line is in its program's known set; returns how many were checked. */
static int check_flags(const char *text)
{
    char *j = joined(text);
    int checked = 0;
    for (char *line = j, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        const char *s = line;
        while (*s == ' ') s++;
        if (*s == '#') continue;
        const char *prog = program_of(s);
        if (!prog) continue;
        char *copy = strdup(s), *save = NULL;
        for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            if (strncmp(t, "--", 2) != 0) continue;
            char *eq = strchr(t, '=');
            if (eq) *eq = '\0';
            int k = sim_launch_flag_known(prog, t);
            CHECK_MSG(k == 1, "%s: flag %s is not in the known set (%s)", prog, t, sim_launch_flag_version(prog));
            checked++;
        }
        free(copy);
    }
    free(j);
    return checked;
}

/* GPUs on one node are used once, below gpn, and HTTP ports are distinct per node. */
static void check_placement(const char *text, int gpn, int expect_instances)
{
    char *j = joined(text);
    int used[16][64] = {{0}}, ports[16][64] = {{0}}, node = -1, inst = 0;
    for (char *line = j, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        const char *nr = strstr(line, "if [ \"$NODE_RANK\" -eq ");
        if (nr) node = atoi(nr + strlen("if [ \"$NODE_RANK\" -eq "));
        const char *cvd = strstr(line, "CUDA_VISIBLE_DEVICES=");
        if (!cvd || node < 0 || node >= 16) continue;
        inst++;
        for (const char *g = cvd + strlen("CUDA_VISIBLE_DEVICES="); *g >= '0' && *g <= '9';) {
            int x = atoi(g);
            CHECK_MSG(x < gpn && x < 64, "GPU %d on a node of %d", x, gpn);
            if (x < 64) {
                CHECK_MSG(used[node][x] == 0, "GPU %d of node %d given twice", x, node);
                used[node][x] = 1;
            }
            while (*g >= '0' && *g <= '9') g++;
            if (*g == ',') g++;
        }
        const char *pt = strstr(line, "--port $((PORT_BASE + ");
        CHECK(pt != NULL);
        if (pt) {
            int k = atoi(pt + strlen("--port $((PORT_BASE + "));
            if (strstr(line, "--node-rank ") && !strstr(line, "--node-rank 0")) continue; /* same server */
            CHECK_MSG(k >= 0 && k < 64 && ports[node][k] == 0, "port PORT_BASE+%d of node %d used twice", k, node);
            if (k >= 0 && k < 64) ports[node][k] = 1;
        }
    }
    CHECK_MSG(inst == expect_instances, "%d engine commands, expected %d", inst, expect_instances);
    free(j);
}

/* The YAML here-documents a TensorRT-LLM script writes: each parses, its top-level keys known. */
static int check_heredocs(const char *text)
{
    int docs = 0;
    for (const char *p = text; (p = strstr(p, "<<")); p++) {
        const char *nl = strchr(p, '\n');
        if (!nl || !strstr(p, "EOF") || strstr(p, "EOF") > nl) continue;
        const char *end = strstr(nl + 1, "\nEOF\n");
        if (!end) break;
        size_t n = (size_t)(end - nl);
        yaml_parser_t ps;
        yaml_document_t doc;
        yaml_parser_initialize(&ps);
        yaml_parser_set_input_string(&ps, (const unsigned char *)nl + 1, n);
        int ok = yaml_parser_load(&ps, &doc);
        CHECK_MSG(ok, "heredoc does not parse: %s", ps.problem ? ps.problem : "?");
        yaml_node_t *root = ok ? yaml_document_get_root_node(&doc) : NULL;
        CHECK(root && root->type == YAML_MAPPING_NODE);
        if (root && root->type == YAML_MAPPING_NODE) {
            int disagg = 0;
            for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < root->data.mapping.pairs.top; q++) {
                yaml_node_t *k = yaml_document_get_node(&doc, q->key);
                disagg |= strcmp((const char *)k->data.scalar.value, "context_servers") == 0;
            }
            const char *prog = disagg ? "trtllm disagg config" : "trtllm config";
            for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < root->data.mapping.pairs.top; q++) {
                yaml_node_t *k = yaml_document_get_node(&doc, q->key);
                CHECK_MSG(sim_launch_flag_known(prog, (const char *)k->data.scalar.value) == 1, "%s: key %s", prog,
                          (const char *)k->data.scalar.value);
            }
            docs++;
        }
        if (ok) yaml_document_delete(&doc);
        yaml_parser_delete(&ps);
        p = end;
    }
    return docs;
}

static int syntax_ok(const char *shell, const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -n '%s'", shell, path);
    return system(cmd) == 0;
}

static int have_bash(void) { return system("command -v bash > /dev/null 2>&1") == 0; }

/* Writes the three scripts of sc into dir, checks syntax and flags; texts[k] are the files. */
static void scripts(const sim_scenario *sc, const char *dir, char *texts[3])
{
    for (int k = 0; k <= SIM_LAUNCH_TRTLLM; k++) {
        texts[k] = NULL;
        char *p = write_kind(sc, (sim_launch_kind)k, dir);
        REQUIRE_OR(p != NULL, continue);
        CHECK_MSG(syntax_ok("sh", p), "sh -n %s", p);
        if (have_bash()) CHECK_MSG(syntax_ok("bash", p), "bash -n %s", p);
        texts[k] = slurp(p);
        REQUIRE_OR(texts[k] != NULL, continue);
        CHECK(check_flags(texts[k]) > 5);
        CHECK_CONTAINS(texts[k], "trap cleanup EXIT");
        CHECK_CONTAINS(texts[k], "wait_health");
    }
}

/* ---- YAML navigation ------------------------------------------------------ */

static yaml_node_t *ynode(yaml_document_t *d, yaml_node_t *n, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && n; t = strtok_r(NULL, ".", &save)) {
        if (n->type == YAML_SEQUENCE_NODE) {
            int i = atoi(t);
            yaml_node_item_t *it = n->data.sequence.items.start + i;
            n = it < n->data.sequence.items.top ? yaml_document_get_node(d, *it) : NULL;
        } else if (n->type == YAML_MAPPING_NODE) {
            yaml_node_t *found = NULL;
            for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
                yaml_node_t *k = yaml_document_get_node(d, q->key);
                if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, t) == 0)
                    found = yaml_document_get_node(d, q->value);
            }
            n = found;
        } else {
            n = NULL;
        }
    }
    return n;
}

static const char *yscalar(yaml_document_t *d, const char *path)
{
    yaml_node_t *n = ynode(d, yaml_document_get_root_node(d), path);
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : "";
}

static int yload(const char *path, yaml_document_t *doc)
{
    char *t = slurp(path);
    if (!t) return 0;
    yaml_parser_t ps;
    yaml_parser_initialize(&ps);
    yaml_parser_set_input_string(&ps, (const unsigned char *)t, strlen(t));
    int ok = yaml_parser_load(&ps, doc) && yaml_document_get_root_node(doc) != NULL;
    CHECK_MSG(ok, "%s does not parse: %s", path, ps.problem ? ps.problem : "empty");
    yaml_parser_delete(&ps);
    free(t);
    return ok;
}

/* Flags in a YAML args list: each in one of the programs' sets; 1 when `want` is among them. */
static int yargs(yaml_document_t *d, const char *path, const char *p1, const char *p2, const char *want)
{
    yaml_node_t *n = ynode(d, yaml_document_get_root_node(d), path);
    CHECK_MSG(n && n->type == YAML_SEQUENCE_NODE, "%s is not a list", path);
    if (!n || n->type != YAML_SEQUENCE_NODE) return 0;
    int found = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        const char *v = (const char *)yaml_document_get_node(d, *it)->data.scalar.value;
        if (strncmp(v, "--", 2) != 0) continue;
        CHECK_MSG(sim_launch_flag_known(p1, v) == 1 || (p2 && sim_launch_flag_known(p2, v) == 1), "%s: %s", path, v);
        found |= want && strcmp(v, want) == 0;
    }
    return found;
}

static void check_k8s_pd(const sim_scenario *sc, const char *dir)
{
    yaml_document_t d;
    char *p = write_kind(sc, SIM_LAUNCH_DYNAMO, dir);
    if (p && yload(p, &d)) {
        CHECK(strcmp(yscalar(&d, "apiVersion"), "nvidia.com/v1beta1") == 0);
        CHECK(strcmp(yscalar(&d, "kind"), "DynamoGraphDeployment") == 0);
        CHECK(strcmp(yscalar(&d, "spec.backendFramework"), "vllm") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.0.type"), "frontend") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.1.type"), "prefill") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.1.replicas"), "12") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.1.podTemplate.spec.containers.0.name"), "main") == 0);
        /* nvidia.com/gpu holds dots: read as the limits mapping's first key */
        yaml_node_t *lim = ynode(&d, yaml_document_get_root_node(&d),
                                 "spec.components.2.podTemplate.spec.containers.0.resources.limits");
        CHECK(lim && lim->type == YAML_MAPPING_NODE && lim->data.mapping.pairs.top > lim->data.mapping.pairs.start);
        if (lim && lim->type == YAML_MAPPING_NODE && lim->data.mapping.pairs.top > lim->data.mapping.pairs.start) {
            yaml_node_t *k = yaml_document_get_node(&d, lim->data.mapping.pairs.start->key);
            yaml_node_t *v = yaml_document_get_node(&d, lim->data.mapping.pairs.start->value);
            CHECK(strcmp((const char *)k->data.scalar.value, "nvidia.com/gpu") == 0);
            CHECK(strcmp((const char *)v->data.scalar.value, "4") == 0);
        }
        CHECK(strcmp(yscalar(&d, "spec.components.2.type"), "decode") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.2.replicas"), "2") == 0);
        CHECK(yargs(&d, "spec.components.1.podTemplate.spec.containers.0.args", "dynamo.vllm", "vllm serve",
                    "--disaggregation-mode"));
        CHECK(yargs(&d, "spec.components.2.podTemplate.spec.containers.0.args", "dynamo.vllm", "vllm serve",
                    "--max-num-seqs"));
        CHECK(yargs(&d, "spec.components.0.podTemplate.spec.containers.0.args", "dynamo.frontend", NULL,
                    "--router-mode"));
        yaml_document_delete(&d);
    }
    p = write_kind(sc, SIM_LAUNCH_LLMD, dir);
    if (p && yload(p, &d)) {
        CHECK(strcmp(yscalar(&d, "modelArtifacts.uri"), "hf://meta-llama/Llama-3.1-70B-Instruct") == 0);
        CHECK(strcmp(yscalar(&d, "routing.proxy.enabled"), "true") == 0);
        CHECK(strcmp(yscalar(&d, "prefill.replicas"), "12") == 0);
        CHECK(strcmp(yscalar(&d, "prefill.parallelism.tensor"), "2") == 0);
        CHECK(strcmp(yscalar(&d, "decode.replicas"), "2") == 0);
        CHECK(strcmp(yscalar(&d, "decode.parallelism.tensor"), "4") == 0);
        CHECK(strcmp(yscalar(&d, "decode.containers.0.modelCommand"), "vllmServe") == 0);
        CHECK(yargs(&d, "decode.containers.0.args", "vllm serve", NULL, "--kv-transfer-config"));
        /* the chart adds --tensor-parallel-size from parallelism: not repeated in args */
        CHECK(!yargs(&d, "decode.containers.0.args", "vllm serve", NULL, "--tensor-parallel-size"));
        yaml_document_delete(&d);
    }
}

/* ---- running a script against fake engines -------------------------------- */

static void fake(const char *dir, const char *name, const char *body)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) return;
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(p, 0755);
}

/* Runs script (one node) with fake engines that log their GPUs and pid and
 * then sleep `hold` seconds; with stop, sends SIGTERM once every server is up
 * and checks they were all stopped. Returns how many servers started. */
static int run_fake(const char *dir, const char *script, int hold, int stop, int expect)
{
    static int runs;
    char bin[512], logs[512], body[512];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(logs, sizeof logs, "%s/logs-%d", dir, runs++);
    mkdir(bin, 0755);
    snprintf(body, sizeof body, "echo \"GPUS $CUDA_VISIBLE_DEVICES PID $$ ARGS $*\"\nexec sleep %d", hold);
    fake(bin, "vllm", body);
    fake(bin, "python", body);
    fake(bin, "trtllm-serve", body);
    fake(bin, "curl", "exit 0");
    pid_t pid = fork();
    if (pid == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
        setenv("PATH", path, 1);
        setenv("LOG_DIR", logs, 1);
        setenv("VLLM_SRC", dir, 1);
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, 1);
        execlp("sh", "sh", script, (char *)NULL);
        _exit(127);
    }
    int started = 0;
    if (stop) { /* wait (not timed: polled up to a bound) until the expected servers logged */
        for (int t = 0; t < 400 && started < expect; t++) {
            usleep(50000);
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "cat '%s'/*.log 2>/dev/null | grep -c '^GPUS' > '%s/n'", logs, dir);
            if (system(cmd) != 0) continue;
            char np[600];
            snprintf(np, sizeof np, "%s/n", dir);
            char *n = slurp(np);
            started = n ? atoi(n) : 0;
            free(n);
        }
        usleep(300000); /* let the router line start as well */
        kill(pid, SIGTERM);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (stop) CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
    else CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    /* Every fake server's pid: gone after the script (trap or normal end). */
    char cmd[1024], np[600];
    snprintf(cmd, sizeof cmd, "cat '%s'/*.log 2>/dev/null | grep '^GPUS' > '%s/pids'", logs, dir);
    CHECK(system(cmd) == 0);
    snprintf(np, sizeof np, "%s/pids", dir);
    char *all = slurp(np);
    started = 0;
    for (char *l = all; l && *l;) {
        char *pp = strstr(l, " PID ");
        if (!pp) break;
        int sp = atoi(pp + 5);
        started++;
        int alive = 0;
        for (int t = 0; t < 40 && (alive = kill(sp, 0) == 0); t++) usleep(50000);
        CHECK_MSG(!alive, "server pid %d still running after the script ended", sp);
        l = strchr(pp, '\n');
        if (l) l++;
    }
    free(all);
    return started;
}

/* The folder the scripts are written to and the scenario each case loads
 * (made by main). */
static char launch_dir[] = "/tmp/test_launch_XXXXXX";
static sim_scenario *launch_sc;

static void case_flag_table(void)
{
    /* The known-flag table: every program has a version and flags. */
    int nsets = 0;
    const sim_launch_flagset *fs = sim_launch_flagsets(&nsets);
    CHECK(nsets >= 9);
    for (int i = 0; i < nsets; i++) CHECK(fs[i].version[0] && fs[i].flags[0]);
    CHECK(sim_launch_flag_known("vllm serve", "--max-num-seqs") == 1);
    CHECK(sim_launch_flag_known("vllm serve", "--max-num-seq") == 0);
    CHECK(sim_launch_flag_known("nonsense", "--x") == -1);
}

static void case_pd(void)
{
    sim_scenario *sc = launch_sc;
    char *dir = launch_dir, *t[3];
    sim_err err = {{0}};
    /* PD: 12 prefill tp2 + 2 decode tp4 on 4 nodes of 8 H100s. */
    REQUIRE(sim_loader_load_string(pd_yaml, strlen(pd_yaml), "pd", NULL, 0, sc, &err) == 0);
    scripts(sc, dir, t);
    if (t[0]) {
        check_placement(t[0], 8, 14);
        CHECK(count(t[0], "VLLM_NIXL_SIDE_CHANNEL_PORT=") == 14);
        CHECK(count(t[0], "--kv-transfer-config") == 14);
        CHECK_CONTAINS(t[0], "toy_proxy_server.py");
        CHECK_CONTAINS(t[0], "--no-enable-prefix-caching");
        CHECK_CONTAINS(t[0], "needs 4 node(s) of 8 GPUs");
        CHECK_CONTAINS(t[0], "--max-num-seqs 128");
    }
    if (t[1]) {
        check_placement(t[1], 8, 14);
        CHECK(count(t[1], "--disaggregation-mode prefill") == 12);
        CHECK(count(t[1], "--disaggregation-mode decode") == 2);
        CHECK(count(t[1], "--disaggregation-bootstrap-port $((") == 12);
        CHECK(count(t[1], "--prefill \"http://") == 12);
        CHECK_CONTAINS(t[1], "--pd-disaggregation");
        CHECK_CONTAINS(t[1], "--decode-policy power_of_two");
        CHECK(count(t[1], "--enable-mixed-chunk") == 14); /* decode_first */
        CHECK(count(t[1], "--disable-radix-cache") == 14);
    }
    if (t[2]) {
        check_placement(t[2], 8, 14);
        CHECK(check_heredocs(t[2]) == 15);
        CHECK_CONTAINS(t[2], "trtllm-serve disaggregated -c");
        CHECK(count(t[2], "cache_transceiver_config:") == 14);
        CHECK(count(t[2], "disable_overlap_scheduler: true") == 12);
        CHECK_CONTAINS(t[2], "type: load_balancing");
    }
    for (int k = 0; k < 3; k++) free(t[k]);
    check_k8s_pd(sc, dir);
}

static void case_colocated(void)
{
    sim_scenario *sc = launch_sc;
    char *dir = launch_dir, *t[3];
    sim_err err = {{0}};
    /* Colocated, cache-aware (SGLang's rule), prefix caching on, prefill-first with reserve admission. */
    REQUIRE(sim_loader_load_string(colo_yaml, strlen(colo_yaml), "colo", NULL, 0, sc, &err) == 0);
    scripts(sc, dir, t);
    if (t[0]) {
        check_placement(t[0], 8, 4);
        CHECK_CONTAINS(t[0], "--enable-prefix-caching");
        CHECK(strstr(t[0], "VLLM_NIXL_SIDE_CHANNEL_PORT=") == NULL);
        CHECK_CONTAINS(t[0], "vLLM has no router of its own");
        CHECK_CONTAINS(t[0], "simulated prefill_first");
    }
    if (t[1]) {
        check_placement(t[1], 8, 4);
        CHECK(strstr(t[1], "--enable-mixed-chunk") == NULL);
        CHECK(strstr(t[1], "--disable-radix-cache") == NULL);
        CHECK_CONTAINS(t[1], "--policy cache_aware");
        CHECK_CONTAINS(t[1], "--chunked-prefill-size 1024");
        CHECK(count(t[1], "--worker-urls") == 1);
    }
    if (t[2]) {
        CHECK(check_heredocs(t[2]) == 4);
        CHECK(count(t[2], "enable_block_reuse: true") == 4);
        CHECK(count(t[2], "GUARANTEED_NO_EVICT") == 4);
        CHECK_CONTAINS(t[2], "chunks at --max_num_tokens");
    }
    /* Run vLLM's and SGLang's scripts against fake engines: four servers on distinct GPUs. */
    char sp[600];
    for (int k = 0; k < 2; k++) {
        snprintf(sp, sizeof sp, "%s/%s", dir, sim_launch_file_name((sim_launch_kind)k));
        int expect = 4 + (k == 1); /* SGLang: + the router */
        CHECK_MSG(run_fake(dir, sp, 1, 0, expect) == expect, "%s", sp);
        CHECK_MSG(run_fake(dir, sp, 60, 1, expect) == expect, "%s (stopped)", sp);
    }
    for (int k = 0; k < 3; k++) free(t[k]);
}

static void case_moe(void)
{
    sim_scenario *sc = launch_sc;
    char *dir = launch_dir, *t[3];
    sim_err err = {{0}};
    /* MoE with attention DP and EP, FP8 KV. */
    REQUIRE(sim_loader_load_string(moe_yaml, strlen(moe_yaml), "moe", NULL, 0, sc, &err) == 0);
    scripts(sc, dir, t);
    if (t[0]) {
        CHECK(count(t[0], "--data-parallel-size 8") == 2);
        CHECK(count(t[0], "--enable-expert-parallel") == 2);
        CHECK(count(t[0], "--kv-cache-dtype fp8") == 2);
        check_placement(t[0], 8, 2);
    }
    if (t[1]) {
        CHECK(count(t[1], "--tp-size 8") == 2);
        CHECK(count(t[1], "--enable-dp-attention") == 2);
        CHECK(count(t[1], "--ep-size 8") == 2);
    }
    if (t[2]) CHECK(count(t[2], "enable_attention_dp: true") == 2);
    for (int k = 0; k < 3; k++) free(t[k]);
}

static void case_multi_node(void)
{
    sim_scenario *sc = launch_sc;
    char *dir = launch_dir, *t[3];
    sim_err err = {{0}};
    /* An instance larger than a node: SGLang spans two nodes, vLLM and TensorRT-LLM refuse with the reason. */
    REQUIRE(sim_loader_load_string(big_yaml, strlen(big_yaml), "big", NULL, 0, sc, &err) == 0);
    scripts(sc, dir, t);
    if (t[1]) {
        CHECK(count(t[1], "--nnodes 2") == 2);
        CHECK_CONTAINS(t[1], "--node-rank 1");
        CHECK_CONTAINS(t[1], "--dist-init-addr");
    }
    for (int k = 0; k < 3; k += 2)
        if (t[k]) {
            CHECK_CONTAINS(t[k], "multi-node");
            CHECK_CONTAINS(t[k], "exit 2");
        }
    for (int k = 0; k < 3; k++) free(t[k]);
}

/* A model name holding a newline, quotes, a backslash, a tab and a control
 * character reads back unchanged from the Dynamo and llm-d YAML (the header
 * comment naming it stays one line). */
static void case_k8s_quoting(void)
{
    sim_scenario *sc = launch_sc;
    sim_err err = {{0}};
    static const char odd[] = "org/we\"ird\\name\nline: 2\t#x\x01\"";
    REQUIRE(sim_loader_load_string(pd_yaml, strlen(pd_yaml), "pd", NULL, 0, sc, &err) == 0);
    snprintf(sc->model, sizeof sc->model, "%s", odd);
    yaml_document_t d;
    char *p = write_kind(sc, SIM_LAUNCH_LLMD, launch_dir);
    if (p && yload(p, &d)) {
        CHECK_MSG(strcmp(yscalar(&d, "modelArtifacts.name"), odd) == 0, "name reads back as '%s'",
                  yscalar(&d, "modelArtifacts.name"));
        CHECK(strcmp(yscalar(&d, "modelArtifacts.uri"), "hf://org/we\"ird\\name\nline: 2\t#x\x01\"") == 0);
        yaml_document_delete(&d);
    }
    p = write_kind(sc, SIM_LAUNCH_DYNAMO, launch_dir);
    if (p && yload(p, &d)) {
        CHECK(strcmp(yscalar(&d, "spec.components.1.podTemplate.spec.containers.0.args.0"), "--model") == 0);
        CHECK(strcmp(yscalar(&d, "spec.components.1.podTemplate.spec.containers.0.args.1"), odd) == 0);
        yaml_document_delete(&d);
    }
}

static const test_case cases[] = {
    {"flag_table", case_flag_table},
    {"pd", case_pd},
    {"colocated", case_colocated},
    {"moe", case_moe},
    {"multi_node", case_multi_node},
    {"k8s_quoting", case_k8s_quoting},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    REQUIRE_OR(mkdtemp(launch_dir) != NULL, return test_finish("test_launch"));
    launch_sc = malloc(sizeof *launch_sc);
    REQUIRE_OR(launch_sc != NULL, return test_finish("test_launch"));
    int rc = test_run("test_launch", cases);
    free(launch_sc);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", launch_dir);
    CHECK(system(cmd) == 0);
    return test_failures ? 1 : rc; /* the clean-up's check counts too */
}
