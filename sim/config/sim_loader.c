/* sim_loader — see sim_loader.h.
 *
 * Pipeline: libyaml → sim_yaml tree (syntax, duplicate keys) → `--set`
 * overrides spliced into the tree (so they get exactly the checks the file
 * gets) → one walk over the tree driven by the sim_schema table (unknown
 * keys, types, ranges, conversion into a private copy of the scenario) →
 * cross-field checks → copy out. `out` is only written on success. */
#include "sim_loader.h"
#include "sim_file.h"
#include "sim_parse.h"
#include "sim_sched_preset.h"

#include "sim_schema.h"
#include "sim_yaml.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PATH_BUF 512
#define KEY_MAX 100 /* longer keys cannot be schema keys; keeps key paths bounded */

typedef struct {
    sim_scenario *sc;
    sim_err *err;
    const char *dir;     /* scenario file's folder; "" = leave relative paths as they are */
    sim_yaml_node *root;
    size_t base_items;   /* overlay: items of the base's deployment.pools (0 = no base) */
    size_t base_classes; /* overlay: items of the base's workload.classes */
} ctx;

/* ---- messages ---- */

/* True when `origin` is the override "--set <path>=..." itself, in which
 * case repeating the key path in the message adds nothing. */
static int origin_is_set_of(const char *origin, const char *path)
{
    size_t pl = strlen(path);
    return strncmp(origin, "--set ", 6) == 0 && strncmp(origin + 6, path, pl) == 0 &&
           origin[6 + pl] == '=';
}

/* "where: path: message", where = file:line:col of n (or the --set text). */
static int fail_at(ctx *c, const sim_yaml_node *n, const char *path, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail_at(ctx *c, const sim_yaml_node *n, const char *path, int code, const char *fmt, ...)
{
    char where[PATH_BUF + 64], msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sim_yaml_where(n, where, sizeof where);
    if (!path || !*path || origin_is_set_of(n->origin, path))
        return sim_err_set(c->err, code, "%s: %s", where, msg);
    return sim_err_set(c->err, code, "%s: %s: %s", where, path, msg);
}

/* "a, b, c" — the keys a section accepts, for messages. */
static void child_list(const char *pattern, char *buf, size_t size)
{
    const char *names[64];
    int n = sim_schema_children(pattern, names, 64);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
}

/* Unknown key message with a did-you-mean or, failing that, the key list. */
static int unknown_key(ctx *c, const char *where, const char *pattern, const char *key,
                       const char *path)
{
    const char *s = strlen(key) <= KEY_MAX ? sim_schema_suggest(pattern, key) : NULL;
    if (s)
        return sim_err_set(c->err, SIM_EINVAL, "%s: unknown key '%.100s' at %s (did you mean '%s'?)",
                           where, key, path, s);
    char keys[1024];
    child_list(pattern, keys, sizeof keys);
    return sim_err_set(c->err, SIM_EINVAL, "%s: unknown key '%.100s' at %s (known keys: %s)", where,
                       key, path, keys);
}

static void join(char *out, size_t size, const char *a, const char *b)
{
    snprintf(out, size, "%s%s%s", a, *a ? "." : "", b);
}

/* ---- scalar conversion ---- */

/* The schema's number types, through the one strict parser: no blanks,
 * hex, nan/inf words or trailing text; overflow refused. */
static int parse_i64(const char *s, int64_t *v) { return sim_parse_i64(s, v) == SIM_PARSE_OK ? 0 : -1; }
static int parse_u64(const char *s, uint64_t *v) { return sim_parse_u64(s, v) == SIM_PARSE_OK ? 0 : -1; }
static int parse_f64(const char *s, double *v) { return sim_parse_double(s, v) == SIM_PARSE_OK ? 0 : -1; }

static int parse_bool(const char *s, int32_t *v)
{
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) *v = 1;
    else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) *v = 0;
    else return -1;
    return 0;
}

static int in_range(const sim_schema_field *f, double x)
{
    unsigned fl = f->flags;
    if (fl & SIM_SCHEMA_HAS_MIN) {
        if ((fl & SIM_SCHEMA_MIN_EXCL) ? !(x > f->min) : !(x >= f->min)) return 0;
    }
    if (fl & SIM_SCHEMA_HAS_MAX) {
        if ((fl & SIM_SCHEMA_MAX_EXCL) ? !(x < f->max) : !(x <= f->max)) return 0;
    }
    return 1;
}

static int has_ext(const char *s, const char *ext)
{
    size_t ls = strlen(s), le = strlen(ext);
    return ls > le && strcmp(s + ls - le, ext) == 0;
}

/* Copies a string value into its buffer; paths written in the file are
 * resolved against the file's folder (overrides are relative to the
 * current directory, like any other command-line path); output paths are
 * relative to the current directory either way. */
static int store_string(ctx *c, const sim_schema_field *f, const sim_yaml_node *n, const char *path,
                        char *dst)
{
    const char *s = n->is_null ? "" : n->text;
    int is_path = f->type == SIM_SCHEMA_PATH ||
                  (f->type == SIM_SCHEMA_MODEL &&
                   (has_ext(s, ".json") || has_ext(s, ".yaml") || has_ext(s, ".yml")));
    /* Outputs (output.db) land where the user is: relative to the current
     * directory, as on the command line, not beside the scenario. */
    if (strncmp(f->path, "output.", 7) == 0) is_path = 0;
    /* hardware.perf_db: none is a word (the analytic model), not a file. */
    if (strcmp(f->path, "hardware.perf_db") == 0 && strcmp(s, "none") == 0) is_path = 0;
    if (f->type == SIM_SCHEMA_MODEL && !*s)
        return fail_at(c, n, path, SIM_EINVAL, "expected a model name or config path, got an empty value");
    int w;
    size_t dl = strlen(c->dir);
    if (is_path && *s && s[0] != '/' && n->line > 0 && dl)
        w = snprintf(dst, f->size, "%s%s%s", c->dir, c->dir[dl - 1] == '/' ? "" : "/", s);
    else
        w = snprintf(dst, f->size, "%s", s);
    if (w < 0 || (size_t)w >= f->size)
        return fail_at(c, n, path, SIM_EINVAL, "%s is too long (at most %zu characters)",
                       is_path ? "path" : "string", f->size - 1);
    return 0;
}

