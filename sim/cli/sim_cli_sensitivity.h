/* sim_cli_sensitivity — `servesim sensitivity SCENARIO --op FAMILY
 * --speedup S1,S2,...`: what a faster kernel is worth. The scenario runs
 * as it is and once per speedup with hardware.op_speedup.FAMILY multiplied
 * by S (model_op_family.h: every op of the family takes 1/S of its priced
 * time), on threads through sim_pfor, and the headline figures
 * (sim_headline.h) of every run print beside the base run's with the
 * change in percent; --search reruns the deployment search at each speedup
 * and says whether the recommendation changes. A speedup of 1 reproduces
 * the base run bit for bit. Returns the exit status (0, 1 failed, 2 bad
 * input, 3 some run overloaded). */
#ifndef SIM_CLI_SENSITIVITY_H
#define SIM_CLI_SENSITIVITY_H

/* argv[0] is the verb. */
int sim_cli_sensitivity(int argc, char **argv);

#endif
