/* test_json — sim_json, the one writer of the hand-laid-out JSON outputs:
 * strings escaped so the output always parses (and reads back as the text,
 * invalid UTF-8 as U+FFFD), reals to the digits asked for and null when
 * not finite. */
#include "sim_json.h"
#include "test_util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What fn wrote to a memory stream, NUL-terminated, in buf. */
static char buf[512];

static const char *str(const char *s)
{
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (!f) return "";
    sim_json_string(f, s);
    fclose(f);
    return buf;
}

static const char *real(const char *lead, double v, int digits)
{
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (!f) return "";
    sim_json_real(f, lead, v, digits);
    fclose(f);
    return buf;
}

/* s written by sim_json_string parses as a JSON string equal to want. */
static int reads_back(const char *s, const char *want)
{
    json_error_t je;
    json_t *j = json_loads(str(s), JSON_DECODE_ANY, &je);
    int ok = j && json_is_string(j) && !strcmp(json_string_value(j), want);
    json_decref(j);
    return ok;
}

static void case_string_escapes(void)
{
    CHECK(!strcmp(str("decode"), "\"decode\""));
    CHECK(!strcmp(str(""), "\"\""));
    CHECK(!strcmp(str("a\"b\\c"), "\"a\\\"b\\\\c\""));
    CHECK(!strcmp(str("l1\nl2\tx\ry"), "\"l1\\nl2\\tx\\ry\""));
    CHECK(!strcmp(str("bell\a"), "\"bell\\u0007\""));
    CHECK(!strcmp(str("\x1f"), "\"\\u001f\""));
    CHECK(reads_back("a\"b\\c\n\x01", "a\"b\\c\n\x01"));
}

static void case_string_utf8(void)
{
    /* valid sequences of 2, 3 and 4 bytes are copied */
    CHECK(!strcmp(str("\xc3\x97 \xe2\x80\x94 \xf0\x9f\x98\x80"), "\"\xc3\x97 \xe2\x80\x94 \xf0\x9f\x98\x80\""));
    CHECK(reads_back("tp2 \xc3\x97 4", "tp2 \xc3\x97 4"));
    /* a stray continuation byte, a cut sequence and a byte never in UTF-8 */
    CHECK(!strcmp(str("a\x80z"), "\"a\\ufffdz\""));
    CHECK(!strcmp(str("\xe2\x80"), "\"\\ufffd\\ufffd\""));
    CHECK(!strcmp(str("\xff"), "\"\\ufffd\""));
    CHECK(reads_back("x\xc0y", "x\xef\xbf\xbdy"));
}

static void case_reals(void)
{
    CHECK(!strcmp(real(NULL, 1.0, 9), "1"));
    CHECK(!strcmp(real(NULL, 36.84717781234, 9), "36.8471778"));
    CHECK(!strcmp(real(NULL, 36.84717781234, 10), "36.84717781"));
    CHECK(!strcmp(real(NULL, 1.5e-7, 6), "1.5e-07"));
    CHECK(!strcmp(real("", 0.25, 9), "0.25"));
    CHECK(!strcmp(real(", \"x\": ", 2.0, 9), ", \"x\": 2"));
    CHECK(!strcmp(real(", \"x\": ", NAN, 9), ", \"x\": null"));
    CHECK(!strcmp(real(NULL, INFINITY, 9), "null"));
    CHECK(!strcmp(real(NULL, -INFINITY, 10), "null"));
}

static const test_case cases[] = {
    {"string_escapes", case_string_escapes},
    {"string_utf8", case_string_utf8},
    {"reals", case_reals},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_json", cases);
}
