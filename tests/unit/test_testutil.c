/* test_testutil — the test helpers themselves (tests/test_util.h): a failed
 * CHECK fails the binary; a failed REQUIRE fails it and skips the checks
 * that depend on it; a binary that ran no check fails; test_skip exits 77
 * (ctest's skip code) only when nothing failed before it; REQUIRE_OR's
 * action may be continue, break, goto or several statements; test_run runs
 * named cases with OK/FAIL/SKIP lines, the -o name filter and -l, fails a
 * case that ran no check and a filter that matches nothing. Each scenario
 * runs in a child (this binary with `--case NAME`, or `--table` and
 * harness flags) whose exit status and output are checked. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int reached; /* set by code that a failed REQUIRE must skip */

static void require_void(int ok)
{
    REQUIRE(ok);
    reached = 1;
    CHECK(1);
}

static void require_msg_void(int ok)
{
    REQUIRE_MSG(ok, "setup value %d", ok);
    reached = 1;
}

/* Runs one case in this process; its return is the child's exit status. */
static int run_case(const char *name)
{
    if (!strcmp(name, "pass")) {
        CHECK(1 + 1 == 2);
    } else if (!strcmp(name, "none")) {
        /* no check at all */
    } else if (!strcmp(name, "check_fail")) {
        CHECK(1 + 1 == 3);
        CHECK(1);
    } else if (!strcmp(name, "require_pass")) {
        require_void(1);
        if (!reached) printf("not reached\n");
    } else if (!strcmp(name, "require_fail")) {
        require_void(0);
        if (reached) printf("reached after a failed REQUIRE\n");
    } else if (!strcmp(name, "require_msg_fail")) {
        require_msg_void(0);
        if (reached) printf("reached after a failed REQUIRE\n");
    } else if (!strcmp(name, "require_or")) {
        for (int i = 0; i < 3; i++) {
            REQUIRE_OR(i != 1, continue);
            CHECK(i != 1);
        }
        REQUIRE_MSG_OR(0, goto out, "then %s", "out");
        printf("reached after a failed REQUIRE\n");
    out:;
    } else if (!strcmp(name, "require_break")) {
        int done = 0;
        for (int i = 0; i < 5; i++) {
            REQUIRE_OR(i < 2, break);
            done++;
        }
        int freed = 0;
        for (int i = 0; i < 1; i++) {
            REQUIRE_MSG_OR(i > 0, freed = 1; break, "i = %d", i);
            freed = 2;
        }
        printf("loop left after %d, action ran %d\n", done, freed);
    } else if (!strcmp(name, "skip")) {
        CHECK(1);
        return test_skip("case", "on purpose");
    } else if (!strcmp(name, "skip_after_fail")) {
        CHECK(0);
        return test_skip("case", "on purpose");
    } else {
        fprintf(stderr, "unknown case %s\n", name);
        return 2;
    }
    return test_finish("case");
}

/* The cases test_run runs in `--table` mode. */
static void table_good(void) { CHECK(1); }
static void table_bad(void) { CHECK(0); }
static void table_empty_case(void) {}
static void table_setup(void)
{
    REQUIRE(0);
    printf("reached after a failed REQUIRE\n");
    CHECK(1);
}
static void table_skipping(void)
{
    CHECK(1);
    test_case_skip("no tool");
}

static int run_table(void)
{
    static const test_case table[] = {
        {"good", table_good},   {"bad", table_bad},           {"empty_case", table_empty_case},
        {"setup", table_setup}, {"skipping", table_skipping},
    };
    return test_run("table", table);
}

/* The exit status and output of `self x x ARGS`. */
static int child(const char *self, const char *args, char *out, size_t cap)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "'%s' x x %s 2>&1", self, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char self[4096];