/* A number, or a list of numbers (sim_f64_list), each in the field's range. */
static int convert_f64s(ctx *c, const sim_schema_field *f, const sim_yaml_node *n, const char *path, char *dst,
                        const char *expect)
{
    char got[128];
    sim_f64_list l = {0};
    const sim_yaml_node *one = n;
    size_t count = 1;
    if (n->kind == SIM_YAML_SEQ) {
        count = n->n;
        if (count < 1 || count > SIM_SPEC_MAX_DRAFT) {
            sim_yaml_describe(n, got, sizeof got);
            return fail_at(c, n, path, SIM_EINVAL, "expected %s, got a list of %zu", expect, count);
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (n->kind == SIM_YAML_SEQ) one = n->items[i];
        sim_yaml_describe(one, got, sizeof got);
        double v;
        if (one->kind != SIM_YAML_SCALAR || one->is_null || parse_f64(one->text, &v))
            return fail_at(c, one, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        if (!in_range(f, v)) return fail_at(c, one, path, SIM_ERANGE, "expected %s, got %.60s", expect, one->text);
        l.v[i] = v;
    }
    l.n = (int32_t)count;
    memcpy(dst, &l, sizeof l);
    return 0;
}

/* Checks and writes one leaf value into the scenario. */
static int convert(ctx *c, const sim_schema_field *f, const sim_yaml_node *n, const char *path,
                   int pool)
{
    char expect[512], got[128];
    sim_schema_expect(f, expect, sizeof expect);
    sim_yaml_describe(n, got, sizeof got);
    char *base = f->in_pool == SIM_SCHEMA_IN_POOL    ? (char *)&c->sc->deployment.pools[pool]
                 : f->in_pool == SIM_SCHEMA_IN_CLASS ? (char *)&c->sc->workload.classes[pool]
                                                     : (char *)c->sc;
    char *dst = base + f->offset;
    if (f->type == SIM_SCHEMA_F64S) return convert_f64s(c, f, n, path, dst, expect);
    if (n->kind != SIM_YAML_SCALAR)
        return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
    if (f->type == SIM_SCHEMA_STR || f->type == SIM_SCHEMA_PATH || f->type == SIM_SCHEMA_MODEL)
        return store_string(c, f, n, path, dst);
    if (n->is_null) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);

    const char *s = n->text;
    switch (f->type) {
    case SIM_SCHEMA_ENUM: {
        int v = sim_schema_enum_value(f, s);
        if (v < 0) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    case SIM_SCHEMA_BOOL: {
        int32_t v;
        if (parse_bool(s, &v)) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    case SIM_SCHEMA_I32:
    case SIM_SCHEMA_I64: {
        int64_t v;
        if (parse_i64(s, &v)) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        /* A well-formed number out of range is shown as the number it is. */
        if (!in_range(f, (double)v) || (f->type == SIM_SCHEMA_I32 && (v < INT32_MIN || v > INT32_MAX)))
            return fail_at(c, n, path, SIM_ERANGE, "expected %s, got %.60s", expect, s);
        if (f->type == SIM_SCHEMA_I32) {
            int32_t v32 = (int32_t)v;
            memcpy(dst, &v32, sizeof v32);
        } else {
            memcpy(dst, &v, sizeof v);
        }
        return 0;
    }
    case SIM_SCHEMA_U64: {
        uint64_t v;
        if (parse_u64(s, &v)) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    case SIM_SCHEMA_F64: {
        double v;
        if (parse_f64(s, &v)) return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
        if (!in_range(f, v)) return fail_at(c, n, path, SIM_ERANGE, "expected %s, got %.60s", expect, s);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    default:
        return fail_at(c, n, path, SIM_EINVAL, "internal: no conversion for this key");
    }
}

/* ---- the schema-driven walk ---- */

static int walk(ctx *c, const sim_yaml_node *n, const char *pattern, const char *path, int pool);

static int walk_map(ctx *c, const sim_yaml_node *n, const char *pattern, const char *path, int pool)
{
    char got[128], keys[1024];
    if (n->kind == SIM_YAML_SCALAR && n->is_null) return 0; /* empty section: all defaults */
    if (n->kind != SIM_YAML_MAP) {
        sim_yaml_describe(n, got, sizeof got);
        child_list(pattern, keys, sizeof keys);
        return fail_at(c, n, path, SIM_EINVAL, "expected a mapping with keys %s, got %s", keys, got);
    }
    /* A scheduler preset fills the pool's scheduler first, so the keys
     * written beside it win whatever their order. */
    int sched = !strcmp(pattern, "deployment.pools.*.scheduler");
    for (size_t i = 0; sched && i < n->n; i++) {
        const sim_yaml_pair *p = &n->pairs[i];
        if (strcmp(p->key, "preset")) continue;
        char cpat[PATH_BUF], cpath[PATH_BUF];
        join(cpat, sizeof cpat, pattern, p->key);
        join(cpath, sizeof cpath, path, p->key);
        int rc = walk(c, p->value, cpat, cpath, pool);
        if (rc) return rc;
        sim_sched_cfg *sc = &c->sc->deployment.pools[pool].scheduler;
        if (sim_sched_preset_apply(sc->preset, sc))
            return fail_at(c, p->value, cpath, SIM_EINVAL, "internal: preset '%s' has no settings",
                           sim_sched_preset_name(sc->preset));
    }
    /* workload.classes items start from the workload's own keys: they are
     * walked after the rest of the workload, wherever the file puts them. */
    int wl = !strcmp(pattern, "workload");
    for (size_t j = 0; j < n->n + (size_t)wl; j++) {
        size_t i = j < n->n ? j : 0;
        const sim_yaml_pair *p = NULL;
        if (j == n->n) { /* the second pass: classes, if the workload has them */
            for (size_t k = 0; k < n->n; k++)
                if (!strcmp(n->pairs[k].key, "classes")) p = &n->pairs[k];
            if (!p) break;
        } else {
            p = &n->pairs[i];
            if (wl && !strcmp(p->key, "classes")) continue;
        }
        char cpat[PATH_BUF], cpath[PATH_BUF], where[PATH_BUF + 64];
        if (sched && !strcmp(p->key, "preset")) continue;
        const sim_schema_field *cf = NULL;
        if (strlen(p->key) <= KEY_MAX && !strchr(p->key, '.') && !strchr(p->key, '*')) {
            join(cpat, sizeof cpat, pattern, p->key);
            cf = sim_schema_lookup(cpat);
        }
        join(cpath, sizeof cpath, path, strlen(p->key) <= KEY_MAX ? p->key : "...");
        if (!cf) {
            if (p->line > 0)
                snprintf(where, sizeof where, "%s:%d:%d", n->origin, p->line, p->col);
            else
                sim_yaml_where(p->value, where, sizeof where);
            return unknown_key(c, where, pattern, p->key, cpath);
        }
        int rc = walk(c, p->value, cpat, cpath, pool);
        if (rc) return rc;
    }
    return 0;
}

static int walk_list(ctx *c, const sim_schema_field *f, const sim_yaml_node *n, const char *pattern,
                     const char *path)
{
    char got[128], expect[256];
    sim_schema_expect(f, expect, sizeof expect);
    if (n->kind != SIM_YAML_SEQ) {
        sim_yaml_describe(n, got, sizeof got);
        return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %s", expect, got);
    }
    if ((double)n->n < f->min || (double)n->n > f->max)
        return fail_at(c, n, path, SIM_EINVAL, "expected %s, got %zu", expect, n->n);
    /* deployment.pools items fill pools[i], workload.classes items classes[i]. */
    int classes = !strcmp(pattern, "workload.classes");
    if (classes) {
        c->sc->workload.n_classes = (int32_t)n->n;
        /* New items start from the workload's keys (an overlay keeps its base's items). */
        for (size_t i = c->base_classes; i < n->n; i++) sim_class_from_workload(&c->sc->workload.classes[i], &c->sc->workload);
    } else {
        c->sc->deployment.n_pools = (int32_t)n->n;
    }
    char ipat[PATH_BUF];
    join(ipat, sizeof ipat, pattern, "*");
    for (size_t i = 0; i < n->n; i++) {
        char ipath[PATH_BUF], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        join(ipath, sizeof ipath, path, idx);
        int rc = walk(c, n->items[i], ipat, ipath, (int)i);
        if (rc) return rc;
    }
    return 0;
}

static int walk(ctx *c, const sim_yaml_node *n, const char *pattern, const char *path, int pool)
{
    const sim_schema_field *f = sim_schema_lookup(pattern);
    if (!f) return fail_at(c, n, path, SIM_EINVAL, "internal: key missing from the schema");
    if (f->type == SIM_SCHEMA_MAP) return walk_map(c, n, pattern, path, pool);
    if (f->type == SIM_SCHEMA_LIST) return walk_list(c, f, n, pattern, path);
    return convert(c, f, n, path, pool);
}

/* ---- --set overrides ---- */

static int all_digits(const char *s)
{
    if (!*s || strlen(s) > 9) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Removes marks so messages about an override name the override, not
 * line 1 of its value string. */
static void strip_marks(sim_yaml_node *n)
{
    n->line = n->col = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == SIM_YAML_MAP) {
            n->pairs[i].line = n->pairs[i].col = 0;
            strip_marks(n->pairs[i].value);
        } else if (n->kind == SIM_YAML_SEQ) {
            strip_marks(n->items[i]);
        }
    }
}

/* Makes *slot a collection of `kind`, creating it when the slot is empty
 * (a new key, or a key with no value in the file). */
static int ensure_kind(ctx *c, sim_yaml_node **slot, sim_yaml_kind kind, const char *origin,
                       const char *path)
{
    sim_yaml_node *n = *slot;
    if (n && n->kind == kind) return 0;
    if (n && !(n->kind == SIM_YAML_SCALAR && n->is_null)) {
        char where[PATH_BUF + 64], got[128];
        sim_yaml_where(n, where, sizeof where);
        sim_yaml_describe(n, got, sizeof got);
        return sim_err_set(c->err, SIM_EINVAL, "%s: cannot set a key inside %s: %s holds %s", origin,
                           path, where, got);
    }
    sim_yaml_node *m = sim_yaml_node_new(kind, origin);
    if (!m) return sim_err_set(c->err, SIM_ENOMEM, "%s: out of memory", origin);
    sim_yaml_free(n);
    *slot = m;
    return 0;
}

/* A YAML null scalar (a key or list item named but not yet given). */
static sim_yaml_node *null_scalar(const char *origin)
{
    sim_yaml_node *v = sim_yaml_node_new(SIM_YAML_SCALAR, origin);
    if (v) v->is_null = 1;
    return v;
}

/* One step into list item comp of the list at *slot (made a list when
 * empty); over a base scenario its own items can be named alone (the items
 * before stand as empty mappings, the base's unchanged), and the index
 * just past the end adds one. */
static int set_step_list(ctx *c, sim_yaml_node ***slot, const char *comp, const char *pattern, const char *path,
                         const char *origin)
{
    int rc;
    if (!all_digits(comp))
        return sim_err_set(c->err, SIM_EINVAL, "%s: '%.100s' is not a list index (%s takes 0, 1, ...)", origin, comp,
                           path);
    if ((rc = ensure_kind(c, *slot, SIM_YAML_SEQ, origin, path))) return rc;
    sim_yaml_node *seq = **slot;
    size_t idx = (size_t)strtoul(comp, NULL, 10);
    size_t base_n = !strcmp(pattern, "workload.classes") ? c->base_classes : c->base_items;
    while (seq->n < idx && seq->n < base_n) {
        sim_yaml_node *keep = sim_yaml_node_new(SIM_YAML_MAP, origin);
        if (!keep) return sim_err_set(c->err, SIM_ENOMEM, "%s: out of memory", origin);
        if ((rc = sim_yaml_seq_add(seq, keep, c->err))) return rc;
    }
    if (idx > seq->n)
        return sim_err_set(c->err, SIM_EINVAL, "%s: index %zu is past the end of %s (it has %zu items; %zu adds one)",
                           origin, idx, path, seq->n, seq->n);
    if (idx == seq->n) {
        sim_yaml_node *item = null_scalar(origin);
        if (!item) return sim_err_set(c->err, SIM_ENOMEM, "%s: out of memory", origin);
        if ((rc = sim_yaml_seq_add(seq, item, c->err))) return rc;
    }
    *slot = &seq->items[idx];
    return 0;
}

/* One step into key comp of the mapping at *slot (made a mapping when
 * empty; the key added when missing); npat is the key's schema pattern. */
static int set_step_map(ctx *c, sim_yaml_node ***slot, const char *comp, const char *pattern, const char *npat,
                        const char *path, const char *npath, const char *origin)
{
    int rc;
    if (strlen(comp) > KEY_MAX || strchr(comp, '*') || !sim_schema_lookup(npat))
        return unknown_key(c, origin, pattern, comp, npath);
    if ((rc = ensure_kind(c, *slot, SIM_YAML_MAP, origin, path))) return rc;
    sim_yaml_node *map = **slot;
    sim_yaml_pair *p = sim_yaml_map_find(map, comp);
    if (!p) {
        sim_yaml_node *v = null_scalar(origin);
        if (!v) return sim_err_set(c->err, SIM_ENOMEM, "%s: out of memory", origin);
        if ((rc = sim_yaml_map_add(map, comp, v, c->err))) return rc;
        p = &map->pairs[map->n - 1];
    }
    *slot = &p->value;
    return 0;
}

/* The override's value parsed as YAML (an empty one is the empty string,
 * not "no value"). */
static int set_value(ctx *c, const char *text, const char *origin, sim_yaml_node **out)
{
    sim_yaml_node *v = NULL;
    int rc = sim_yaml_parse(text, strlen(text), origin, "scenario", &v, c->err);
    if (rc) {
        /* Line 1, column N of the value string would read as part of the
         * override text; keep only libyaml's description of the problem. */
        const char *why = c->err ? strstr(c->err->msg, "YAML syntax error") : NULL;
        if (why) {
            char tmp[sizeof c->err->msg];
            snprintf(tmp, sizeof tmp, "%s", why);
            return sim_err_set(c->err, rc, "%s: %s", origin, tmp);
        }
        return rc;
    }
    if (!v) {
        /* "--set output.db=" means the empty string, not "no value". */
        v = sim_yaml_node_new(SIM_YAML_SCALAR, origin);
        if (!v) return sim_err_set(c->err, SIM_ENOMEM, "%s: out of memory", origin);
    }
    *out = v;
    return 0;
}

/* Applies one "key.path=value". `origin` is "--set key.path=value" and must
 * outlive the tree (nodes point at it). */
static int apply_set(ctx *c, const char *set, const char *origin)
{
    const char *eq = strchr(set, '=');
    if (!eq || eq == set)
        return sim_err_set(c->err, SIM_EINVAL, "%s: expected key.path=value", origin);
    size_t klen = (size_t)(eq - set);
    if (klen >= PATH_BUF) return sim_err_set(c->err, SIM_EINVAL, "%s: key path too long", origin);
    char key[PATH_BUF], pattern[PATH_BUF] = "", path[PATH_BUF] = "";
    memcpy(key, set, klen);
    key[klen] = '\0';
    if (key[0] == '.' || key[klen - 1] == '.' || strstr(key, ".."))
        return sim_err_set(c->err, SIM_EINVAL, "%s: empty key in the key path", origin);

    sim_yaml_node **slot = &c->root;
    char *save = NULL;
    int rc;
    for (char *comp = strtok_r(key, ".", &save); comp; comp = strtok_r(NULL, ".", &save)) {
        const sim_schema_field *f = sim_schema_lookup(pattern);
        char npat[PATH_BUF], npath[PATH_BUF];
        if (f && f->type == SIM_SCHEMA_LIST) {
            join(npat, sizeof npat, pattern, "*");
            join(npath, sizeof npath, path, comp);
            if ((rc = set_step_list(c, &slot, comp, pattern, path, origin))) return rc;
        } else if (f && f->type == SIM_SCHEMA_MAP) {
            join(npath, sizeof npath, path, comp);
            join(npat, sizeof npat, pattern, comp);
            if ((rc = set_step_map(c, &slot, comp, pattern, npat, path, npath, origin))) return rc;
        } else {
            return sim_err_set(c->err, SIM_EINVAL, "%s: %s is a single value; it has no key '%.100s'",
                               origin, path, comp);
        }
        snprintf(pattern, sizeof pattern, "%s", npat);
        snprintf(path, sizeof path, "%s", npath);
    }
    if (!*path) return sim_err_set(c->err, SIM_EINVAL, "%s: expected key.path=value", origin);
    sim_yaml_node *v = NULL;
    if ((rc = set_value(c, eq + 1, origin, &v))) return rc;
    strip_marks(v);
    sim_yaml_free(*slot);
    *slot = v;
    return 0;
}

/* ---- cross-field checks ---- */

/* The node at a concrete key path, or its deepest existing ancestor, so a
 * message about a key that kept its default still points somewhere useful. */
static const sim_yaml_node *find_node(const sim_yaml_node *root, const char *path)
{
    char buf[PATH_BUF], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    const sim_yaml_node *n = root;
    for (char *comp = strtok_r(buf, ".", &save); comp; comp = strtok_r(NULL, ".", &save)) {
        const sim_yaml_node *next = NULL;
        if (n->kind == SIM_YAML_MAP) {
            const sim_yaml_pair *p = sim_yaml_map_find(n, comp);
            if (p) next = p->value;
        } else if (n->kind == SIM_YAML_SEQ && all_digits(comp)) {
            size_t i = (size_t)strtoul(comp, NULL, 10);
            if (i < n->n) next = n->items[i];
        }
        if (!next) break;
        n = next;
    }
    return n;
}

static int fail_key(ctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail_key(ctx *c, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_at(c, find_node(c->root, path), path, SIM_EINVAL, "%s", msg);
}

static int check_len(ctx *c, const char *sec, const sim_len_dist *d)
{
    char p[PATH_BUF];
    const char *dn = sim_dist_name(d->dist);
#define KEY(k) (snprintf(p, sizeof p, "%s%s.%s", strncmp(sec, "workload.", 9) ? "workload." : "", sec, k), p)
    if (d->min > d->max)
        return fail_key(c, KEY("max"), "dist %s needs min <= max, got min %lld and max %lld", dn,
                        (long long)d->min, (long long)d->max);
    switch (d->dist) {
    case SIM_DIST_FIXED:
        if (!(d->value >= 1)) return fail_key(c, KEY("value"), "dist fixed needs value >= 1, got %g", d->value);
        break;
    case SIM_DIST_NORMAL:
    case SIM_DIST_LOGNORMAL:
        if (!(d->mean > 0)) return fail_key(c, KEY("mean"), "dist %s needs mean > 0, got %g", dn, d->mean);
        if (!(d->std >= 0)) return fail_key(c, KEY("std"), "dist %s needs std >= 0, got %g", dn, d->std);
        break;
    case SIM_DIST_ZIPF:
        if (!(d->s > 0)) return fail_key(c, KEY("s"), "dist zipf needs s > 0, got %g", d->s);
        break;
    case SIM_DIST_EMPIRICAL:
        if (!d->path[0]) return fail_key(c, KEY("path"), "dist empirical needs a path to a lengths file");
        break;
    default:
        break;
    }
#undef KEY
    return 0;
}

static int check_bucket(ctx *c, const char *sec, const sim_bucket_cfg *b)
{
    char p[PATH_BUF + 8];
    snprintf(p, sizeof p, "%s.burst", sec);
    if (b->rate > 0 && !(b->burst >= 1))
        return fail_key(c, p, "a token bucket with rate %g needs burst >= 1 (one request's token), got %g", b->rate,
                        b->burst);
    return 0;
}

/* workload.classes.N.sessions: the class's own sessions (count > 0): its
 * lengths, an open-loop class to time their starts, no prefix structure. */
static int check_class_sessions(ctx *c, const sim_class_cfg *cl, int i)
{
    char p[PATH_BUF];
    int rc;
    if (cl->sessions.count <= 0) return 0;
    static const char *const keys[5] = {"turns", "user_tokens", "think_ms", "child_input_tokens",
                                        "child_output_tokens"};
    const sim_len_dist *ds[5] = {&cl->sessions.turns, &cl->sessions.user_tokens, &cl->sessions.think_ms,
                                 &cl->sessions.child_input_tokens, &cl->sessions.child_output_tokens};
    for (int k = 0; k < 5; k++) {
        snprintf(p, sizeof p, "workload.classes.%d.sessions.%s", i, keys[k]);
        if ((rc = check_len(c, p, ds[k]))) return rc;
    }
    snprintf(p, sizeof p, "workload.classes.%d.sessions.count", i);
    if (cl->arrival.process == SIM_ARRIVAL_CLOSED)
        return fail_key(c, p, "sessions are their own closed loop (each turn waits for the previous one); give the "
                              "class an open-loop arrival.process to time its session starts, not closed_loop");
    snprintf(p, sizeof p, "workload.classes.%d.prefix.kind", i);
    if (cl->prefix.kind != SIM_PREFIX_NONE)
        return fail_key(c, p, "prefix.kind %s and the class's sessions exclude each other (sessions build their "
                              "own context chains; set the class's prefix.kind none)",
                        sim_prefix_kind_name(cl->prefix.kind));
    return 0;
}

/* workload.classes: names, synthetic arrivals (open or closed loop), bounded, lengths. */
static int check_classes(ctx *c)
{
    const sim_workload_cfg *w = &c->sc->workload;
    char p[PATH_BUF], sec[PATH_BUF];
    int rc;
    if (w->n_classes == 0) return 0;
    if (w->trace.format != SIM_TRACE_NONE)
        return fail_key(c, "workload.classes", "classes generate their own arrivals; they cannot be mixed with "
                                               "workload.trace (a trace's lines carry no class, so no line could be "
                                               "given its class's SLO and priority)");
    if (w->arrival.process == SIM_ARRIVAL_CLOSED)
        return fail_key(c, "workload.arrival.process", "closed_loop with workload.classes: give each closed-loop "
                                                       "class its own clients (workload.classes.N.arrival.process "
                                                       "closed_loop with its concurrency)");
    for (int32_t i = 0; i < w->n_classes; i++) {
        const sim_class_cfg *cl = &w->classes[i];
        snprintf(p, sizeof p, "workload.classes.%d.name", (int)i);
        if (!cl->name[0]) return fail_key(c, p, "every class needs a name");
        for (const char *q = cl->name; *q; q++)
            if (!(isalnum((unsigned char)*q) || *q == '_' || *q == '-'))
                return fail_key(c, p, "class name '%s': expected letters, digits, '_' or '-' (it becomes a JSON "
                                      "and results-DB key)", cl->name);
        for (int32_t j = 0; j < i; j++)
            if (!strcmp(w->classes[j].name, cl->name))
                return fail_key(c, p, "class name '%s' is used twice (also workload.classes.%d)", cl->name, (int)j);
        snprintf(p, sizeof p, "workload.classes.%d.arrival.concurrency", (int)i);
        if (cl->arrival.process == SIM_ARRIVAL_CLOSED && cl->arrival.concurrency < 1)
            return fail_key(c, p, "process closed_loop needs concurrency >= 1, got %d", (int)cl->arrival.concurrency);
        snprintf(p, sizeof p, "workload.classes.%d.arrival.schedule", (int)i);
        if (cl->arrival.process == SIM_ARRIVAL_SCHEDULE && !cl->arrival.schedule[0])
            return fail_key(c, p, "process schedule needs a schedule \"t0:r0, t1:r1, ...\"");
        snprintf(p, sizeof p, "workload.classes.%d.requests", (int)i);
        if (cl->requests == 0 && cl->duration_s == 0 && cl->sessions.count == 0)
            return fail_key(c, p, "requests 0 and duration_s 0: the class would never stop sending");
        if ((rc = check_class_sessions(c, cl, (int)i))) return rc;
        snprintf(sec, sizeof sec, "workload.classes.%d.input_tokens", (int)i);
        if ((rc = check_len(c, sec, &cl->input_tokens))) return rc;
        snprintf(sec, sizeof sec, "workload.classes.%d.output_tokens", (int)i);
        if ((rc = check_len(c, sec, &cl->output_tokens))) return rc;
        snprintf(sec, sizeof sec, "workload.classes.%d.admission", (int)i);
        if ((rc = check_bucket(c, sec, &cl->admission))) return rc;
    }
    return 0;
}

static int check_workload(ctx *c)
{
    const sim_workload_cfg *w = &c->sc->workload;
    int rc;
    if ((rc = check_len(c, "input_tokens", &w->input_tokens))) return rc;
    if ((rc = check_len(c, "output_tokens", &w->output_tokens))) return rc;
    if (w->arrival.process == SIM_ARRIVAL_CLOSED && w->arrival.concurrency < 1)
        return fail_key(c, "workload.arrival.concurrency", "process closed_loop needs concurrency >= 1, got %d",
                        (int)w->arrival.concurrency);
    if (w->trace.format == SIM_TRACE_NONE && w->trace.path[0])
        return fail_key(c, "workload.trace.path", "a trace path needs workload.trace.format (mooncake|csv)");
    if (w->trace.format != SIM_TRACE_NONE && !w->trace.path[0])
        return fail_key(c, "workload.trace.format", "trace format %s needs workload.trace.path",
                        w->trace.format == SIM_TRACE_MOONCAKE ? "mooncake" : "csv");
    if (w->sessions.count > 0) {
        static const char *const secs[5] = {"sessions.turns", "sessions.user_tokens", "sessions.think_ms",
                                            "sessions.child_input_tokens", "sessions.child_output_tokens"};
        const sim_len_dist *ds[5] = {&w->sessions.turns, &w->sessions.user_tokens, &w->sessions.think_ms,
                                     &w->sessions.child_input_tokens, &w->sessions.child_output_tokens};
        for (int i = 0; i < 5; i++)
            if ((rc = check_len(c, secs[i], ds[i]))) return rc;
        if (w->arrival.process == SIM_ARRIVAL_CLOSED)
            return fail_key(c, "workload.sessions.count",
                            "sessions are their own closed loop (each turn waits for the previous one); "
                            "use an open-loop arrival.process to time session starts, not closed_loop");
        if (w->trace.format != SIM_TRACE_NONE)
            return fail_key(c, "workload.sessions.count",
                            "synthetic sessions and a trace exclude each other (a Mooncake trace with "
                            "session_id fields carries its own sessions)");
        if (w->prefix.kind != SIM_PREFIX_NONE)
            return fail_key(c, "workload.prefix.kind",
                            "prefix.kind %s and workload.sessions exclude each other (sessions build their own "
                            "context chains; set prefix.kind none)", sim_prefix_kind_name(w->prefix.kind));
    }
    if (sim_images_enabled(&w->images)) {
        if ((rc = check_len(c, "images.per_request", &w->images.per_request))) return rc;
        if (w->images.width < 1 || w->images.height < 1)
            return fail_key(c, w->images.width < 1 ? "workload.images.width" : "workload.images.height",
                            "images need a width and a height in pixels (>= 1)");
    } else if (w->images.width || w->images.height || w->images.frames) {
        return fail_key(c, "workload.images.per_request",
                        "images.width/height/frames are set but per_request is not (give per_request.value >= 1 "
                        "or a distribution)");
    }
    if (w->trace.format == SIM_TRACE_NONE && w->requests == 0 && w->duration_s == 0 && w->sessions.count == 0)
        return fail_key(c, "workload.requests",
                        "requests 0 means the whole trace, but no trace is set and duration_s is 0: "
                        "the run would never end");
    if ((rc = check_bucket(c, "workload.admission", &w->admission.bucket))) return rc;
    if (w->admission.slo_factor > 0 && !(c->sc->slo.ttft_ms > 0)) {
        int any = 0;
        for (int32_t i = 0; i < w->n_classes; i++) any |= w->classes[i].slo.ttft_ms > 0;
        if (!any)
            return fail_key(c, "workload.admission.slo_factor",
                            "shedding by predicted TTFT needs a TTFT bound (slo.ttft_ms or a class's slo.ttft_ms)");
    }
    return check_classes(c);
}

/* scheduler.speculative: what it needs, and where it is not modelled yet. */
static int check_spec(ctx *c, const sim_deploy_cfg *d, const sim_pool_cfg *pl, int i)
{
    const sim_spec_cfg *sp = &pl->scheduler.spec;
    char p[PATH_BUF];
    if (sp->draft_tokens <= 0) return 0;
    snprintf(p, sizeof p, "deployment.pools.%d.scheduler.speculative.acceptance", i);
    if (sp->acceptance.n < 1)
        return fail_key(c, p, "required when draft_tokens > 0: the acceptance rate per draft position");
    if (sp->acceptance.n != 1 && sp->acceptance.n != sp->draft_tokens)
        return fail_key(c, p, "expected one rate or one per draft position (%d), got a list of %d",
                        (int)sp->draft_tokens, (int)sp->acceptance.n);
    snprintf(p, sizeof p, "deployment.pools.%d.scheduler.speculative.draft_model", i);
    if (sp->method == SIM_SPEC_DRAFT && !sp->draft_model[0])
        return fail_key(c, p, "method draft needs the draft model (a catalogue name or config path)");
    snprintf(p, sizeof p, "deployment.pools.%d.scheduler.speculative.draft_tokens", i);
    if (d->mode == SIM_MODE_AF || d->mode == SIM_MODE_PD_AF)
        return fail_key(c, p, "speculative decoding is not modelled with attention/FFN disaggregation (mode %s)",
                        sim_mode_name(d->mode));
    if (pl->parallel.pp > 1)
        return fail_key(c, p, "speculative decoding is not modelled with pipeline parallelism (parallel.pp %d)",
                        (int)pl->parallel.pp);
    return 0;
}

/* deployment.pools.*.autoscale: a complete policy, and only where the
 * cluster models instances coming and going. */
static int check_autoscale(ctx *c, const sim_deploy_cfg *d, const sim_pool_cfg *pl, int i)
{
    const sim_autoscale_cfg *a = &pl->autoscale;
    const sim_scenario *sc = c->sc;
    char p[PATH_BUF];
#define AKEY(k) (snprintf(p, sizeof p, "deployment.pools.%d.autoscale." k, i), p)
    if (!a->enabled) return 0;
    if (d->mode == SIM_MODE_AF || d->mode == SIM_MODE_PD_AF)
        return fail_key(c, AKEY("enabled"), "autoscaling is not modelled with attention/FFN disaggregation (mode "
                        "%s): colocated pools and the prefill and decode pools of mode pd only",
                        sim_mode_name(d->mode));
    if (a->max == 0)
        return fail_key(c, AKEY("max"), "required when autoscale.enabled: the most instances the pool may hold");
    if (a->min > pl->instances)
        return fail_key(c, AKEY("min"), "min (%d) must be <= the pool's instances (%d), the count it starts with",
                        (int)a->min, (int)pl->instances);
    if (a->max < pl->instances)
        return fail_key(c, AKEY("max"), "max (%d) must be >= the pool's instances (%d), the count it starts with",
                        (int)a->max, (int)pl->instances);
    if (sc->cache.enabled)
        return fail_key(c, AKEY("enabled"), "autoscaling with cache.enabled is not modelled (an instance that "
                        "leaves and starts again would keep its prefix cache); set cache.enabled false");
    if (sc->routing.policy == SIM_ROUTE_CACHE_AWARE)
        return fail_key(c, AKEY("enabled"), "autoscaling with routing.policy cache_aware is not modelled; use "
                        "round_robin, random, least_loaded or power_of_two");
    if (sc->energy.enabled)
        return fail_key(c, AKEY("enabled"), "autoscaling with energy.enabled is not modelled (the energy model "
                        "charges a fixed fleet's idle power); set energy.enabled false");
    if (d->encode_instances > 0)
        return fail_key(c, AKEY("enabled"), "autoscaling with an encode pool (deployment.encode.instances %d) is not "
                        "modelled (a request at an encoder or in transit is not yet held by its instance, which "
                        "could drain and leave under it); set encode.instances 0 (encoders in the instances)",
                        (int)d->encode_instances);
    const double th[2] = {a->up_threshold, a->down_threshold};
    static const char *const names[2] = {"up_threshold", "down_threshold"};
    int unit = a->metric != SIM_AS_QUEUE && a->metric != SIM_AS_CONCURRENCY;
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "deployment.pools.%d.autoscale.%s", i, names[k]);
        if (!(th[k] == -1 || (th[k] >= 0 && (!unit || th[k] <= 1))))
            return fail_key(c, p, "expected -1 (the metric's default) or %s, got %g",
                            unit ? "a share in [0, 1]" : "a number >= 0", th[k]);
    }
    double up, down;
    sim_autoscale_thresholds(a, &up, &down);
    if (a->metric == SIM_AS_SLO ? !(up <= down) : !(down < up))
        return fail_key(c, AKEY("down_threshold"), "metric %s needs %s (up_threshold %g, down_threshold %g)",
                        sim_autoscale_metric_name(a->metric),
                        a->metric == SIM_AS_SLO ? "up_threshold <= down_threshold (attainment: up when below, down "
                                                  "when at or above)"
                                                : "down_threshold < up_threshold",
                        up, down);
    if (a->metric == SIM_AS_SLO) {
        const sim_slo_cfg *s = &sc->slo;
        int ok = pl->role == SIM_ROLE_PREFILL  ? s->ttft_ms > 0
                 : pl->role == SIM_ROLE_DECODE ? s->tpot_ms > 0
                                               : s->ttft_ms > 0 || s->tpot_ms > 0 || s->e2e_ms > 0;
        if (!ok)
            return fail_key(c, AKEY("metric"), "metric slo on a %s pool needs %s", sim_role_name(pl->role),
                            pl->role == SIM_ROLE_PREFILL  ? "slo.ttft_ms > 0 (a prefill pool answers for TTFT)"
                            : pl->role == SIM_ROLE_DECODE ? "slo.tpot_ms > 0 (a decode pool answers for TPOT)"
                                                          : "an SLO bound (slo.ttft_ms, slo.tpot_ms or slo.e2e_ms)");
    }
#undef AKEY
    return 0;
}

static int check_deployment(ctx *c)
{
    const sim_deploy_cfg *d = &c->sc->deployment;
    /* Roles each mode allows, and those it needs at least one pool of. */
    static const unsigned allowed[4] = {
        1u << SIM_ROLE_COLOCATED,
        1u << SIM_ROLE_PREFILL | 1u << SIM_ROLE_DECODE,
        1u << SIM_ROLE_ATTENTION | 1u << SIM_ROLE_FFN,
        1u << SIM_ROLE_PREFILL | 1u << SIM_ROLE_ATTENTION | 1u << SIM_ROLE_FFN,
    };
    unsigned mode = (unsigned)d->mode < 4 ? (unsigned)d->mode : 0;
    unsigned seen = 0;
    char p[PATH_BUF];
    for (int i = 0; i < d->n_pools; i++) {
        const sim_pool_cfg *pl = &d->pools[i];
        snprintf(p, sizeof p, "deployment.pools.%d.role", i);
        if (!(allowed[mode] & (1u << pl->role))) {
            char names[128] = "";
            size_t used = 0;
            for (int r = 0; r < 5; r++)
                if (allowed[mode] & (1u << r))
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                             sim_role_name((sim_role)r));
            return fail_key(c, p, "role %s is not allowed in mode %s (allowed: %s)", sim_role_name(pl->role),
                            sim_mode_name(d->mode), names);
        }
        seen |= 1u << pl->role;
        snprintf(p, sizeof p, "deployment.pools.%d.scheduler.chunk_tokens", i);
        if (pl->scheduler.chunk_tokens > pl->scheduler.max_batched_tokens)
            return fail_key(c, p, "chunk_tokens (%d) must be <= max_batched_tokens (%d)",
                            (int)pl->scheduler.chunk_tokens, (int)pl->scheduler.max_batched_tokens);
        snprintf(p, sizeof p, "deployment.pools.%d.scheduler.ratio_min", i);
        if (pl->scheduler.ratio_min > pl->scheduler.ratio_init)
            return fail_key(c, p, "ratio_min (%g) must be <= ratio_init (%g)", pl->scheduler.ratio_min,
                            pl->scheduler.ratio_init);
        int rc = check_spec(c, d, pl, i);
        if (rc) return rc;
        if ((rc = check_autoscale(c, d, pl, i))) return rc;
    }
    for (int r = 0; r < 5; r++)
        if ((allowed[mode] & (1u << r)) && !(seen & (1u << r)))
            return fail_key(c, "deployment.mode", "mode %s needs at least one pool with role %s",
                            sim_mode_name(d->mode), sim_role_name((sim_role)r));
    return 0;
}

/* ---- entry points ---- */

/* base: start from this scenario instead of the defaults (overlay). */
static int load(const char *text, size_t len, const char *name, const char *dir, const char *source,
                const char *const *sets, int n_sets, const sim_scenario *base, sim_scenario *out, sim_err *err)
{
    ctx c = {NULL, err, dir, NULL, base && base->deployment.n_pools > 0 ? (size_t)base->deployment.n_pools : 0,
             base && base->workload.n_classes > 0 ? (size_t)base->workload.n_classes : 0};
    char **origins = NULL;
    int rc = 0;
    if (!name) name = "<scenario>";
    c.sc = malloc(sizeof *c.sc);
    if (n_sets > 0) origins = calloc((size_t)n_sets, sizeof *origins);
    if (!c.sc || (n_sets > 0 && !origins)) {
        rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
        goto fail;
    }
    if (base) *c.sc = *base;
    else sim_scenario_defaults(c.sc);
    if ((rc = sim_yaml_parse(text, len, name, "scenario", &c.root, err))) goto fail;
    if (!c.root || (c.root->kind == SIM_YAML_SCALAR && c.root->is_null)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s:1:1: empty scenario: expected a mapping of keys such as "
                                          "name, model, workload, deployment", name);
        goto fail;
    }
    if (c.root->kind != SIM_YAML_MAP) {
        char got[128];
        sim_yaml_describe(c.root, got, sizeof got);
        rc = sim_err_set(err, SIM_EINVAL, "%s:%d:%d: the top level must be a mapping of keys such as "
                                          "name, model, workload, deployment; got %s",
                         name, c.root->line, c.root->col, got);
        goto fail;
    }
    for (int i = 0; i < n_sets; i++) {
        const char *s = sets[i] ? sets[i] : "";
        size_t n = strlen(s) + 8;
        origins[i] = malloc(n);
        if (!origins[i]) {
            rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
            goto fail;
        }
        snprintf(origins[i], n, "--set %s", s);
        if ((rc = apply_set(&c, s, origins[i]))) goto fail;
    }
    if ((rc = walk(&c, c.root, "", "", 0))) goto fail;
    /* An overlay naming pool 0 keeps the base's other pools. */
    if (base && c.sc->deployment.n_pools < base->deployment.n_pools) c.sc->deployment.n_pools = base->deployment.n_pools;
    if (base && c.sc->workload.n_classes < base->workload.n_classes) c.sc->workload.n_classes = base->workload.n_classes;
    if ((rc = check_workload(&c))) goto fail;
    if ((rc = check_deployment(&c))) goto fail;
    snprintf(c.sc->source_path, sizeof c.sc->source_path, "%s", source);
    *out = *c.sc;
fail:
    sim_yaml_free(c.root);
    for (int i = 0; origins && i < n_sets; i++) free(origins[i]);
    free(origins);
    free(c.sc);
    return rc;
}

int sim_loader_load_string(const char *text, size_t len, const char *name, const char *const *sets,
                           int n_sets, sim_scenario *out, sim_err *err)
{
    return load(text ? text : "", text ? len : 0, name, "", "", sets, n_sets, NULL, out, err);
}

int sim_loader_overlay(const sim_scenario *base, const char *const *sets, int n_sets, sim_scenario *out,
                       sim_err *err)
{
    return load("{}", 2, "<overrides>", "", base->source_path, sets, n_sets, base, out, err);
}

int sim_loader_load_file(const char *path, const char *const *sets, int n_sets, sim_scenario *out,
                         sim_err *err)
{
    char *text = NULL, dir[SIM_PATH_MAX];
    size_t len = 0;
    int rc;
    if (strlen(path) >= SIM_PATH_MAX)
        return sim_err_set(err, SIM_EINVAL, "%.200s...: path too long", path);
    if ((rc = sim_file_read_all(path, "scenario", SIM_FILE_MAX_TEXT, &text, &len, err)) < 0) return rc;
    /* Folder of the file: relative paths inside it are relative to it. */
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = '\0';
    else if (slash) *slash = '\0';
    else dir[0] = '\0';
    rc = load(text, len, path, dir, path, sets, n_sets, NULL, out, err);
    free(text);
    return rc;
}

/* ---- placing errors found after loading ---- */

/* The key path a message starts with ("deployment.pools.0: ..."), if it is
 * one of the schema's; *rest points after its ": ". */
static int leading_key(const char *msg, char *key, size_t size, const char **rest)
{
    size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_.");
    if (n == 0 || n >= size || strncmp(msg + n, ": ", 2) != 0) return 0;
    memcpy(key, msg, n);
    key[n] = '\0';
    char pat[PATH_BUF] = "", buf[PATH_BUF], *save = NULL;
    snprintf(buf, sizeof buf, "%s", key);
    for (char *comp = strtok_r(buf, ".", &save); comp; comp = strtok_r(NULL, ".", &save)) {
        char np[PATH_BUF];
        join(np, sizeof np, pat, all_digits(comp) ? "*" : comp);
        snprintf(pat, sizeof pat, "%s", np);
    }
    if (!sim_schema_lookup(pat)) return 0;
    *rest = msg + n + 2;
    return 1;
}

/* A layout message names the degree it is about ("... by tp=3",
 * "parallel.ep must be ..."): the earliest one mentioned. */
static const char *named_degree(const char *msg)
{
    static const char *const deg[] = {"tp", "pp", "dp", "ep", "dcp", "sp"};
    const char *best = NULL, *best_at = NULL;
    for (size_t i = 0; i < sizeof deg / sizeof deg[0]; i++) {
        size_t dl = strlen(deg[i]);
        for (const char *q = strstr(msg, deg[i]); q; q = strstr(q + 1, deg[i])) {
            int start = q == msg || !((q[-1] >= 'a' && q[-1] <= 'z') || q[-1] == '_');
            if (start && (q[dl] == '=' || (q >= msg + 9 && !strncmp(q - 9, "parallel.", 9) && !isalnum((unsigned char)q[dl])))) {
                if (!best_at || q < best_at) {
                    best = deg[i];
                    best_at = q;
                }
                break;
            }
        }
    }
    return best;
}

int sim_loader_locate_error(const char *path, const char *const *sets, int n_sets, sim_err *err)
{
    char key[PATH_BUF], where[PATH_BUF + 64];
    const char *rest = NULL;
    if (!err || !leading_key(err->msg, key, sizeof key, &rest)) return 0;
    sim_scenario *sc = malloc(sizeof *sc);
    char *text = NULL, **origins = n_sets > 0 ? calloc((size_t)n_sets, sizeof *origins) : NULL;
    size_t len = 0;
    sim_err scratch = {{0}};
    ctx c = {sc, &scratch, "", NULL, 0, 0};
    int found = 0;
    if (!sc || (n_sets > 0 && !origins)) goto out;
    sim_scenario_defaults(sc);
    if (path && sim_file_read_all(path, "scenario", SIM_FILE_MAX_TEXT, &text, &len, NULL) < 0) goto out;
    if (sim_yaml_parse(text ? text : "", len, path ? path : "<scenario>", "scenario", &c.root, NULL) || !c.root ||
        c.root->kind != SIM_YAML_MAP)
        goto out;
    for (int i = 0; i < n_sets; i++) {
        size_t n = strlen(sets[i]) + 8;
        if (!(origins[i] = malloc(n))) goto out;
        snprintf(origins[i], n, "--set %s", sets[i]);
        if (apply_set(&c, sets[i], origins[i])) goto out;
    }
    /* deployment.pools.N (or .parallel) about one degree: point at it. */
    const char *dg = named_degree(rest);
    size_t kl = strlen(key);
    if (dg && !strncmp(key, "deployment.pools.", 17) && !strchr(key + 17, '.')) {
        snprintf(key + kl, sizeof key - kl, ".parallel.%s", dg);
    } else if (dg && kl > 9 && !strcmp(key + kl - 9, ".parallel")) {
        snprintf(key + kl, sizeof key - kl, ".%s", dg);
    }
    const sim_yaml_node *n = find_node(c.root, key);
    sim_yaml_where(n, where, sizeof where);
    char msg[sizeof err->msg];
    if (origin_is_set_of(n->origin, key)) snprintf(msg, sizeof msg, "%s: %s", where, rest);
    else snprintf(msg, sizeof msg, "%s: %s: %s", where, key, rest);
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    found = 1;
out:
    sim_yaml_free(c.root);
    for (int i = 0; origins && i < n_sets; i++) free(origins[i]);
    free(origins);
    free(text);
    free(sc);
    return found;
}

/* ---- reference ---- */

static const char *type_name(sim_schema_type t)
{
    switch (t) {
    case SIM_SCHEMA_MAP: return "section";
    case SIM_SCHEMA_LIST: return "list";
    case SIM_SCHEMA_STR: return "string";
    case SIM_SCHEMA_PATH: return "path";
    case SIM_SCHEMA_MODEL: return "name or path";
    case SIM_SCHEMA_I32:
    case SIM_SCHEMA_I64:
    case SIM_SCHEMA_U64: return "integer";
    case SIM_SCHEMA_F64: return "number";
    case SIM_SCHEMA_F64S: return "number or list";
    case SIM_SCHEMA_BOOL: return "bool";
    case SIM_SCHEMA_ENUM: return "enum";
    }
    return "?";
}

/* Writes a table cell, escaping the pipe that would end the cell. */
static void cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s, f);
    }
}

