/* model_op_cli — the `servesim op` command: the latency of one op as the
 * cost model prices it (model_op.h), from flags or for every row of a
 * shared per-op table (`--csv`, written back with predicted_ms and source),
 * the error of the model on a tree of tables (`--score`), and the fit of
 * its parameters from such a tree (`--fit`, which writes
 * models/cost/model_op_params.c). CLI entry point: prints and returns an exit
 * code (0 ok, 1 failure, 2 usage or input error). */
#ifndef MODEL_OP_CLI_H
#define MODEL_OP_CLI_H

/* argv[0] = "op". */
int model_cli_op(int argc, char **argv);

#endif
