/* sim_cli_ingest — `servesim db ingest DIR --gpu NAME --db FILE
 * [--ops L] [--dtypes L] [--fastest]` (sim_cli_ingest.c): a serving
 * engine's measured per-op tables into a perf-db. argv[0] is "ingest";
 * prints and returns the exit status (0 ok, 1 failure, 2 bad usage or
 * input); a perf-db the command created is removed again when it fails. */
#ifndef SIM_CLI_INGEST_H
#define SIM_CLI_INGEST_H

int sim_cli_ingest(int argc, char **argv);

#endif
