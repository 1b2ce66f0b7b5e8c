/* model_yaml — see model_yaml.h. */
#include "model_yaml.h"
#include "sim_parse.h"
#include "sim_suggest.h"
#include "sim_yaml.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const model_yaml_field *fields;
    int n_fields;
    char *out;
    int *seen;
    sim_err *err;
} yload;

/* A sequence of scalars joined into f's buffer by ", ". */
static int yaml_strlist_set(yload *y, const model_yaml_field *f, const sim_yaml_node *v, const char *path)
{
    char *out = y->out + f->offset, where[512];
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < v->n; i++) {
        const sim_yaml_node *e = v->items[i];
        sim_yaml_where(e, where, sizeof where);
        if (e->kind != SIM_YAML_SCALAR)
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: expected a list of names", where, path);
        const char *s = e->text;
        if (!*s || strchr(s, ','))
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: a name must be non-empty and without commas", where,
                               path);
        size_t n = strlen(s);
        if (used + n + 3 > f->size)
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: list longer than %zu characters", where, path,
                               f->size - 1);
        used += (size_t)snprintf(out + used, f->size - used, "%s%s", used ? ", " : "", s);
    }
    return 0;
}

static int yaml_scalar_set(yload *y, const model_yaml_field *f, const sim_yaml_node *v, const char *path)
{
    char where[512];
    sim_yaml_where(v, where, sizeof where);
    if (f->type == MODEL_YAML_STRLIST && v->kind == SIM_YAML_SEQ) return yaml_strlist_set(y, f, v, path);
    if (v->kind != SIM_YAML_SCALAR)
        return sim_err_set(y->err, SIM_EINVAL, "%s: %s: expected a scalar value", where, path);
    const char *s = v->text;
    switch (f->type) {
    case MODEL_YAML_DOUBLE: {
        double d;
        if (sim_parse_double(s, &d) != SIM_PARSE_OK)
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: expected a number, got '%s'", where, path, s);
        if (d < 0) return sim_err_set(y->err, SIM_EINVAL, "%s: %s: must be >= 0, got '%s'", where, path, s);
        *(double *)(y->out + f->offset) = d * (f->scale != 0 ? f->scale : 1.0);
        return 0;
    }
    case MODEL_YAML_INT: {
        int64_t l;
        if (sim_parse_i64(s, &l) != SIM_PARSE_OK || l < 0 || l > INT32_MAX)
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: expected a non-negative integer, got '%s'", where,
                               path, s);
        *(int32_t *)(y->out + f->offset) = (int32_t)l;
        return 0;
    }
    case MODEL_YAML_BOOL: {
        int b;
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1"))
            b = 1;
        else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0"))
            b = 0;
        else
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: expected true or false, got '%s'", where, path, s);
        *(int32_t *)(y->out + f->offset) = b;
        return 0;
    }
    case MODEL_YAML_STR:
    case MODEL_YAML_STRLIST: {
        size_t n = strlen(s);
        if (f->type == MODEL_YAML_STRLIST && strchr(s, ','))
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: write several names as a list [a, b]", where, path);
        if (n + 1 > f->size)
            return sim_err_set(y->err, SIM_EINVAL, "%s: %s: longer than %zu characters", where, path,
                               f->size - 1);
        memcpy(y->out + f->offset, s, n + 1);
        return 0;
    }
    }
    return sim_err_set(y->err, SIM_EINVAL, "%s: %s: bad field type", where, path);
}

/* Unknown key: the nearest known path when one is close, else every path. */
static int unknown_key(yload *y, const char *where, const char *path)
{
    const char *paths[MODEL_YAML_MAX_FIELDS];
    for (int j = 0; j < y->n_fields; j++) paths[j] = y->fields[j].path;
    const char *near = sim_suggest(path, paths, (size_t)y->n_fields);
    if (near)
        return sim_err_set(y->err, SIM_EINVAL, "%s: unknown key '%s' (did you mean '%s'?)", where, path, near);
    char known[1024] = "";
    size_t used = 0;
    for (int j = 0; j < y->n_fields && used < sizeof known - 64; j++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", j ? ", " : "", paths[j]);
    return sim_err_set(y->err, SIM_EINVAL, "%s: unknown key '%s' (known keys: %s)", where, path, known);
}

/* Fills the fields from a mapping whose keys sit under prefix ("" at the top). */
static int yaml_map_walk(yload *y, const sim_yaml_node *map, const char *prefix)
{
    for (size_t p = 0; p < map->n; p++) {
        const sim_yaml_pair *pr = &map->pairs[p];
        char where[512], path[256];
        snprintf(where, sizeof where, "%s:%d:%d", map->origin, pr->line, pr->col);
        int n = snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", pr->key);
        if (n < 0 || (size_t)n >= sizeof path)
            return sim_err_set(y->err, SIM_EINVAL, "%s: key path too long", where);
        if (pr->value->kind == SIM_YAML_MAP) {
            int rc = yaml_map_walk(y, pr->value, path);
            if (rc) return rc;
            continue;
        }
        int i;
        for (i = 0; i < y->n_fields; i++)
            if (!strcmp(y->fields[i].path, path)) break;
        if (i == y->n_fields) return unknown_key(y, where, path);
        if (y->seen[i]) return sim_err_set(y->err, SIM_EINVAL, "%s: duplicate key '%s'", where, path);
        y->seen[i] = 1;
        int rc = yaml_scalar_set(y, &y->fields[i], pr->value, path);
        if (rc) return rc;
    }
    return 0;
}

int model_yaml_load(const char *text, size_t len, const char *origin, const model_yaml_field *fields,
                    int n_fields, void *out, int *seen, sim_err *err)
{
    int local_seen[MODEL_YAML_MAX_FIELDS] = {0};
    sim_yaml_node *root = NULL;
    if (n_fields > MODEL_YAML_MAX_FIELDS)
        return sim_err_set(err, SIM_EINVAL, "%s: too many schema fields", origin);
    int rc = sim_yaml_parse(text, len, origin, "catalogue", &root, err);
    if (rc) return rc;
    if (!root || root->kind != SIM_YAML_MAP) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: expected a mapping of keys at the top level", origin);
        goto done;
    }
    yload y = {fields, n_fields, (char *)out, local_seen, err};
    rc = yaml_map_walk(&y, root, "");
    if (rc) goto done;
    for (int i = 0; i < n_fields; i++) {
        if (fields[i].required && !local_seen[i]) {
            rc = sim_err_set(err, SIM_EINVAL, "%s: missing required key '%s'", origin, fields[i].path);
            goto done;
        }
    }
    if (seen) memcpy(seen, local_seen, sizeof(int) * (size_t)n_fields);
done:
    sim_yaml_free(root);
    return rc;
}
