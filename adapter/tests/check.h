/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.h - the small test harness the adapter's unit tests share: CHECK()
 * fails the current test function with file:line, run_tests() runs a table
 * (or the one test named on the command line) and prints the closing line
 * "<suite>: N passed, M failed" that CI reads; the exit status follows.
 */
#ifndef VFW_TEST_CHECK_H
#define VFW_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int g_pass, g_fail;
static const char *g_test;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s: %s:%d: %s\n", g_test, __FILE__,      \
                    __LINE__, #cond);                                      \
            return -1;                                                     \
        }                                                                  \
    } while (0)

struct unit_test {
    const char *name;
    int (*fn)(void);   /* 0 = pass */
};

/* after_fail (optional) cleans up what a failed test left behind. */
static inline int run_tests(const char *suite, const struct unit_test *t,
                            size_t n, int argc, char **argv,
                            void (*after_fail)(void))
{
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], t[i].name))
            continue;
        g_test = t[i].name;
        if (t[i].fn() == 0) {
            g_pass++;
            printf("ok   %s\n", g_test);
        } else {
            g_fail++;
            printf("FAIL %s\n", g_test);
            if (after_fail)
                after_fail();
        }
    }
    printf("%s: %d passed, %d failed\n", suite, g_pass, g_fail);
    return g_fail ? 1 : 0;
}

#endif /* VFW_TEST_CHECK_H */
