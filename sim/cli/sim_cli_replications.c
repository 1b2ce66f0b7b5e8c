/* sim_cli_replications — see sim_cli_replications.h. */
#include "sim_cli_replications.h"

#include "sim_file.h"
#include "sim_headline.h"
#include "sim_loader.h"
#include "sim_replicate.h"
#include "sim_store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#define EXIT_USAGE 2
#define EXIT_OVERLOAD 3

/* params_json of the stored set: the overrides as a run stores them, and
 * how the runs were made (their seeds derive from the base seed). */
static char *set_params(const char *const *sets, int n_sets, const sim_replicate_result *r)
{
    json_t *o = json_object(), *a = json_array(), *rep = json_object();
    for (int i = 0; i < n_sets; i++) json_array_append_new(a, json_string(sets[i]));
    json_object_set_new(o, "set", a);
    json_object_set_new(rep, "n", json_integer(r->n));
    json_object_set_new(rep, "level", json_real(r->level));
    json_object_set_new(rep, "base_seed", json_integer((json_int_t)r->base_seed));
    json_object_set_new(rep, "seeds", json_string("sim_rng_replication_seed(base_seed, i), i = 0..n-1"));
    json_object_set_new(o, "replications", rep);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(o);
    return s;
}

/* Writes the set: every headline figure's mean and interval. */
static int store_set(sim_store *st, const sim_scenario *sc, const char *path, const char *const *sets, int n_sets,
                     const sim_replicate_result *r, int64_t *id, sim_err *err)
{
    const char *names[SIM_HL_COUNT];
    for (int h = 0; h < SIM_HL_COUNT; h++) names[h] = sim_headline_key((sim_headline)h);
    sim_store_replications rows = {.n = r->n, .level = r->level, .overloaded = r->n_overloaded,
                                   .n_figures = SIM_HL_COUNT, .figures = names, .iv = r->iv};
    char *text = NULL, *params = set_params(sets, n_sets, r);
    if (sim_file_read_all(path, "scenario", SIM_FILE_MAX_TEXT, &text, NULL, NULL) < 0) text = NULL;
    int rc = sim_store_write_replications(st, sc, text, params, &rows, id, err);
    free(text);
    free(params);
    return rc;
}

int sim_cli_replications(const sim_cli_replications_args *a)
{
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_replicate_result r;
    sim_store *st = NULL;
    int rc;
    if (!sc) return 1;
    if ((rc = sim_loader_load_file(a->path, a->sets, a->n_sets, sc, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        free(sc);
        return EXIT_USAGE;
    }
    if (a->db) snprintf(sc->output.db, sizeof sc->output.db, "%s", a->db);
    if (a->no_db) sc->output.db[0] = '\0';
    /* Open the DB before the runs so a bad path fails fast. */
    if (sc->output.db[0] && (rc = sim_store_open(sc->output.db, &st, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        free(sc);
        return rc == SIM_ENOMEM ? 1 : EXIT_USAGE;
    }
    if (!a->json) {
        printf("servesim %s — scenario '%s': %d replications\n", SERVESIM_VERSION, sc->name, (int)a->n);
        fflush(stdout);
    }
    if ((rc = sim_replicate_run(sc, a->n, a->jobs, 0.95, &r, &err)) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        sim_store_close(st);
        free(sc);
        return rc == SIM_EINVAL ? EXIT_USAGE : 1;
    }
    int exit_code = r.n_overloaded ? EXIT_OVERLOAD : 0;
    if (a->json) {
        if (sim_replicate_write_json(stdout, &r, sc) < 0) exit_code = 1;
    } else {
        printf("%s\n", r.describe);
        sim_replicate_print_table(stdout, &r);
    }
    if (r.n_overloaded)
        fprintf(stderr, "servesim: overload: %d of %d replications stopped on overload\n", (int)r.n_overloaded,
                (int)r.n);
    int64_t id = 0;
    if (st && store_set(st, sc, a->path, a->sets, a->n_sets, &r, &id, &err) < 0) {
        fprintf(stderr, "servesim: %s\n", err.msg);
        exit_code = 1;
    } else if (st && !a->json) {
        printf("results: replication set %lld (%d runs, every figure's mean and 95 %% interval) stored in %s\n",
               (long long)id, (int)r.n, sc->output.db);
    }
    sim_replicate_free(&r);
    sim_store_close(st);
    free(sc);
    return exit_code;
}
