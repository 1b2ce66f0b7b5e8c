/* sim_file — opening and reading the input files servesim is given
 * (scenarios, traces, length files, scenario text stored with a run).
 *
 * Only regular files are accepted: a directory, device (/dev/zero), FIFO or
 * socket is refused with a message naming the path and what was expected,
 * so no read can hang or grow without bound. Whole-file reads are capped
 * (SIM_FILE_MAX_TEXT for scenarios and configs); large inputs such as
 * traces are opened here and streamed by their reader. Errors: SIM_EINVAL
 * for a path that is not a regular file or is too large, SIM_EIO when it
 * cannot be opened or read, SIM_ENOMEM. The caller owns what is returned. */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include "sim_err.h"

#include <stddef.h>
#include <stdio.h>

#define SIM_FILE_MAX_TEXT ((size_t)16 << 20) /* 16 MiB: scenarios, configs */

/* Opens path for reading; `what` ("scenario", "trace", ...) names the file
 * in messages. On success *out is an open stream (fclose it). */
int sim_file_open_regular(const char *path, const char *what, FILE **out, sim_err *err);

/* Reads a whole regular file of at most max_bytes into a NUL-terminated
 * buffer (*text, free it); *len (may be NULL) gets its length. */
int sim_file_read_all(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                      sim_err *err);

/* dir + "/" + name into dst (len bytes) with no doubled slash ("out/" and
 * "out" give "out/name"; an empty dir gives name). Returns 0, or SIM_ERANGE
 * when it does not fit (dst then holds a truncated path). */
int sim_file_join(char *dst, size_t len, const char *dir, const char *name);

/* A file-name stem from a scenario name: letters, digits, '-', '_' and '.'
 * kept, anything else '_' ("" gives "servesim"). */
void sim_file_stem(char *dst, size_t len, const char *name);

#endif
