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

#include <stddef.h>
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

/* The same rules for the field s[0..len) of a longer text (a CSV column, a
 * token of a list), which need not be NUL-terminated and is not copied by
 * the caller: nothing past s[len - 1] is read, and a NUL byte inside the
 * field is SIM_PARSE_SYNTAX. The integers are read in place; a double
 * field longer than SIM_PARSE_FIELD_MAX - 1 characters is SIM_PARSE_RANGE. */
#define SIM_PARSE_FIELD_MAX 1024
int sim_parse_double_n(const char *s, size_t len, double *out);
int sim_parse_i64_n(const char *s, size_t len, int64_t *out);
int sim_parse_u64_n(const char *s, size_t len, uint64_t *out);

/* "X:Y", two integers (sim_parse_i64's rules each, no blanks) joined by one
 * ':', such as an instance ratio "1:3". Writes *x and *y only on success;
 * SIM_PARSE_SYNTAX when there is no ':' or either side is not an integer
 * (an empty side included), SIM_PARSE_RANGE when one does not fit. */
int sim_parse_ratio(const char *s, int64_t *x, int64_t *y);

/* "empty", "not a number", "out of range" for a code above; "ok" for 0. */
const char *sim_parse_strerror(int code);

#endif
