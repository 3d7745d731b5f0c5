/*
 * clock_jump.so: an LD_PRELOAD for the lab tests that makes a process see
 * gettimeofday() jump 10 ms ahead once, as when it is descheduled between
 * two clock reads on a loaded host. Armed only when /tmp/clock-jump-once
 * exists at the process's first call (the file is then removed, so a
 * second run is undisturbed). tests/lab/test_verbs.py uses it to check that
 * a perftest run whose clock sampling failed is run again.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/time.h>
#include <unistd.h>

#define ONCE_FILE  "/tmp/clock-jump-once"
#define JUMP_AFTER 2000         /* calls: inside perftest's 200-pair sampling */
#define JUMP_US    10000

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    static int (*real)(struct timeval *restrict, void *restrict);
    static int armed = -1;
    static unsigned calls;

    if (!real) {
        real = (int (*)(struct timeval *restrict, void *restrict))
               dlsym(RTLD_NEXT, "gettimeofday");
    }
    if (armed < 0) {
        armed = unlink(ONCE_FILE) == 0;
    }
    int rc = real(tv, tz);
    if (rc == 0 && armed && ++calls >= JUMP_AFTER) {
        tv->tv_usec += JUMP_US;
        if (tv->tv_usec >= 1000000) {
            tv->tv_sec++;
            tv->tv_usec -= 1000000;
        }
    }
    return rc;
}
