/* model_op_cli — see model_op_cli.h. */
#include "model_op_cli.h"

#include "model_op_table.h"
#include "sim_json.h"
#include "sim_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

static const char *usage_op =
    "usage: servesim op OP --gpu G [--dtype D] [--kv-dtype D] [--gemm-type D] [--variant V]\n"
    "                  [--backend B] FIELD=VALUE ... [--json]\n"
    "       servesim op --csv FILE --gpu G [--backend B] [--params-gpu T] [-o OUT]\n"
    "       servesim op --score ROOT [--gpu T] [--params-gpu T]\n"
    "       servesim op --fit ROOT [--gpu T] [--write FILE]\n"
    "       servesim op --params [--gpu T]\n"
    "\n"
    "The latency of one op as servesim's analytic op model prices it (docs/cost-model.md).\n"
    "OP: gemm, context_attention, generation_attention, mla_context, mla_generation,\n"
    "    mla_context_module, mla_generation_module, mla_bmm, moe, nccl, custom_allreduce,\n"
    "    quantize, gdn, dsa_context_module, dsa_generation_module.\n"
    "FIELDs are the shared per-op tables' columns: m n k (gemm, quantize); batch_size isl step\n"
    "num_heads num_key_value_heads head_dim window_size (attention; generation context = isl+step);\n"
    "num_tokens hidden_size inter_size topk num_experts moe_tp_size moe_ep_size (moe);\n"
    "num_tokens num_heads (mla_bmm, --variant mla_gen_pre|mla_gen_post); num_gpus message_size\n"
    "(collectives: elements of --dtype; nccl --variant all_reduce|all_gather|reduce_scatter|alltoall,\n"
    "custom_allreduce --variant graph|eager; gemm --variant cutlass|flashinfer: vLLM's block-fp8\n"
    "kernels other than DeepGEMM); batch_size num_tokens seq_len num_k_heads head_k_dim\n"
    "num_v_heads head_v_dim d_conv (gdn, --variant conv|delta, --phase context|generation);\n"
    "batch_size isl step num_heads (dsa modules: DeepSeek-V3.2, heads per TP rank; --kv-dtype,\n"
    "--gemm-type; --variant attention|indexer prices that part alone, dense the dense MHA path).\n"
    "--dtype as the tables spell it: bfloat16 fp8 fp8_block nvfp4 w4a16_mxfp4 int4_wo ...\n"
    "--backend trtllm|vllm|sglang picks that engine's fitted kernels (default: the set fitted on\n"
    "most rows). Parameters are those fitted on the tables of the GPU's architecture (h100_sxm,\n"
    "b200_sxm, a100_sxm); --params-gpu uses another's.\n"
    "--csv reads a table in the shared column layout and writes it back (stdout or -o) with\n"
    "predicted_ms and source added; rows servesim does not model get an empty predicted_ms.\n"
    "--score prints median/p90/bias of predicted/measured - 1 per GPU, family and backend over\n"
    "every table under ROOT (e.g. ../shared/validation/ops); the rows of a set serving does not price\n"
    "with (its table host-bound, or timed outside the engine's autotuning) are scored apart, in a\n"
    "table of their own, judged by the table GPU's own set whatever --params-gpu. --fit refits\n"
    "every op variant's parameters (GSL nonlinear least squares) and writes them as C (default\n"
    "stdout). --params lists the fitted sets (Markdown: GPU, backend, variant, each parameter with\n"
    "its unit, rows, error).\n"
    "An op's latency is the GPU time serving pays (CUDA graphs); a table row is priced as its eager\n"
    "timing loop measured it, at least the set's host time a call (GEMM host_us; printed beside).\n";

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

typedef struct {
    const char *op, *gpu, *dtype, *kv_dtype, *gemm_type, *variant, *phase, *distribution, *backend;
    const char *csv, *score, *fit, *out, *write, *params_gpu;
    int json, params;
    const char *fields[MODEL_OPF_COUNT];
} op_args;

