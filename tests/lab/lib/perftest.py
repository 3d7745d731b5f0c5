"""perftest and rping on the lab hosts: the rdma_cm ports they listen on
unless told otherwise, perftest runs repeated while perftest could not
sample its clock, and the checks of what a 64 KiB ib_write_bw and an rping
printed on both sides. Their servers start with wait.start_server.
"""
import re

import pytest

# the rdma_cm ports rping and perftest listen on unless told otherwise
RPING_PORT = 7174
PERF_PORT = 18515

# perftest turns TSC cycles into rates with a clock rate it samples at each
# report (get_clock.c): 200 rdtsc/gettimeofday pairs and a linear fit. When
# the fit is poor (r^2 < 0.9: on a loaded TCG host the process was descheduled
# between the two reads of a pair) it prints this line and the clock rate is
# 0: with -F it then reports every rate of that run as 0.00 (a latency as inf)
# instead of stopping. The transfer itself is not at fault; the run is
# repeated (perftest_tries runs at most).
PERFTEST_UNCALIBRATED = "Correlation coefficient r^2"
PERFTEST_TRIES = 3


def perftest_runs(run, what):
    """run() returns (result, what perftest printed that may hold its
    PERFTEST_UNCALIBRATED line); run again while it does, PERFTEST_TRIES runs
    at most (then pytest.fail). Returns the result of the last run."""
    for attempt in range(1, PERFTEST_TRIES + 1):
        result, said = run()
        if PERFTEST_UNCALIBRATED not in said:
            return result
        print(f"\n{what}, run {attempt}: perftest could not sample its clock "
              f"({PERFTEST_UNCALIBRATED} < 0.9), its figures are not measurements")
    pytest.fail(f"{what}: perftest could not sample its clock in {PERFTEST_TRIES} runs:\n{said}")


# ib_write_bw's result row of a 64 KiB run: iterations, peak, average (MiB/s), msg rate
BW_LINE = re.compile(r"^\s*65536\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)


def check_bw_lines(outs, iters):
    """Each output (client's, server's) has its 64 KiB row, with `iters`
    iterations and an average above 0."""
    for out in outs:
        m = BW_LINE.search(out)
        assert m, out
        assert int(m.group(1)) == iters and float(m.group(3)) > 0, m.group(0)


def check_rping_data(out, s, count):
    """The rping client's output `out` and its server's `s` show each of the
    `count` pings, and the client no more."""
    for n in range(count):
        assert re.search(rf"^ping data: rdma-ping-{n}: ", out, re.M), out
        assert re.search(rf"^server ping data: rdma-ping-{n}: ", s, re.M), s
    assert f"rdma-ping-{count}:" not in out
