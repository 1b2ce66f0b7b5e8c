/* model_show — the `servesim model show|list` commands: a model as servesim
 * loads it (layers by kind, sizes, experts, parameters, weight bytes by
 * format as loaded, KV and state bytes per token, notes), as text or JSON,
 * and the list of catalogue models and shipped Hugging Face configs. CLI
 * entry point: prints and returns an exit code (0 ok, 2 usage or input
 * error, 1 out of memory). model_show_json returns a new jansson object the
 * caller decrefs. */
#ifndef MODEL_SHOW_H
#define MODEL_SHOW_H

#include "model_catalog.h"

#include <jansson.h>
#include <stdio.h>

/* argv[0] = "model". */
int model_cli_model(int argc, char **argv);

/* The description `model show` prints, as JSON / as text. */
json_t *model_show_json(const model_spec *m);
void model_show_text(const model_spec *m, FILE *o);

#endif