static int parse_args(int argc, char **argv, op_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (!strcmp(s, "--gpu")) dst = &a->gpu;
        else if (!strcmp(s, "--dtype")) dst = &a->dtype;
        else if (!strcmp(s, "--kv-dtype")) dst = &a->kv_dtype;
        else if (!strcmp(s, "--gemm-type")) dst = &a->gemm_type;
        else if (!strcmp(s, "--variant")) dst = &a->variant;
        else if (!strcmp(s, "--phase")) dst = &a->phase;
        else if (!strcmp(s, "--distribution")) dst = &a->distribution;
        else if (!strcmp(s, "--backend")) dst = &a->backend;
        else if (!strcmp(s, "--csv")) dst = &a->csv;
        else if (!strcmp(s, "--score")) dst = &a->score;
        else if (!strcmp(s, "--fit")) dst = &a->fit;
        else if (!strcmp(s, "-o") || !strcmp(s, "--out")) dst = &a->out;
        else if (!strcmp(s, "--write")) dst = &a->write;
        else if (!strcmp(s, "--params-gpu")) dst = &a->params_gpu;
        else if (!strcmp(s, "--json")) {
            a->json = 1;
            continue;
        } else if (!strcmp(s, "--params")) {
            a->params = 1;
            continue;
        } else if (s[0] == '-') {
            fprintf(stderr, "servesim op: unknown option '%s'\n", s);
            return EXIT_USAGE;
        } else if (strchr(s, '=')) {
            size_t len = (size_t)(strchr(s, '=') - s);
            int f = -1;
            for (int j = 0; j < MODEL_OPF_COUNT; j++) {
                const char *nm = model_op_field_name((model_op_field)j);
                if (strlen(nm) == len && !strncmp(nm, s, len)) f = j;
            }
            if (f < 0) {
                fprintf(stderr, "servesim op: unknown field '%.*s' (expected one of the tables' columns: m, n, k, "
                                "batch_size, isl, ...; see --help)\n",
                        (int)len, s);
                return EXIT_USAGE;
            }
            a->fields[f] = s + len + 1;
            continue;
        } else if (!a->op) {
            a->op = s;
            continue;
        } else {
            fprintf(stderr, "servesim op: unexpected argument '%s'\n", s);
            return EXIT_USAGE;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "servesim op: %s needs a value\n", s);
            return EXIT_USAGE;
        }
        *dst = argv[++i];
    }
    return 0;
}

/* Catalogue GPU for a name (aliases such as h100_sxm resolve there). */
static int gpu_of(const char *name, model_gpu *g)
{
    sim_err err = {0};
    if (model_catalog_gpu(name, g, &err)) {
        fprintf(stderr, "servesim op: %s\n", err.msg);
        return EXIT_USAGE;
    }
    return 0;
}

/* Parameters for q on g: the backend's set, else any backend's, of the
 * table GPU (params_gpu or g's architecture). */
static const model_op_paramset *params_for(const model_gpu *g, const char *params_gpu, const char *backend,
                                           model_op_query *q)
{
    if (q->kind == MODEL_OPK_MOE) {
        /* The kernel named, else the architecture's order (model_op_lookup_moe). */
        char named[MODEL_OP_STR];
        snprintf(named, sizeof named, "%s", q->variant);
        const model_op_paramset *s = model_op_lookup_moe(g, params_gpu, backend, q);
        if (!s && backend && *backend) {
            snprintf(q->variant, sizeof q->variant, "%s", named);
            s = model_op_lookup_moe(g, params_gpu, NULL, q);
        }
        return s;
    }
    char v[64];
    model_op_variant(q, v, sizeof v);
    const char *tg = params_gpu ? params_gpu : model_op_table_gpu(g);
    const model_op_paramset *s = model_op_lookup_gpu(tg, backend, v);
    if (!s && backend && *backend) s = model_op_lookup_gpu(tg, NULL, v);
    return s;
}

static void fmt_source(char *buf, size_t cap, const model_op_paramset *s)
{
    snprintf(buf, cap, "fit:%s/%s/%s", s->gpu, s->backend, s->variant);
}

/* ---- single op -------------------------------------------------------- */

