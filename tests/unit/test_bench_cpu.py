"""The verbs bench's CPU window: which /proc/stat samples it uses and when
it refuses to give a figure (bench/verbs_bench.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import verbs_bench as vb  # noqa: E402


def line(t, user, idle):
    # the sampler's format: bash's $EPOCHREALTIME, then /proc/stat's first line
    return f"{t} cpu  {user} 0 0 {idle} 0 0 0 0 0 0"


def test_window_uses_only_samples_inside_it():
    text = "\n".join([line("100,00", 0, 0),        # set-up: all busy
                      line("101.00", 100, 0),
                      line("102.00", 100, 50),     # steady: 50% busy
                      line("103.00", 150, 100),
                      line("104.00", 200, 150),
                      line("105.00", 300, 150)])   # tear-down: all busy
    samples = vb.read_samples(text)
    assert samples[0][0] == 100.0                   # a decimal comma is read too
    busy, span = vb.busy_share(samples, 102.0, 104.0)
    assert busy == 0.5 and span == 2.0
    busy, _ = vb.busy_share(samples, 100.0, 105.0)
    assert busy == 300 / 450


def test_window_shorter_than_a_second_gives_no_figure():
    samples = vb.read_samples("\n".join(line(f"{100 + i * 0.25:.2f}", i, i) for i in range(8)))
    assert vb.busy_share(samples, 100.0, 100.9)[0] is None
    assert vb.busy_share(samples, 101.0, 100.0)[0] is None      # the run ended in its lead
    assert vb.busy_share(samples, 100.0, 101.0)[0] == 0.5


def test_sampler_lines_that_are_not_stat_are_ignored():
    assert vb.read_samples("bash: warning\n\n" + line("1.5", 1, 1)) == [(1.5, [1, 0, 0, 1, 0, 0, 0, 0, 0, 0])]
