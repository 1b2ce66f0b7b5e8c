/* model_yaml — see model_yaml.h. */
#include "model_yaml.h"
#include "sim_parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

typedef struct {
    yaml_document_t *doc;
    const char *origin;
    const model_yaml_field *fields;
    int n_fields;
    char *out;
    int *seen;
    sim_err *err;
} yload;

/* A sequence of scalars joined into f's buffer by ", ". */
static int yaml_strlist_set(yload *y, const model_yaml_field *f, yaml_node_t *v, const char *path)
{
    char *out = y->out + f->offset;
    size_t used = 0;
    out[0] = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        yaml_node_t *e = yaml_document_get_node(y->doc, *it);
        int line = e ? (int)e->start_mark.line + 1 : 0, col = e ? (int)e->start_mark.column + 1 : 0;
        if (!e || e->type != YAML_SCALAR_NODE)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: expected a list of names", y->origin, line, col,
                               path);
        const char *s = (const char *)e->data.scalar.value;
        if (!*s || strchr(s, ','))
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: a name must be non-empty and without commas",
                               y->origin, line, col, path);
        size_t n = strlen(s);
        if (used + n + 3 > f->size)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: list longer than %zu characters", y->origin,
                               line, col, path, f->size - 1);
        used += (size_t)snprintf(out + used, f->size - used, "%s%s", used ? ", " : "", s);
    }
    return 0;
}

static int yaml_scalar_set(yload *y, const model_yaml_field *f, yaml_node_t *v, const char *path)
{
    int line = (int)v->start_mark.line + 1, col = (int)v->start_mark.column + 1;
    if (f->type == MODEL_YAML_STRLIST && v->type == YAML_SEQUENCE_NODE) return yaml_strlist_set(y, f, v, path);
    if (v->type != YAML_SCALAR_NODE)
        return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: expected a scalar value", y->origin, line,
                           col, path);
    const char *s = (const char *)v->data.scalar.value;
    switch (f->type) {
    case MODEL_YAML_DOUBLE: {
        double d;
        if (sim_parse_double(s, &d) != SIM_PARSE_OK)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: expected a number, got '%s'", y->origin,
                               line, col, path, s);
        if (d < 0)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: must be >= 0, got '%s'", y->origin, line,
                               col, path, s);
        *(double *)(y->out + f->offset) = d * (f->scale != 0 ? f->scale : 1.0);
        return 0;
    }
    case MODEL_YAML_INT: {
        int64_t l;
        if (sim_parse_i64(s, &l) != SIM_PARSE_OK || l < 0 || l > INT32_MAX)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: expected a non-negative integer, got '%s'",
                               y->origin, line, col, path, s);
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
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: expected true or false, got '%s'", y->origin,
                               line, col, path, s);
        *(int32_t *)(y->out + f->offset) = b;
        return 0;
    }
    case MODEL_YAML_STR:
    case MODEL_YAML_STRLIST: {
        size_t n = strlen(s);
        if (f->type == MODEL_YAML_STRLIST && strchr(s, ','))
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: write several names as a list [a, b]",
                               y->origin, line, col, path);
        if (n + 1 > f->size)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: %s: longer than %zu characters", y->origin,
                               line, col, path, f->size - 1);
        memcpy(y->out + f->offset, s, n + 1);
        return 0;
    }
    }
    return sim_err_set(y->err, SIM_EINVAL, "%s: %s: bad field type", y->origin, path);
}

static int yaml_map_walk(yload *y, yaml_node_t *map, const char *prefix)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
        if (!k || !v) return sim_err_set(y->err, SIM_EINVAL, "%s: malformed mapping", y->origin);
        int line = (int)k->start_mark.line + 1, col = (int)k->start_mark.column + 1;
        if (k->type != YAML_SCALAR_NODE)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: keys must be plain scalars", y->origin, line, col);
        char path[256];
        int n = snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "",
                         (const char *)k->data.scalar.value);
        if (n < 0 || (size_t)n >= sizeof path)
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: key path too long", y->origin, line, col);
        if (v->type == YAML_MAPPING_NODE) {
            int rc = yaml_map_walk(y, v, path);
            if (rc) return rc;
            continue;
        }
        int i;
        for (i = 0; i < y->n_fields; i++)
            if (!strcmp(y->fields[i].path, path)) break;
        if (i == y->n_fields) {
            /* Say which keys exist so a typo is quick to fix. */
            char known[1024] = "";
            size_t used = 0;
            for (int j = 0; j < y->n_fields && used < sizeof known - 64; j++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", j ? ", " : "",
                                         y->fields[j].path);
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: unknown key '%s' (known keys: %s)", y->origin,
                               line, col, path, known);
        }
        if (y->seen[i])
            return sim_err_set(y->err, SIM_EINVAL, "%s:%d:%d: duplicate key '%s'", y->origin, line, col, path);
        y->seen[i] = 1;
        int rc = yaml_scalar_set(y, &y->fields[i], v, path);
        if (rc) return rc;
    }
    return 0;
}

int model_yaml_load(const char *text, size_t len, const char *origin, const model_yaml_field *fields,
                    int n_fields, void *out, int *seen, sim_err *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    int local_seen[MODEL_YAML_MAX_FIELDS] = {0};
    int rc = 0, have_doc = 0;
    if (n_fields > MODEL_YAML_MAX_FIELDS)
        return sim_err_set(err, SIM_EINVAL, "%s: too many schema fields", origin);
    if (!yaml_parser_initialize(&parser)) return sim_err_set(err, SIM_ENOMEM, "%s: yaml parser init", origin);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s:%d:%d: YAML error: %s", origin, (int)parser.problem_mark.line + 1,
                         (int)parser.problem_mark.column + 1, parser.problem ? parser.problem : "unknown");
        goto fail;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: expected a mapping of keys at the top level", origin);
        goto fail;
    }
    yload y = {&doc, origin, fields, n_fields, (char *)out, local_seen, err};
    rc = yaml_map_walk(&y, root, "");
    if (rc) goto fail;
    for (int i = 0; i < n_fields; i++) {
        if (fields[i].required && !local_seen[i]) {
            rc = sim_err_set(err, SIM_EINVAL, "%s: missing required key '%s'", origin, fields[i].path);
            goto fail;
        }
    }
    if (seen) memcpy(seen, local_seen, sizeof(int) * (size_t)n_fields);
fail:
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}