static int run_single(const op_args *a)
{
    if (!a->gpu) {
        fprintf(stderr, "servesim op: --gpu is required\n");
        return EXIT_USAGE;
    }
    int kind = model_op_kind_from_name(a->op);
    if (kind < 0) {
        fprintf(stderr, "servesim op: unknown op '%s' (see servesim op --help)\n", a->op);
        return EXIT_USAGE;
    }
    model_gpu g;
    if (gpu_of(a->gpu, &g)) return EXIT_USAGE;
    model_op_query q;
    memset(&q, 0, sizeof q);
    q.kind = (model_op_kind)kind;
    for (int f = 0; f < MODEL_OPF_COUNT; f++) {
        if (!a->fields[f]) continue;
        if (sim_parse_double(a->fields[f], &q.f[f]) != SIM_PARSE_OK || q.f[f] < 0) {
            fprintf(stderr, "servesim op: %s=%s: expected a number >= 0\n", model_op_field_name((model_op_field)f),
                    a->fields[f]);
            return EXIT_USAGE;
        }
    }
    snprintf(q.dtype, sizeof q.dtype, "%s", a->dtype ? a->dtype : "bfloat16");
    snprintf(q.kv_dtype, sizeof q.kv_dtype, "%s", a->kv_dtype ? a->kv_dtype : "bfloat16");
    snprintf(q.gemm_type, sizeof q.gemm_type, "%s", a->gemm_type ? a->gemm_type : "bfloat16");
    snprintf(q.phase, sizeof q.phase, "%s", a->phase ? a->phase : "context");
    snprintf(q.distribution, sizeof q.distribution, "%s", a->distribution ? a->distribution : "balanced");
    const char *dv = "";
    if (kind == MODEL_OPK_NCCL) dv = "all_reduce";
    else if (kind == MODEL_OPK_CUSTOM_AR) dv = "graph";
    else if (kind == MODEL_OPK_MLA_BMM) dv = "mla_gen_pre";
    else if (kind == MODEL_OPK_QUANT) dv = "scale_matrix";
    else if (kind == MODEL_OPK_GDN) dv = "delta";
    snprintf(q.variant, sizeof q.variant, "%s", a->variant ? a->variant : dv);
    const char *backend = kind == MODEL_OPK_NCCL ? "nccl" : a->backend;
    const model_op_paramset *ps = params_for(&g, a->params_gpu, backend, &q);
    char v[64];
    model_op_variant(&q, v, sizeof v);
    if (!ps) {
        fprintf(stderr,
                "servesim op: no fitted parameters for %s on %s (table GPU %s): the per-op tables have no rows of "
                "that variant\n",
                v, g.name, a->params_gpu ? a->params_gpu : model_op_table_gpu(&g) ? model_op_table_gpu(&g) : "none");
        return EXIT_FAIL;
    }
    /* Serving prices a variant whose table it does not run (host-bound,
     * untuned) with another engine's set (model_op_serving_of); the table
     * timing is the backend's own set's. */
    const model_op_paramset *sv = model_op_serving_of(ps);
    sim_err err = {0};
    double t = model_op_time(&g, &q, sv->p, &err);
    if (!(t > 0)) {
        fprintf(stderr, "servesim op: %s\n", err.msg);
        return EXIT_USAGE;
    }
    char src[192];
    fmt_source(src, sizeof src, sv);
    if (sv != ps) {
        size_t n = strlen(src);
        snprintf(src + n, sizeof src - n, "; %s's table is %s", ps->backend, model_op_set_not_served(ps));
    }
    model_op_query qt = q;
    qt.table_timing = 1;
    double tt = model_op_time(&g, &qt, ps->p, NULL);
    if (a->json) {
        printf("{\"op\": \"%s\", \"gpu\": ", model_op_kind_name(q.kind));
        sim_json_string(stdout, g.name);
        fputs(", \"variant\": ", stdout);
        sim_json_string(stdout, v);
        sim_json_real(stdout, ", \"latency_ms\": ", t * 1e3, 6);
        sim_json_real(stdout, ", \"latency_us\": ", t * 1e6, 6);
        sim_json_real(stdout, ", \"table_latency_us\": ", (tt > t ? tt : t) * 1e6, 6);
        fputs(", \"source\": ", stdout);
        sim_json_string(stdout, src);
        fputs(", \"params\": {", stdout);
        const model_op_param_info *pi = model_op_params_of(q.kind);
        for (int i = 0; i < model_op_param_count(q.kind); i++) {
            printf("%s\"%s\": ", i ? ", " : "", pi[i].name);
            sim_json_real(stdout, NULL, sv->p[i], 6);
        }
        printf("}}\n");
    } else {
        printf("%s on %s: %.3f us  (%s)\n", v, g.name, t * 1e6, src);
        if (tt > t)
            printf("  as the per-op tables time it (an eager loop, the set's host time a call): %.3f us\n", tt * 1e6);
    }
    return 0;
}

