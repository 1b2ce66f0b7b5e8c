/* servesim — entry point; everything lives in sim_cli.c. */
#include "sim_cli.h"

int main(int argc, char **argv) { return sim_cli_main(argc, argv); }
