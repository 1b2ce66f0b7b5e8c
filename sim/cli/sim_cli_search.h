/* sim_cli_search — the `servesim search` command (sim_cli_search.c): loads
 * the scenario, runs the deployment search of sim_search.h, prints the
 * tables or JSON and, with --out DIR, writes the recommended scenario,
 * launch files and plots. argv[0] is the verb; returns the exit status
 * (0 a deployment meets the SLO, 1 none does or the search failed, 2 bad
 * usage or input, 130 interrupted). */
#ifndef SIM_CLI_SEARCH_H
#define SIM_CLI_SEARCH_H

int sim_cli_search(int argc, char **argv);

#endif