/* ---- --csv ------------------------------------------------------------ */

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* The table's header, with predicted_ms and source appended when absent. */
static void csv_write_header(FILE *out, const calib_optable *t)
{
    size_t nc = calib_optable_ncols(t);
    for (size_t i = 0; i < nc; i++) {
        if (i) fputc(',', out);
        csv_field(out, calib_optable_colname(t, i));
    }
    if (!calib_optable_has(t, "predicted_ms")) fputs(",predicted_ms", out);
    if (!calib_optable_has(t, "source")) fputs(",source", out);
    fputc('\n', out);
}

/* Prices the table's current row into pred (ms, "" when not priced) and
 * src (the fitted set, or "none: " and why). Returns 1 when priced, 0 when
 * not, < 0 on a table error (err set). */
static int csv_price_row(const op_args *a, const model_gpu *g, calib_optable *t, model_op_geometry_cache *geo,
                         char *pred, size_t pcap, char *src, size_t scap, sim_err *err)
{
    model_op_query q;
    double meas;
    const char *why = "op not modelled";
    int rc = model_op_from_row_cached(t, geo, &q, &meas, &why, err);
    if (rc < 0) return rc;
    if (rc == 0) {
        snprintf(src, scap, "none: %s", why);
        return 0;
    }
    const char *be = model_op_row_backend(t, &q, a->backend);
    model_op_query own_q = q;
    const model_op_paramset *ps = params_for(g, a->params_gpu, be, &q);
    if (!ps) {
        snprintf(src, scap, "none: no fitted parameters for this variant");
        return 0;
    }
    double p[MODEL_OP_MAX_PARAMS];
    memcpy(p, ps->p, sizeof p);
    if (a->params_gpu) model_op_table_method(q.kind, params_for(g, NULL, be, &own_q), p);
    sim_err e2 = {0};
    double tt = model_op_time(g, &q, p, &e2);
    if (!(tt > 0)) {
        snprintf(src, scap, "none: %.120s", e2.msg);
        return 0;
    }
    snprintf(pred, pcap, "%.6g", tt * 1e3);
    fmt_source(src, scap, ps);
    return 1;
}

/* The current row written back with pred and src in their columns (or appended). */
static void csv_write_row(FILE *out, const calib_optable *t, const char *pred, const char *src)
{
    size_t nc = calib_optable_ncols(t);
    int pc = calib_optable_col(t, "predicted_ms"), sc = calib_optable_col(t, "source");
    for (size_t i = 0; i < nc; i++) {
        if (i) fputc(',', out);
        if ((int)i == pc) csv_field(out, pred);
        else if ((int)i == sc) csv_field(out, src);
        else csv_field(out, calib_optable_field(t, i));
    }
    if (pc < 0) {
        fputc(',', out);
        csv_field(out, pred);
    }
    if (sc < 0) {
        fputc(',', out);
        csv_field(out, src);
    }
    fputc('\n', out);
}

/* Closes the output: with -o, the temporary file renamed over it on
 * success or removed on failure. Returns the exit code. */
static int csv_finish(const op_args *a, FILE *out, const char *tmp, int code)
{
    if (!a->out) {
        fflush(stdout);
        return code;
    }
    if (fclose(out) != 0 && !code) {
        fprintf(stderr, "servesim op: writing %s failed\n", tmp);
        code = EXIT_FAIL;
    }
    if (code) remove(tmp);
    else if (rename(tmp, a->out)) {
        fprintf(stderr, "servesim op: cannot rename %s to %s: %s\n", tmp, a->out, strerror(errno));
        remove(tmp);
        code = EXIT_FAIL;
    }
    return code;
}

