"""A VF's verified RDMA stream measured in windows (issue 33's hostile-VF and
SYN-flood tests): vfw_verbs_check -L (WRITEs and READs alternating on one
connection, every byte compared) prints "tick T0 T1 BYTES" lines on its
host's clock; the test switches a disturbance on and off in windows on this
machine's clock, and each window's MB/s comes from the ticks wholly inside
it.

The stream is paced (PACE_MBS): its rate at full speed is the machine's
spare CPU, which on this shared machine ranged 1.5-29 MB/s from one 4 s
window to the next (load 7-10), and a ratio of two windows then measures
the load, not the device. At a pace the hosts sustain even loaded, a window
below it is the disturbance's doing: the device starved the neighbour.
"""
import re
import statistics
import time

CHECK = "/mnt/vfwarp/tools/vfw_verbs_check"
# 1 MB/s in 64 KiB transfers (15 a second, each WRITE checked by the server
# before the next): the slowest 4 s window of an unpaced stream seen on the
# loaded machine moved 1.5 MB/s
PACE_MBS = 1.0
PACE_ARGS = f"-z 65536 -r {PACE_MBS}"
MARGIN = 0.6             # s trimmed at each window's edges (ssh, clock offset)


def clock_offset(lab, host):
    """`host`'s CLOCK_REALTIME minus this machine's, from the quickest of
    three `date` round trips (error: half that round trip)."""
    best = (0.0, float("inf"))
    for _ in range(3):
        t0 = time.time()
        guest = float(lab.ssh(host, "date +%s.%N").stdout)
        t1 = time.time()
        if t1 - t0 < best[1]:
            best = (guest - (t0 + t1) / 2, t1 - t0)
    return best


def window_rates(out, windows, offset, diag=""):
    """[(kind, MB/s, seconds of ticks)] for each (kind, start, end) window
    (this machine's clock) from the stream's output `out` (its host's clock,
    `offset` ahead of ours): each half-second tick counts in the window
    wholly holding it, the window's edges trimmed by MARGIN."""
    ticks = [(float(a) - offset, float(b) - offset, int(n))
             for a, b, n in re.findall(r"^tick ([\d.]+) ([\d.]+) (\d+)$", out, re.M)]
    per = []
    for kind, ws, we in windows:
        inside = [(a, b, n) for a, b, n in ticks if a >= ws + MARGIN and b <= we - MARGIN]
        secs_in = sum(b - a for a, b, _ in inside)
        assert secs_in > 0, f"no tick inside the {kind} window {ws:.1f}-{we:.1f}\n{diag}"
        per.append((kind, sum(n for _, _, n in inside) / secs_in / 1e6, secs_in))
    return per


def median_ratio(per, hit):
    """Each `hit` window's rate against the mean of the quiet windows on
    either side of it, the median of those ratios (a burst of the machine's
    other load in one window moves one ratio, not the verdict), the ratios,
    and the mean rate of each kind of window."""
    ratios = []
    for i, (kind, r, _) in enumerate(per):
        if kind == hit:
            near = [per[j][1] for j in (i - 1, i + 1) if 0 <= j < len(per)]
            ratios.append(r / (sum(near) / len(near)))
    kinds = {k for k, _, _ in per}
    rate = {k: sum(r * t for kk, r, t in per if kk == k) / sum(t for kk, _, t in per if kk == k)
            for k in kinds}
    return statistics.median(ratios), ratios, rate
