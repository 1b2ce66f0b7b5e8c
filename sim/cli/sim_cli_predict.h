/* sim_cli_predict — the `servesim predict` command: the op-by-op cost of one
 * iteration of one instance, from flags (model, GPU, layout, dtypes, batch)
 * or from a scenario file (its pool 0), as a table or JSON. CLI entry point:
 * it prints and returns an exit code (0 ok, 2 usage/input error). */
#ifndef SIM_CLI_PREDICT_H
#define SIM_CLI_PREDICT_H

/* argv[0] = "predict". */
int sim_cli_predict(int argc, char **argv);

#endif
