/* sim_yaml — see sim_yaml.h. */
#include "sim_yaml.h"

#include <yaml.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_yaml_write_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\x%02X", (unsigned)*p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void sim_yaml_write_comment_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, f);
}

sim_yaml_node *sim_yaml_node_new(sim_yaml_kind kind, const char *origin)
{
    sim_yaml_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->origin = origin ? origin : "";
    if (kind == SIM_YAML_SCALAR) {
        n->text = calloc(1, 1);
        if (!n->text) {
            free(n);
            return NULL;
        }
    }
    return n;
}

void sim_yaml_free(sim_yaml_node *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == SIM_YAML_MAP) {
            free(n->pairs[i].key);
            sim_yaml_free(n->pairs[i].value);
        } else if (n->kind == SIM_YAML_SEQ) {
            sim_yaml_free(n->items[i]);
        }
    }
    free(n->pairs);
    free(n->items);
    free(n->text);
    free(n);
}

sim_yaml_pair *sim_yaml_map_find(const sim_yaml_node *map, const char *key)
{
    if (!map || map->kind != SIM_YAML_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->pairs[i].key, key) == 0) return &map->pairs[i];
    return NULL;
}

/* Makes room for one more child; doubling keeps appends amortised O(1). */
static int grow(sim_yaml_node *n, sim_err *err)
{
    if (n->n < n->cap) return 0;
    size_t cap = n->cap ? n->cap * 2 : 4;
    if (n->kind == SIM_YAML_MAP) {
        sim_yaml_pair *p = realloc(n->pairs, cap * sizeof *p);
        if (!p) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", n->origin);
        n->pairs = p;
    } else {
        sim_yaml_node **p = realloc(n->items, cap * sizeof *p);
        if (!p) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", n->origin);
        n->items = p;
    }
    n->cap = cap;
    return 0;
}

int sim_yaml_map_add(sim_yaml_node *map, const char *key, sim_yaml_node *value, sim_err *err)
{
    int rc = grow(map, err);
    char *k = NULL;
    if (rc) goto fail;
    k = strdup(key);
    if (!k) {
        rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", map->origin);
        goto fail;
    }
    map->pairs[map->n].key = k;
    map->pairs[map->n].line = 0;
    map->pairs[map->n].col = 0;
    map->pairs[map->n].value = value;
    map->n++;
    return 0;
fail:
    sim_yaml_free(value);
    return rc;
}

int sim_yaml_seq_add(sim_yaml_node *seq, sim_yaml_node *item, sim_err *err)
{
    int rc = grow(seq, err);
    if (rc) {
        sim_yaml_free(item);
        return rc;
    }
    seq->items[seq->n++] = item;
    return 0;
}

void sim_yaml_where(const sim_yaml_node *n, char *buf, size_t size)
{
    if (n->line > 0)
        snprintf(buf, size, "%s:%d:%d", n->origin, n->line, n->col);
    else
        snprintf(buf, size, "%s", n->origin);
}

void sim_yaml_describe(const sim_yaml_node *n, char *buf, size_t size)
{
    if (n->kind == SIM_YAML_MAP) {
        snprintf(buf, size, "a mapping");
    } else if (n->kind == SIM_YAML_SEQ) {
        snprintf(buf, size, "a list");
    } else if (n->is_null) {
        snprintf(buf, size, "an empty value");
    } else if (strlen(n->text) > 48) {
        snprintf(buf, size, "'%.45s...'", n->text);
    } else {
        snprintf(buf, size, "'%s'", n->text);
    }
}

/* ---- building the tree from libyaml events ---- */

typedef struct {
    sim_yaml_node *node;
    const char *key;   /* component this node hangs under in its parent (map) */
    long index;        /* ... or its index (seq) */
    char *pending;     /* map: key read, value not yet seen */
    int pline, pcol;
} frame;

typedef struct {
    const char *origin;
    const char *what;
    const char *text;
    size_t len;
    frame stack[SIM_YAML_MAX_DEPTH + 1];
    int depth;
    sim_yaml_node *root;
} builder;

/* Key path of the innermost open collection, plus `last` if given. */
static void builder_path(const builder *b, const char *last, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 1; i < b->depth && used < size; i++) {
        const frame *f = &b->stack[i];
        if (f->key)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "." : "", f->key);
        else
            used += (size_t)snprintf(buf + used, size - used, "%s%ld", used ? "." : "", f->index);
    }
    if (last && used < size) snprintf(buf + used, size - used, "%s%s", used ? "." : "", last);
}

/* Hangs a finished node into the innermost open collection. On a mapping
 * the first scalar is the key; the node after it is the value. Takes
 * ownership of n. *consumed_as_key tells the caller not to push n. */
