/* sim_schema — the one table describing every scenario key.
 *
 * Each entry gives a key path ("workload.arrival.rate"; "*" stands for a
 * list index, as in "deployment.pools.*.instances"), its type, where it
 * lives in sim_scenario (byte offset; pool keys are offsets into
 * sim_pool_cfg, class keys into sim_class_cfg), its allowed range or names and a one-line description.
 * Mapping and list entries describe sections. The loader validates and
 * converts with this table and prints the Markdown reference from it, and
 * defaults shown in the reference are read from sim_scenario_defaults, so
 * neither the checks nor the documentation can drift from the struct. The
 * table is constant static data; nothing here allocates. */
#ifndef SIM_SCHEMA_H
#define SIM_SCHEMA_H

#include "sim_scenario.h"

#include <stddef.h>

typedef enum {
    SIM_SCHEMA_MAP = 0,     /* section (mapping) */
    SIM_SCHEMA_LIST = 1,    /* list of sections; items are "<path>.*" */
    SIM_SCHEMA_STR = 2,     /* char[size] */
    SIM_SCHEMA_PATH = 3,    /* char[size], relative paths resolved against the file's folder */
    SIM_SCHEMA_MODEL = 4,   /* char[size], a path only when it ends in .json/.yaml/.yml */
    SIM_SCHEMA_I32 = 5,     /* int32_t */
    SIM_SCHEMA_I64 = 6,     /* int64_t */
    SIM_SCHEMA_U64 = 7,     /* uint64_t */
    SIM_SCHEMA_F64 = 8,     /* double */
    SIM_SCHEMA_BOOL = 9,    /* int32_t 0/1 */
    SIM_SCHEMA_ENUM = 10,   /* C enum: names[i] is value enum_base + i */
    SIM_SCHEMA_F64S = 12    /* sim_f64_list: a number, or a list of up to SIM_SPEC_MAX_DRAFT numbers */
} sim_schema_type;

enum {
    SIM_SCHEMA_HAS_MIN = 1,
    SIM_SCHEMA_HAS_MAX = 2,
    SIM_SCHEMA_MIN_EXCL = 4, /* value must be > min rather than >= min */
    SIM_SCHEMA_MAX_EXCL = 8
};

/* Where a field's offset points (sim_schema_field.in_pool). */
enum {
    SIM_SCHEMA_IN_SCENARIO = 0,
    SIM_SCHEMA_IN_POOL = 1,  /* sim_pool_cfg (path under deployment.pools.*) */
    SIM_SCHEMA_IN_CLASS = 2  /* sim_class_cfg (path under workload.classes.*) */
};

typedef struct {
    const char *path;
    sim_schema_type type;
    int in_pool;             /* SIM_SCHEMA_IN_*: what offset is into */
    size_t offset, size;
    unsigned flags;          /* SIM_SCHEMA_HAS_MIN ... */
    double min, max;         /* numbers: value range; LIST: item count range */
    const char *const *names;
    int n_names;
    int enum_base;
    const char *desc;
} sim_schema_field;

/* Writes a sim_f64_list (at p) as YAML: one number, or [a, b, ...]; "[]" when empty. */
void sim_schema_f64s_format(const void *p, char *buf, size_t size);

/* The whole table, in document order. */
const sim_schema_field *sim_schema_table(size_t *n);

/* Entry for a pattern path ("" is the top-level mapping), or NULL. */
const sim_schema_field *sim_schema_lookup(const char *pattern);

/* Child key names of a section pattern; returns how many (up to max). */
int sim_schema_children(const char *pattern, const char **names, int max);

/* Closest child key of `pattern` to `key` by edit distance, or NULL when
 * nothing is close enough to be a plausible typo. */
const char *sim_schema_suggest(const char *pattern, const char *key);

/* Levenshtein distance (bytes). */
int sim_schema_edit_distance(const char *a, const char *b);

/* What a value must be, for messages and docs: "a number > 0",
 * "an integer in 1..1024", "one of poisson|gamma|...", "true or false". */
void sim_schema_expect(const sim_schema_field *f, char *buf, size_t size);

/* Allowed range/values only ("> 0", "1..1024", "poisson, gamma"), "" if any. */
void sim_schema_range(const sim_schema_field *f, char *buf, size_t size);

/* Default value formatted from a defaults struct (pool keys read pools[0]). */
void sim_schema_default(const sim_schema_field *f, const sim_scenario *def, char *buf, size_t size);

/* Name of an enum value of an ENUM field, or NULL when it has none. */
const char *sim_schema_enum_name(const sim_schema_field *f, int value);

/* Value of an ENUM field's name, by the loader's rule (the exact name), or
 * -1 when it is not one of f's names. */
int sim_schema_enum_value(const sim_schema_field *f, const char *name);

#endif
