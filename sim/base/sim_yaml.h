/* sim_yaml — the one YAML reader: a small document tree with source marks,
 * built on libyaml.
 *
 * libyaml only hands out events; every loader of servesim's YAML (the
 * scenario loader of sim/config, the catalogue files of models/catalog)
 * needs to look keys up, walk nested mappings and point every error at a
 * line and column, and the scenario loader replaces values (for `--set`
 * overrides), so this module turns one YAML document into a tree of scalar,
 * mapping and sequence nodes. It knows no schema: what a key means is the
 * loader's business. Lines and columns are 1-based; 0 means the node did
 * not come from the file (an override). Each node records an `origin`
 * string (the file name or the override text) which it does NOT own: the
 * caller keeps it alive as long as the tree. Each node owns its children and
 * strings; sim_yaml_free releases a whole subtree. Aliases are rejected
 * (they would let a tiny file expand without bound), a file holds one
 * document, duplicate mapping keys and keys that are not scalars are errors,
 * and nesting deeper than SIM_YAML_MAX_DEPTH is refused so hostile input
 * cannot exhaust memory. Failures return a negative SIM_E* code with a
 * message "origin:line:col: ..." in err. */
#ifndef SIM_YAML_H
#define SIM_YAML_H

#include "sim_err.h"

#include <stddef.h>
#include <stdio.h>

#define SIM_YAML_MAX_DEPTH 64

typedef enum {
    SIM_YAML_SCALAR = 0,
    SIM_YAML_MAP = 1,
    SIM_YAML_SEQ = 2
} sim_yaml_kind;

typedef struct sim_yaml_node sim_yaml_node;

typedef struct {
    char *key;
    int line, col;         /* mark of the key itself */
    sim_yaml_node *value;  /* owned */
} sim_yaml_pair;

struct sim_yaml_node {
    sim_yaml_kind kind;
    int line, col;          /* 1-based; 0 = not from a file */
    const char *origin;     /* file name or override text; not owned */
    char *text;             /* scalar text (NUL-terminated, never NULL for scalars) */
    int is_null;            /* plain scalar "", "~" or "null" */
    size_t n, cap;          /* number of pairs (map) or items (seq) */
    sim_yaml_pair *pairs;   /* map */
    sim_yaml_node **items;  /* seq */
};

/* Parses exactly one document. *out is NULL when the stream holds no
 * document (empty file or only comments). Messages start "origin:line:col: ";
 * what names the kind of file in those that refuse a second document or an
 * alias ("scenario": "a scenario file holds one YAML document"). */
int sim_yaml_parse(const char *text, size_t len, const char *origin, const char *what, sim_yaml_node **out,
                   sim_err *err);

/* New empty node of a kind (scalar text ""), with the given origin, no marks. */
sim_yaml_node *sim_yaml_node_new(sim_yaml_kind kind, const char *origin);

void sim_yaml_free(sim_yaml_node *n);

/* Mapping lookup; returns the pair or NULL. */
sim_yaml_pair *sim_yaml_map_find(const sim_yaml_node *map, const char *key);

/* Appends key: value to a mapping (takes ownership of value, even on failure). */
int sim_yaml_map_add(sim_yaml_node *map, const char *key, sim_yaml_node *value, sim_err *err);

/* Appends an item to a sequence (takes ownership of item, even on failure). */
int sim_yaml_seq_add(sim_yaml_node *seq, sim_yaml_node *item, sim_err *err);

/* Writes "origin:line:col" (or just "origin" for nodes without marks). */
void sim_yaml_where(const sim_yaml_node *n, char *buf, size_t size);

/* Short description for messages: "a mapping", "a list", "an empty value"
 * or the scalar text quoted ('fast'), truncated to fit. */
void sim_yaml_describe(const sim_yaml_node *n, char *buf, size_t size);

/* Writes s to f as a YAML double-quoted scalar (with the quotes): '"' and
 * '\\' are escaped, newline, tab and carriage return as \\n, \\t, \\r and
 * every other control character (and DEL) as \\xHH, so any string reads
 * back unchanged. Bytes from 0x80 up are copied (UTF-8 passes through). */
void sim_yaml_write_quoted(FILE *f, const char *s);

/* Writes s to f for the inside of a '#' comment: each control character
 * (a newline included) becomes a space, so the comment stays one line. */
void sim_yaml_write_comment_text(FILE *f, const char *s);

#endif
