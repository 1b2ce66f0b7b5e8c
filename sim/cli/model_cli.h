/* model_cli — the `servesim predict` command: the op-by-op cost of one
 * iteration of one instance, from flags (model, GPU, layout, dtypes, batch)
 * or from a scenario file (its pool 0), as a table or JSON. CLI entry point:
 * it prints and returns an exit code (0 ok, 2 usage/input error). */
#ifndef MODEL_CLI_H
#define MODEL_CLI_H

/* argv[0] = "predict". */
int model_cli_predict(int argc, char **argv);

#endif
