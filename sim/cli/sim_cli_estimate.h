/* sim_cli_estimate — `servesim estimate` (latency and throughput of one
 * deployment given on the command line) and `servesim init` (a commented
 * starting scenario with a search block). argv[0] is the verb; both return
 * the exit status (0 ok, 1 failure, 2 bad usage or input, 3 estimate
 * overloaded). See sim_cli_estimate.c. */
#ifndef SIM_CLI_ESTIMATE_H
#define SIM_CLI_ESTIMATE_H

int sim_cli_estimate(int argc, char **argv);
int sim_cli_init(int argc, char **argv);

#endif
