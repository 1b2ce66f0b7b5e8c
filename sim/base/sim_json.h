/* sim_json — the one writer of servesim's hand-laid-out JSON.
 *
 * Most JSON servesim writes is built as a jansson tree and dumped (search
 * reports, replications, sensitivity, traces, the results store). A few
 * outputs keep a layout of their own that users' scripts and the README
 * rely on, byte for byte: the run summary (`run --json`, one statistic per
 * line, wall_time_s alone on its line), its autoscale block, the sweep
 * array around it, `predict --json` and `op --json`. Their values go
 * through this module, so every such output escapes strings and writes
 * reals the same way and always parses. Pure formatting onto a FILE; no
 * allocation, no failure return (the caller checks ferror). */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stdio.h>

/* Writes s as a JSON string with its quotes: '"' and '\\' escaped, newline,
 * tab and carriage return as \n, \t, \r, other control characters as
 * \u00xx, valid UTF-8 copied and each byte of invalid UTF-8 as \ufffd. */
void sim_json_string(FILE *f, const char *s);

/* Writes lead (the separator and key before the value; NULL or "" for
 * none), then v with `digits` significant digits ("%.*g"), or null when v
 * is not finite (JSON has no inf or nan). */
void sim_json_real(FILE *f, const char *lead, double v, int digits);

#endif
