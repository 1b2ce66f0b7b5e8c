/* test_search_util — helpers the search tests share: a recommended
 * scenario written, read back and run (the replay), and a scenario that
 * the loader or sim_search_create must refuse. Header-only, for tests. */
#ifndef TEST_SEARCH_UTIL_H
#define TEST_SEARCH_UTIL_H

#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_search.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes candidate w's recommended.yaml, loads it into *back and runs it
 * into *sum; 0 when every step worked (failures are CHECKed). */
static inline int test_search_replay(const sim_search *s, int32_t w, sim_scenario *back, sim_summary *sum)
{
    char path[] = "/tmp/test_search_replay_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OR(fd >= 0, return -1);
    sim_err err = {{0}};
    FILE *f = fdopen(fd, "w");
    int ok = f && sim_search_write_yaml(s, w, f, &err) == 0;
    CHECK_MSG(ok, "write_yaml: %s", err.msg);
    if (f) fclose(f);
    ok = ok && sim_loader_load_file(path, NULL, 0, back, &err) == 0;
    CHECK_MSG(ok, "load: %s", err.msg);
    unlink(path);
    sim_cluster *cl = NULL;
    ok = ok && sim_cluster_create(back, &cl, &err) == 0 && sim_cluster_run(cl, sum, &err) == 0;
    CHECK_MSG(ok, "run: %s", err.msg);
    sim_cluster_destroy(cl);
    return ok ? 0 : -1;
}

/* yaml with sets must be refused at load or search creation with `want` in the message. */
static inline void test_search_refused(const char *yaml, const char *const *sets, int n, const char *want)
{
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE(sc);
    sim_err err = {{0}};
    sim_search *s = NULL;
    int rc = sim_loader_load_string(yaml, strlen(yaml), "test", sets, n, sc, &err);
    if (rc == 0) {
        sim_search_opts o = {.threads = 1, .quiet = 1};
        rc = sim_search_create(sc, &o, &s, &err);
    }
    CHECK_MSG(rc < 0, "accepted, expected '%s'", want);
    CHECK_CONTAINS(err.msg, want);
    sim_search_destroy(s);
    free(sc);
}

#endif
