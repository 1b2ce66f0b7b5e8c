/* sim_cli_replications — see sim_cli_replications.h. */
#include "sim_cli_replications.h"

#include "sim_loader.h"
#include "sim_replicate.h"

#include <stdio.h>
#include <stdlib.h>

#define EXIT_USAGE 2
#define EXIT_OVERLOAD 3

int sim_cli_replications(const char *path, const char *const *sets, int n_sets, int32_t n, int32_t jobs, int json)
{
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_replicate_result r;
    int rc;
    if (!sc) return 1;
    if ((rc = sim_loader_load_file(path, sets, n_sets, sc, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        free(sc);
        return EXIT_USAGE;
    }
    if (!json) {
        printf("servesim %s — scenario '%s': %d replications", SERVESIM_VERSION, sc->name, (int)n);
        if (sc->output.db[0]) printf(" (not stored in %s: replications write no results DB)", sc->output.db);
        printf("\n");
        fflush(stdout);
    }
    if ((rc = sim_replicate_run(sc, n, jobs, 0.95, &r, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        free(sc);
        return rc == SIM_EINVAL ? EXIT_USAGE : 1;
    }
    int exit_code = r.n_overloaded ? EXIT_OVERLOAD : 0;
    if (json) {
        if (sim_replicate_write_json(stdout, &r, sc) < 0) exit_code = 1;
    } else {
        printf("%s\n", r.describe);
        sim_replicate_print_table(stdout, &r);
    }
    if (r.n_overloaded)
        fprintf(stderr, "servesim: overload: %d of %d replications stopped on overload\n", (int)r.n_overloaded,
                (int)r.n);
    sim_replicate_free(&r);
    free(sc);
    return exit_code;
}
