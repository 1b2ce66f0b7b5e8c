/* sim_cli_calib — the `servesim calibrate` and `servesim db` commands (the lead
 * wires them into servesim's main). argv[0] is the verb; both print to
 * stdout/stderr and return the process exit code: 0 success, 1 failure
 * (including failed kernel checks), 2 usage error. --help prints usage.
 *   calibrate [--grid tiny|quick|full] [--ops LIST] [--backend gpu|cpu]
 *             [--check] [--max-points N] [--reps N] [--warmup N]
 *             [--log FILE] [--quiet] --db FILE
 *   db list FILE | db show FILE [--op OP] [--gpu ID] | db export FILE OUT.sql
 *      | db import FILE IN.sql | db lookup FILE --gpu NAME --op OP --dtype T
 *      [--kernel K] SHAPE...   (SHAPE as m=64 n=4096 …)
 *      | db ingest DIR --gpu NAME --db FILE [--ops L] [--dtypes L] [--fastest]
 *        (sim_cli_ingest.c: argv[0] is "ingest") */
#ifndef SIM_CLI_CALIB_H
#define SIM_CLI_CALIB_H

int sim_cli_calibrate(int argc, char **argv);
int sim_cli_db(int argc, char **argv);

#endif