static int run_csv(const op_args *a)
{
    if (!a->gpu) {
        fprintf(stderr, "servesim op: --csv needs --gpu (the GPU the table was measured on)\n");
        return EXIT_USAGE;
    }
    model_gpu g;
    if (gpu_of(a->gpu, &g)) return EXIT_USAGE;
    sim_err err = {0};
    calib_optable *t = NULL;
    if (calib_optable_open(a->csv, &t, &err)) {
        fprintf(stderr, "servesim op: %s\n", err.msg);
        return EXIT_USAGE;
    }
    /* Write to a temporary file and rename, so a failure leaves no half table. */
    char tmp[4096] = "";
    FILE *out = stdout;
    if (a->out) {
        snprintf(tmp, sizeof tmp, "%s.tmp", a->out);
        out = fopen(tmp, "w");
        if (!out) {
            fprintf(stderr, "servesim op: cannot write %s: %s\n", tmp, strerror(errno));
            calib_optable_close(t);
            return EXIT_FAIL;
        }
    }
    csv_write_header(out, t);
    int rc, code = 0;
    size_t rows = 0, priced = 0;
    model_op_geometry_cache geo;
    memset(&geo, 0, sizeof geo);
    while ((rc = calib_optable_next(t, &err)) > 0) {
        char pred[64] = "", src[160] = "";
        rc = csv_price_row(a, &g, t, &geo, pred, sizeof pred, src, sizeof src, &err);
        if (rc < 0) break;
        priced += rc > 0;
        rows++;
        csv_write_row(out, t, pred, src);
    }
    calib_optable_close(t);
    if (rc < 0) {
        fprintf(stderr, "servesim op: %s\n", err.msg);
        code = EXIT_USAGE;
    }
    code = csv_finish(a, out, tmp, code);
    if (!code) fprintf(stderr, "servesim op: %zu rows, %zu priced\n", rows, priced);
    return code;
}

/* ---- --score / --fit over a tree ------------------------------------- */

typedef struct {
    char key[160];
    double *e;
    size_t n, cap;
} err_acc;

typedef struct {
    err_acc *a;
    size_t n, cap;
} err_accs;

static int acc_add(err_accs *as, const char *key, double e)
{
    err_acc *x = NULL;
    for (size_t i = 0; i < as->n; i++)
        if (!strcmp(as->a[i].key, key)) x = &as->a[i];
    if (!x) {
        if (as->n == as->cap) {
            size_t cap = as->cap ? as->cap * 2 : 16;
            err_acc *p = realloc(as->a, cap * sizeof *p);
            if (!p) return -1;
            as->a = p;
            as->cap = cap;
        }
        x = &as->a[as->n++];
        memset(x, 0, sizeof *x);
        snprintf(x->key, sizeof x->key, "%s", key);
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        double *p = realloc(x->e, cap * sizeof *p);
        if (!p) return -1;
        x->e = p;
        x->cap = cap;
    }
    x->e[x->n++] = e;
    return 0;
}

static void accs_free(err_accs *as)
{
    for (size_t i = 0; i < as->n; i++) free(as->a[i].e);
    free(as->a);
}

static void accs_print(const err_accs *as, const char *title)
{
    printf("\n| %s | rows | median | p90 | bias |\n|---|---|---|---|---|\n", title);
    for (size_t i = 0; i < as->n; i++) {
        double md, p90, b;
        if (model_op_err_stats(as->a[i].e, as->a[i].n, &md, &p90, &b)) continue;
        printf("| %s | %zu | %.1f %% | %.1f %% | %+.1f %% |\n", as->a[i].key, as->a[i].n, 100 * md, 100 * p90,
               100 * b);
    }
}

/* A quantise set fitted before the GEMM sets that hold its terms
 * (model_op_gemm_quant_held); the main pass writes it as fitted here. */
typedef struct {
    char gpu[64], backend[64], variant[64];
    double p[MODEL_OP_MAX_PARAMS];
    model_op_fit_stats st;
} quant_fit;

#define QUANT_FITS_MAX 32

typedef struct {
    const op_args *a;
    int fit;
    FILE *w;                       /* --fit: generated C */
    quant_fit quant[QUANT_FITS_MAX]; /* --fit: the quantise sets, fitted first */
    int n_quant;
    size_t sets;
    err_accs by_table, by_family;  /* gpu family backend / gpu family: the rows serving prices so */
    err_accs apart;                /* gpu family backend variant why: rows of sets serving does not run
                                      (model_op_set_not_served), scored apart */
    size_t unpriced, skipped;
} tree_ctx;

/* --fit's first pass: the quantise tables' sets, kept for the GEMM sets
 * whose quantisation they measure. */
