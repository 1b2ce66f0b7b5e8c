/* fuzz_scenario — libFuzzer target for the scenario loader.
 *
 * Feeds arbitrary bytes to sim_loader_load_string, with and without a few
 * --set overrides, so both the YAML tree, the schema walk, the cross-field
 * checks and the override splicing see hostile input. The loader must
 * return an error (never crash, leak, exit or abort) and every error must
 * carry a message that starts with the document name or the override. */
#include "sim_loader.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err;
    if (!sc) return 0;
    err.msg[0] = '\0';
    int rc = sim_loader_load_string((const char *)data, size, "fuzz.yaml", NULL, 0, sc, &err);
    if (rc < 0 && strncmp(err.msg, "fuzz.yaml", 9) != 0) abort();

    /* The first line (up to 200 bytes) also serves as an override, so the
     * --set parser sees arbitrary key paths and values. */
    char set[201];
    size_t n = 0;
    while (n < size && n < 200 && data[n] != '\n' && data[n] != '\0') {
        set[n] = (char)data[n];
        n++;
    }
    set[n] = '\0';
    const char *sets[] = {set, "deployment.pools.0.instances=2"};
    static const char base[] = "workload: {arrival: {rate: 5}}\ndeployment:\n  pools:\n    - role: colocated\n";
    err.msg[0] = '\0';
    rc = sim_loader_load_string(base, sizeof base - 1, "base.yaml", sets, 2, sc, &err);
    if (rc < 0 && strncmp(err.msg, "--set ", 6) != 0 && strncmp(err.msg, "base.yaml", 9) != 0) abort();
    free(sc);
    return 0;
}