static int builder_attach(builder *b, sim_yaml_node *n, int *consumed_as_key, sim_err *err)
{
    *consumed_as_key = 0;
    if (b->depth == 0) {
        b->root = n;
        return 0;
    }
    frame *top = &b->stack[b->depth - 1];
    if (top->node->kind == SIM_YAML_SEQ) {
        return sim_yaml_seq_add(top->node, n, err);
    }
    if (!top->pending) {
        if (n->kind != SIM_YAML_SCALAR) {
            int rc = sim_err_set(err, SIM_EINVAL, "%s:%d:%d: mapping keys must be plain words, got %s",
                                 b->origin, n->line, n->col,
                                 n->kind == SIM_YAML_MAP ? "a mapping" : "a list");
            sim_yaml_free(n);
            return rc;
        }
        const sim_yaml_pair *dup = sim_yaml_map_find(top->node, n->text);
        if (dup) {
            char path[512];
            builder_path(b, n->text, path, sizeof path);
            int rc = sim_err_set(err, SIM_EINVAL,
                                 "%s:%d:%d: duplicate key '%s' at %s (first defined at line %d, column %d)",
                                 b->origin, n->line, n->col, n->text, path, dup->line, dup->col);
            sim_yaml_free(n);
            return rc;
        }
        top->pending = n->text;
        top->pline = n->line;
        top->pcol = n->col;
        n->text = NULL;
        sim_yaml_free(n);
        *consumed_as_key = 1;
        return 0;
    }
    int rc = sim_yaml_map_add(top->node, top->pending, n, err);
    free(top->pending);
    top->pending = NULL;
    if (rc) return rc;
    top->node->pairs[top->node->n - 1].line = top->pline;
    top->node->pairs[top->node->n - 1].col = top->pcol;
    return 0;
}

/* Converts a byte offset into a 1-based line and column. */
static void offset_mark(const char *text, size_t len, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

static int syntax_error(const builder *b, const yaml_parser_t *p, sim_err *err)
{
    if (p->error == YAML_MEMORY_ERROR)
        return sim_err_set(err, SIM_ENOMEM, "%s:1:1: out of memory while parsing YAML", b->origin);
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_READER_ERROR) {
        int line, col;
        offset_mark(b->text, b->len, p->problem_offset, &line, &col);
        return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: YAML syntax error: %s", b->origin, line, col,
                           problem);
    }
    if (p->context)
        return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: YAML syntax error: %s (%s at line %d, column %d)",
                           b->origin, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1,
                           problem, p->context, (int)p->context_mark.line + 1,
                           (int)p->context_mark.column + 1);
    return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: YAML syntax error: %s", b->origin,
                       (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1, problem);
}

static int is_null_text(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* Handles one event; sets *done at the end of the stream. */
static int builder_event(builder *b, const yaml_event_t *ev, int *ndocs, int *done, sim_err *err)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    sim_yaml_node *n = NULL;
    int consumed = 0, rc;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++*ndocs > 1)
            return sim_err_set(err, SIM_EINVAL,
                               "%s:%d:%d: a %s file holds one YAML document; a second starts here",
                               b->origin, line, col, b->what);
        return 0;
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return 0;
    case YAML_ALIAS_EVENT:
        return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: YAML aliases (*%s) are not supported in %ss",
                           b->origin, line, col, (const char *)ev->data.alias.anchor, b->what);
    case YAML_SCALAR_EVENT: {
        n = sim_yaml_node_new(SIM_YAML_SCALAR, b->origin);
        if (!n) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", b->origin);
        char *t = malloc(ev->data.scalar.length + 1);
        if (!t) {
            sim_yaml_free(n);
            return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", b->origin);
        }
        memcpy(t, ev->data.scalar.value, ev->data.scalar.length);
        t[ev->data.scalar.length] = '\0';
        free(n->text);
        n->text = t;
        n->is_null = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && is_null_text(t);
        n->line = line;
        n->col = col;
        return builder_attach(b, n, &consumed, err);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (b->depth >= SIM_YAML_MAX_DEPTH)
            return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: nesting deeper than %d levels", b->origin,
                               line, col, SIM_YAML_MAX_DEPTH);
        n = sim_yaml_node_new(ev->type == YAML_MAPPING_START_EVENT ? SIM_YAML_MAP : SIM_YAML_SEQ,
                              b->origin);
        if (!n) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", b->origin);
        n->line = line;
        n->col = col;
        {
            frame nf = {n, NULL, 0, NULL, 0, 0};
            if (b->depth > 0) {
                const frame *top = &b->stack[b->depth - 1];
                if (top->node->kind == SIM_YAML_SEQ) nf.index = (long)top->node->n;
                /* key string is moved into the pair by attach; point at the copy there */
            }
            rc = builder_attach(b, n, &consumed, err);
            if (rc) return rc;
            if (b->depth > 0) {
                const frame *top = &b->stack[b->depth - 1];
                if (top->node->kind == SIM_YAML_MAP) nf.key = top->node->pairs[top->node->n - 1].key;
            }
            b->stack[b->depth++] = nf;
        }
        return 0;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0) b->depth--;
        return 0;
    default:
        return 0;
    }
}

int sim_yaml_parse(const char *text, size_t len, const char *origin, const char *what, sim_yaml_node **out,
                   sim_err *err)
{
    yaml_parser_t p;
    builder b;
    int rc = 0, done = 0, ndocs = 0;
    *out = NULL;
    memset(&b, 0, sizeof b);
    b.origin = origin ? origin : "";
    b.what = what ? what : "YAML";
    b.text = text;
    b.len = len;
    if (!yaml_parser_initialize(&p)) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", b.origin);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(&b, &p, err);
            goto fail;
        }
        rc = builder_event(&b, &ev, &ndocs, &done, err);
        yaml_event_delete(&ev);
        if (rc) goto fail;
    }
    yaml_parser_delete(&p);
    *out = b.root;
    return 0;
fail:
    for (int i = 0; i < b.depth; i++) free(b.stack[i].pending);
    sim_yaml_free(b.root);
    yaml_parser_delete(&p);
    return rc;
}