static int visit_quant(const calib_optable_entry *e, void *vctx, sim_err *err)
{
    tree_ctx *c = vctx;
    if (strcmp(e->family, "quantize")) return 0;
    model_gpu g;
    if (model_catalog_gpu(e->gpu, &g, err)) return sim_err_wrap(err, SIM_EINVAL, "%s", e->path);
    model_op_groups gs;
    int rc = model_op_groups_read(e->path, &gs, err);
    if (rc) return rc;
    for (size_t i = 0; i < gs.n && !rc; i++) {
        model_op_group *gr = &gs.g[i];
        if (gr->n < (size_t)(4 * model_op_param_count(gr->s[0].q.kind))) continue;
        if (c->n_quant == QUANT_FITS_MAX) {
            rc = sim_err_set(err, SIM_ENOMEM, "more than %d quantise sets", QUANT_FITS_MAX);
            break;
        }
        quant_fit *q = &c->quant[c->n_quant];
        memset(q, 0, sizeof *q);
        rc = model_op_fit(&g, gr->s, gr->n, 6000, q->p, &q->st, err);
        if (rc) {
            rc = sim_err_wrap(err, rc, "%s: %s", e->path, gr->variant);
            break;
        }
        snprintf(q->gpu, sizeof q->gpu, "%s", e->gpu);
        snprintf(q->backend, sizeof q->backend, "%s", e->backend);
        snprintf(q->variant, sizeof q->variant, "%s", gr->variant);
        c->n_quant++;
    }
    model_op_groups_free(&gs);
    return rc;
}

static const quant_fit *quant_find(const tree_ctx *c, const char *gpu, const char *backend, const char *variant)
{
    for (int i = 0; i < c->n_quant; i++)
        if (!strcmp(c->quant[i].gpu, gpu) && !strcmp(c->quant[i].backend, backend) &&
            !strcmp(c->quant[i].variant, variant))
            return &c->quant[i];
    return NULL;
}

/* --fit of one group: a quantise set the first pass fitted is taken as it
 * is; a GEMM set whose quantisation the engine's quantise tables measure
 * holds those terms (model_op_gemm_quant_held); parameters the variant does
 * not read are held at 0 (model_op_params_unused). */
static int fit_group(const tree_ctx *c, const calib_optable_entry *e, const char *backend, const model_gpu *g,
                     const model_op_group *gr, double *p, model_op_fit_stats *st, sim_err *err)
{
    const quant_fit *done = quant_find(c, e->gpu, backend, gr->variant);
    if (done) {
        memcpy(p, done->p, sizeof done->p);
        *st = done->st;
        return 0;
    }
    uint32_t held = model_op_params_unused(&gr->s[0].q);
    for (int i = 0; i < MODEL_OP_MAX_PARAMS; i++)
        if (held >> i & 1u) p[i] = 0;
    uint32_t qheld = 0;
    if (model_op_gemm_quant_held(backend, gr->variant)) {
        const quant_fit *cs = quant_find(c, e->gpu, backend, "quantize:compute_scale");
        const quant_fit *sm = quant_find(c, e->gpu, backend, "quantize:scale_matrix");
        if (cs && sm) qheld = model_op_gemm_quant_set(cs->p, sm->p, p);
    }
    int rc = model_op_fit_held(g, gr->s, gr->n, 6000, p, held | qheld, st, err);
    const model_op_param_info *info = model_op_params_of(gr->s[0].q.kind);
    for (int i = 0; !rc && qheld && i < model_op_param_count(gr->s[0].q.kind); i++)
        if (qheld >> i & 1u)
            fprintf(stderr, "%s %s %s: %s held at the quantise tables' %.4g %s\n", e->gpu, backend, gr->variant,
                    info[i].name, p[i], info[i].unit);
    return rc;
}

/* Why serving does not run the kernel a table group times (NULL: it
 * does): the table GPU's own set of the variant is one serving does not
 * price with (model_op_set_not_served) — under --fit the set just fitted
 * (p), else the one stored. Judged by the table's own set whatever
 * --params-gpu prices it with, so that in-sample and cross-GPU scores
 * leave out the same rows. */
static const char *table_not_served(const tree_ctx *c, const calib_optable_entry *e, const char *backend,
                                    const char *variant, const double *p)
{
    if (!c->fit) return model_op_set_not_served(model_op_lookup_gpu(e->gpu, backend, variant));
    model_op_paramset s = {e->gpu, backend, variant, {0}, 0, 0, 0};
    memcpy(s.p, p, sizeof s.p);
    return model_op_set_not_served(&s);
}

