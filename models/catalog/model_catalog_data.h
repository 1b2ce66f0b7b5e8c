/* model_catalog_data — the catalogue YAML files embedded into the binary.
 *
 * models/catalog/CMakeLists.txt generates the table below at build time from the
 * YAML files in models/gpus and models/archs (see model_embed.cmake), so
 * servesim needs no installed data files. kind is "gpus" or "archs"; name is
 * the file stem; text is the file's bytes, NUL-terminated, len excluding
 * the NUL. Read-only static data. */
#ifndef MODEL_CATALOG_DATA_H
#define MODEL_CATALOG_DATA_H

#include <stddef.h>

typedef struct {
    const char *kind;
    const char *name;
    const char *text;
    size_t len;
} model_catalog_file;

extern const model_catalog_file model_catalog_files[];
extern const int model_catalog_n_files;

#endif
