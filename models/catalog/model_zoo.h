/* model_zoo — the Hugging Face model configs shipped inside servesim.
 *
 * models/hf/ holds config.json files as `org--name.json.gz` (ModelOpt
 * quantisation configs beside them as `org--name.hf_quant.json.gz`); the build
 * embeds them compressed (model_embed.cmake) and this module finds one by
 * its Hugging Face id and inflates it. Ids compare case-insensitively and
 * may be written `org/name`, `org--name` (the file naming, optionally with
 * `.json`) or `name` alone when exactly one org ships that name. Entries are
 * numbered 0..model_zoo_count()-1 in file order. Inflated text is heap
 * memory the caller frees; nothing else here allocates. */
#ifndef MODEL_ZOO_H
#define MODEL_ZOO_H

#include "sim_err.h"

#include <stddef.h>

/* Number of shipped model configs (quantisation files not counted). */
int model_zoo_count(void);

/* File stem of entry i ("deepseek-ai--DeepSeek-V3"), NULL when out of range. */
const char *model_zoo_stem(int i);

/* Hugging Face id of entry i ("deepseek-ai/DeepSeek-V3") into out. */
void model_zoo_id(int i, char *out, size_t size);

/* Entry of an id, or -1. A bare name matching several orgs is -1. */
int model_zoo_find(const char *id);

/* Entry whose name part (after the org) equals name, any org; -1 when none
 * or several. */
int model_zoo_find_name(const char *name);

/* 1 when entry i ships a ModelOpt quantisation file (hf_quant.json). */
int model_zoo_has_quant(int i);

/* Inflates entry i's config (quant = 0) or its hf_quant.json (quant = 1)
 * into a NUL-terminated heap string; *len excludes the NUL. SIM_EINVAL when
 * there is no such file, SIM_EIO when the embedded data is corrupt,
 * SIM_ENOMEM. */
int model_zoo_read(int i, int quant, char **text, size_t *len, sim_err *err);

/* Converts an id to the zoo's stem form in place: the first '/' becomes
 * "--", a trailing ".json" is dropped. */
void model_zoo_stem_of(const char *id, char *out, size_t size);

#endif