static void case_checks(void)
{
    static const struct {
        const char *name;
        int status;
        const char *has, *lacks;
    } cases[] = {
        {"pass", 0, "case: all 1 checks passed", "failed"},
        {"none", 1, "case: no check ran", "passed"},
        {"check_fail", 1, "CHECK failed: 1 + 1 == 3", "passed"},
        {"require_pass", 0, "case: all 2 checks passed", "not reached"},
        {"require_fail", 1, "REQUIRE failed: ok (dependent checks skipped)", "reached"},
        {"require_msg_fail", 1, "REQUIRE failed: ok: setup value 0 (dependent checks skipped)", "reached"},
        {"require_or", 1, "case: 2 of 6 checks failed", "reached"},
        {"require_break", 1, "loop left after 2, action ran 1", "passed"},
        {"skip", 77, "SKIPPED: on purpose (1 checks passed before the skip)", "failed"},
        {"skip_after_fail", 1, "case: 1 of 1 checks failed", "SKIPPED"},
    };
    static char out[1 << 14], args[200];
    const char *o = out; /* a pointer: CHECK_CONTAINS tests it for NULL */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "--case %s", cases[i].name);
        int st = child(self, args, out, sizeof out);
        CHECK_MSG(st == cases[i].status, "case %s: exit %d, expected %d; output:\n%s", cases[i].name, st,
                  cases[i].status, out);
        CHECK_CONTAINS(o, cases[i].has);
        CHECK_MSG(!strstr(out, cases[i].lacks), "case %s: '%s' in '%s'", cases[i].name, cases[i].lacks, out);
    }
}

static void case_named_cases(void)
{
    static const struct {
        const char *args;
        int status;
        const char *has, *has2, *lacks;
    } runs[] = {
        {"--table", 1, "good: OK", "bad: FAIL", "reached"},
        {"--table -o good", 0, "good: OK", "table: 1 of 1 cases OK, 0 failed, 0 skipped", "bad"},
        {"-o good --table", 0, "good: OK", "table: all 1 checks passed", "bad"},
        {"--table -o goo,setup", 1, "good: OK", "setup: FAIL", "reached"},
        {"--table -o setup", 1, "REQUIRE failed: 0 (dependent checks skipped)", "table: 1 of 1 checks failed", "setup: OK"},
        {"--table -o empty_case", 1, "empty_case: FAIL (no check ran)", "0 of 1 cases OK, 1 failed", "passed"},
        {"--table -o nomatch", 1, "table: no case matches -o nomatch", "-l lists them", "OK"},
        {"--table -o skipping", 77, "skipping: SKIP (no tool)", "SKIPPED: 1 case(s) (1 checks passed)", "FAIL"},
        {"--table -o good,skipping", 77, "good: OK", "skipping: SKIP (no tool)", "FAIL"},
        {"--table -o bad,skipping", 1, "bad: FAIL", "skipping: SKIP (no tool)", "SKIPPED"},
        {"--table -l", 0, "empty_case\nsetup\nskipping", "good\nbad", ": OK"},
        {"--table -o", 2, "-o needs a case name", "-o NAME[,NAME...]", "OK"},
    };
    static char out[1 << 14];
    const char *o = out; /* a pointer: CHECK_CONTAINS tests it for NULL */
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int st = child(self, runs[i].args, out, sizeof out);
        CHECK_MSG(st == runs[i].status, "%s: exit %d, expected %d; output:\n%s", runs[i].args, st,
                  runs[i].status, out);
        CHECK_CONTAINS(o, runs[i].has);
        CHECK_CONTAINS(o, runs[i].has2);
        CHECK_MSG(!strstr(out, runs[i].lacks), "%s: '%s' in '%s'", runs[i].args, runs[i].lacks, out);
    }
}

static const test_case cases[] = {
    {"checks", case_checks},
    {"named_cases", case_named_cases},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    if (argc > 4 && !strcmp(argv[3], "--case")) return run_case(argv[4]);
    if (argc > 3 && !strcmp(argv[3], "--table")) return run_table();
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    REQUIRE_OR(n > 0, return test_finish("test_testutil"));
    self[n] = '\0';
    return test_run("test_testutil", cases);
}