static int visit(const calib_optable_entry *e, void *vctx, sim_err *err)
{
    tree_ctx *c = vctx;
    model_gpu g;
    if (model_catalog_gpu(e->gpu, &g, err)) return sim_err_wrap(err, SIM_EINVAL, "%s", e->path);
    model_op_groups gs;
    int rc = model_op_groups_read(e->path, &gs, err);
    if (rc) return rc;
    c->skipped += gs.skipped_unmodelled + gs.skipped_zero;
    const char *backend = !strcmp(e->family, "comm") && !strcmp(e->backend, "nccl") ? "nccl" : e->backend;
    for (size_t i = 0; i < gs.n && !rc; i++) {
        model_op_group *gr = &gs.g[i];
        double p[MODEL_OP_MAX_PARAMS] = {0};
        const model_op_paramset *ps = NULL;
        if (c->fit && gr->n < (size_t)(4 * model_op_param_count(gr->s[0].q.kind))) {
            fprintf(stderr, "%s %s %s: %zu rows, too few to fit; not priced\n", e->gpu, backend, gr->variant,
                    gr->n);
            c->unpriced += gr->n;
            continue;
        }
        if (c->fit) {
            model_op_fit_stats st;
            rc = fit_group(c, e, backend, &g, gr, p, &st, err);
            if (rc) {
                rc = sim_err_wrap(err, rc, "%s: %s", e->path, gr->variant);
                break;
            }
            int np = model_op_param_count(gr->s[0].q.kind);
            fprintf(c->w, "    {\"%s\", \"%s\", \"%s\", {", e->gpu, backend, gr->variant);
            for (int j = 0; j < np; j++) fprintf(c->w, "%s%.6g", j ? ", " : "", p[j]);
            fprintf(c->w, "}, %zu, %.4f, %.4f},\n", gr->n, st.median, st.p90);
            c->sets++;
            fprintf(stderr, "%s %s %s: %zu rows, median %.1f %% p90 %.1f %% bias %+.1f %% (%d iterations)\n", e->gpu,
                    backend, gr->variant, gr->n, 100 * st.median, 100 * st.p90, 100 * st.bias, st.iterations);
        } else {
            const char *tg = c->a->params_gpu ? c->a->params_gpu : e->gpu;
            ps = model_op_lookup_gpu(tg, backend, gr->variant);
            if (!ps) {
                c->unpriced += gr->n;
                continue;
            }
            memcpy(p, ps->p, sizeof p);
            if (c->a->params_gpu)
                model_op_table_method(gr->s[0].q.kind, model_op_lookup_gpu(e->gpu, backend, gr->variant), p);
        }
        const char *why = table_not_served(c, e, backend, gr->variant, p);
        char k1[160], k2[160];
        if (why) snprintf(k1, sizeof k1, "%s | %s | %s | %s | %s", e->gpu, e->family, backend, gr->variant, why);
        else snprintf(k1, sizeof k1, "%s | %s | %s", e->gpu, e->family, backend);
        snprintf(k2, sizeof k2, "%s | %s", e->gpu, e->family);
        for (size_t j = 0; j < gr->n; j++) {
            double t = model_op_time(&g, &gr->s[j].q, p, NULL);
            if (!(t > 0)) {
                c->unpriced++;
                continue;
            }
            double er = t / gr->s[j].t - 1;
            if (why ? acc_add(&c->apart, k1, er) : acc_add(&c->by_table, k1, er) || acc_add(&c->by_family, k2, er)) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
        }
    }
    model_op_groups_free(&gs);
    return rc;
}