void sim_loader_write_reference(FILE *f)
{
    size_t n;
    const sim_schema_field *t = sim_schema_table(&n);
    sim_scenario def;
    sim_scenario_defaults(&def);
    fputs("# Scenario reference\n\n"
          "<!-- Generated by sim_loader_write_reference from the loader's schema table; do not edit. -->\n\n"
          "A scenario is one YAML mapping. Every key is optional and has the default shown. "
          "Unknown keys, wrong types and out-of-range values are errors that name the file, line, "
          "column and key path. Any key can be overridden from the command line with "
          "`--set key.path=value` (the value is read as YAML); list items are addressed by index "
          "(`deployment.pools.0.instances=8`), `*` below stands for that index, and the index one "
          "past the end adds an item. Relative paths in a file are relative to the file's folder; "
          "paths given with `--set` are relative to the current directory.\n",
          f);
    for (size_t i = 0; i < n; i++) {
        if (t[i].type != SIM_SCHEMA_MAP) continue;
        const char *names[64];
        if (sim_schema_children(t[i].path, names, 64) == 0) continue;
        fprintf(f, "\n## %s%s%s\n\n%s\n\n", *t[i].path ? "`" : "", *t[i].path ? t[i].path : "Top level",
                *t[i].path ? "`" : "", t[i].desc);
        fputs("| Key | Type | Default | Allowed | Description |\n|---|---|---|---|---|\n", f);
        for (size_t j = 0; j < n; j++) {
            const char *leaf = NULL;
            size_t pl = strlen(t[i].path);
            if (!*t[j].path || t[j].type == SIM_SCHEMA_MAP) continue;
            if (pl == 0 ? strchr(t[j].path, '.') == NULL
                        : (strncmp(t[j].path, t[i].path, pl) == 0 && t[j].path[pl] == '.' &&
                           !strchr(t[j].path + pl + 1, '.')))
                leaf = t[j].path;
            if (!leaf) continue;
            char def_s[SIM_PATH_MAX + 8], range[512];
            sim_schema_default(&t[j], &def, def_s, sizeof def_s);
            if (t[j].type == SIM_SCHEMA_LIST && !strcmp(t[j].path, "deployment.pools"))
                snprintf(def_s, sizeof def_s, "%d item", (int)def.deployment.n_pools);
            else if (t[j].type == SIM_SCHEMA_LIST)
                snprintf(def_s, sizeof def_s, "none");
            sim_schema_range(&t[j], range, sizeof range);
            fprintf(f, "| `%s` | %s | ", leaf, type_name(t[j].type));
            if (def_s[0]) {
                fputc('`', f);
                cell(f, def_s);
                fputc('`', f);
            }
            fputs(" | ", f);
            cell(f, range);
            fputs(" | ", f);
            cell(f, t[j].desc);
            fputs(" |\n", f);
        }
    }
}
