/* sim_cli — the `servesim` command line: verbs run, validate, schema,
 * version, calibrate and db, each with --help. The only code that prints for
 * users and chooses exit codes (0 ok, 1 run failed or overloaded, 2 bad
 * usage or input). */
#ifndef SIM_CLI_H
#define SIM_CLI_H

int sim_cli_main(int argc, char **argv);

#endif
