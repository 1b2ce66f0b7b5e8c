/* sim_parse — strict whole-string number parsing, the one parser every
 * flag, CSV field and YAML scalar goes through.
 *
 * Each function parses all of s (a NUL-terminated string the caller owns)
 * as one base-10 number and writes *out only on success. Refused, with the
 * reason as the return code: an empty string (SIM_PARSE_EMPTY); leading
 * blanks, trailing characters, hex ("0x..."), words such as "nan" or "inf",
 * or a '-' sign on an unsigned value (SIM_PARSE_SYNTAX); a value outside
 * the type (SIM_PARSE_RANGE; for doubles a magnitude above DBL_MAX —
 * underflow rounds to the nearest representable value, 0 or subnormal).
 * A leading '+' is accepted. Range checks beyond the type (x > 0, 1..100)
 * stay with the caller, which also writes its own message. No globals; errno
 * is left as the caller had it. */
#ifndef SIM_PARSE_H
#define SIM_PARSE_H

#include <stdint.h>

enum {
    SIM_PARSE_OK = 0,
    SIM_PARSE_EMPTY = -1,  /* "" */
    SIM_PARSE_SYNTAX = -2, /* not one whole base-10 number */
    SIM_PARSE_RANGE = -3   /* does not fit the type */
};

int sim_parse_double(const char *s, double *out);
int sim_parse_i64(const char *s, int64_t *out);
int sim_parse_u64(const char *s, uint64_t *out);

/* "empty", "not a number", "out of range" for a code above; "ok" for 0. */
const char *sim_parse_strerror(int code);

#endif
