/* model_yaml — schema-driven loading of the flat catalogue YAML files.
 *
 * A catalogue file is a mapping (optionally with nested mappings, addressed
 * as "outer.inner") of scalars. The caller describes the accepted keys in a
 * table of model_yaml_field (dotted path, type, byte offset in the output
 * struct, unit scale) and model_yaml_load() fills the struct. The text is
 * read by the one YAML reader, sim/base's sim_yaml (so the catalogue and the
 * scenario loader refuse the same things: syntax errors, aliases, a second
 * document, duplicate keys); this module only maps the tree onto the table.
 * Unknown keys (with the nearest known key, or the list of keys), repeated
 * keys, bad numbers and missing required keys are errors naming the origin,
 * line, column and key path. Numbers are multiplied by the field's scale,
 * which is how YAML units (TFLOP/s, GB, µs) become SI. The tree is freed
 * before returning; the caller owns the struct. */
#ifndef MODEL_YAML_H
#define MODEL_YAML_H

#include "sim_err.h"

#include <stddef.h>

typedef enum {
    MODEL_YAML_DOUBLE = 0,
    MODEL_YAML_INT = 1,   /* int32_t */
    MODEL_YAML_STR = 2,   /* char[size] */
    MODEL_YAML_BOOL = 3,  /* int32_t 0/1 */
    MODEL_YAML_STRLIST = 4 /* char[size]: a sequence of scalars (or one scalar), stored
                            * joined by ", " (names without commas) */
} model_yaml_type;

typedef struct {
    const char *path;     /* "hbm_tbps", "efficiency.gemm" */
    model_yaml_type type;
    size_t offset;        /* offsetof(struct, field) */
    size_t size;          /* buffer size for MODEL_YAML_STR */
    double scale;         /* multiplier for MODEL_YAML_DOUBLE (0 means 1) */
    int required;
} model_yaml_field;

#define MODEL_YAML_MAX_FIELDS 64

/* Parses text (len bytes) named origin. seen (may be NULL) receives one
 * flag per field saying whether the key was present. */
int model_yaml_load(const char *text, size_t len, const char *origin, const model_yaml_field *fields,
                    int n_fields, void *out, int *seen, sim_err *err);

#endif