static int run_tree(const op_args *a, int fit)
{
    tree_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.fit = fit;
    char tmp[4096] = "";
    const char *root = fit ? a->fit : a->score;
    struct stat rs;
    if (stat(root, &rs) != 0 || !S_ISDIR(rs.st_mode)) {
        fprintf(stderr, "servesim op: %s: %s; expected a folder of op tables\n", root,
                stat(root, &rs) != 0 ? strerror(errno) : "not a directory");
        return EXIT_USAGE;
    }
    if (fit) {
        c.w = stdout;
        if (a->write) {
            snprintf(tmp, sizeof tmp, "%s.tmp", a->write);
            c.w = fopen(tmp, "w");
            if (!c.w) {
                fprintf(stderr, "servesim op: cannot write %s: %s\n", tmp, strerror(errno));
                return EXIT_FAIL;
            }
        }
        fprintf(c.w,
                "/* model_op_params — fitted parameters of the analytic op model (model_op.h), one set per\n"
                " * (table GPU, backend, op variant). Generated by\n"
                " *   servesim op --fit %s%s%s --write models/cost/model_op_params.c\n"
                " * from the shared per-op tables; do not edit by hand. Columns: gpu, backend, variant,\n"
                " * parameters in model_op_param_info order, rows fitted, in-sample median and p90 |error|. */\n"
                "#include \"model_op.h\"\n\nconst model_op_paramset model_op_fitted[] = {\n",
                a->fit, a->gpu ? " --gpu " : "", a->gpu ? a->gpu : "");
    }
    sim_err err = {0};
    size_t n_tables = 0;
    int rc = fit ? calib_optable_walk(a->fit, a->gpu, visit_quant, &c, NULL, &err) : 0;
    if (!rc) rc = calib_optable_walk(fit ? a->fit : a->score, a->gpu, visit, &c, &n_tables, &err);
    if (fit) {
        fprintf(c.w, "};\nconst int32_t model_op_fitted_count = (int32_t)(sizeof model_op_fitted / sizeof "
                     "model_op_fitted[0]);\n");
        if (a->write) {
            int bad = fclose(c.w) != 0;
            if (rc || bad || rename(tmp, a->write)) {
                if (!rc) fprintf(stderr, "servesim op: cannot write %s\n", a->write);
                remove(tmp);
                if (!rc) rc = SIM_EIO;
            }
        }
    }
    if (rc) {
        fprintf(stderr, "servesim op: %s\n", err.msg);
        accs_free(&c.by_table), accs_free(&c.by_family), accs_free(&c.apart);
        return rc == SIM_EINVAL ? EXIT_USAGE : EXIT_FAIL;
    }
    FILE *keep = stdout;
    if (fit && !a->write) fflush(stdout);
    (void)keep;
    if (!fit || a->write) {
        printf("%zu tables; %zu rows skipped (op not modelled or no latency), %zu rows without fitted parameters%s%s\n",
               n_tables, c.skipped, c.unpriced, a->params_gpu ? "; parameters of " : "",
               a->params_gpu ? a->params_gpu : "");
        accs_print(&c.by_family, "GPU | family");
        accs_print(&c.by_table, "GPU | family | backend");
        if (c.apart.n) {
            printf("\nScored apart and left out of the tables above: the rows of sets serving does not price with "
                   "(host-bound: the table's eager loop timed the op's host wrapper, not its kernels; timed outside "
                   "the engine's kernel autotuning: a kernel serving does not run). The cost model prices those "
                   "variants with another engine's set of the same GPU (model_op_serving_of).\n");
            accs_print(&c.apart, "GPU | family | backend | variant | not served");
        }
    }
    accs_free(&c.by_table), accs_free(&c.by_family), accs_free(&c.apart);
    return 0;
}

static int run_params(const op_args *a)
{
    printf("| GPU | backend | variant | parameters | rows | median | p90 |\n|---|---|---|---|---|---|---|\n");
    for (int32_t i = 0; i < model_op_fitted_count; i++) {
        const model_op_paramset *s = &model_op_fitted[i];
        if (a->gpu && strcmp(a->gpu, s->gpu)) continue;
        char kind[64];
        snprintf(kind, sizeof kind, "%s", s->variant);
        char *colon = strchr(kind, ':');
        if (colon) *colon = 0;
        int k = model_op_kind_from_name(kind);
        if (k < 0) continue;
        const model_op_param_info *pi = model_op_params_of((model_op_kind)k);
        printf("| %s | %s | %s | ", s->gpu, s->backend, s->variant);
        /* A term the set predates (0 where 0 leaves it out) is not listed. */
        for (int j = 0; j < model_op_param_count((model_op_kind)k); j++)
            if (!(pi[j].off && s->p[j] == 0)) printf("%s%s %.3g %s", j ? ", " : "", pi[j].name, s->p[j], pi[j].unit);
        printf(" | %d | %.1f %% | %.1f %% |\n", s->rows, 100 * s->median_err, 100 * s->p90_err);
    }
    return 0;
}

int model_cli_op(int argc, char **argv)
{
    if (argc >= 2 && is_help(argv[1])) {
        fputs(usage_op, stdout);
        return 0;
    }
    op_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    int modes = !!a.csv + !!a.score + !!a.fit + !!a.op + a.params;
    if (modes != 1) {
        fprintf(stderr, "servesim op: give exactly one of OP, --csv, --score, --fit, --params\n%s", usage_op);
        return EXIT_USAGE;
    }
    if (a.csv) return run_csv(&a);
    if (a.score) return run_tree(&a, 0);
    if (a.fit) return run_tree(&a, 1);
    if (a.params) return run_params(&a);
    return run_single(&a);
}
