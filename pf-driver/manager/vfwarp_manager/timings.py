"""Where a vfwarpctl run spends its time (`--timings`): wall time per phase
(load, snapshot, plan, run per layer, verify, ...) and, per tool, how many
processes it started and how long they took. An operator or a benchmark
(bench/policy_bench.py) reads it to tell the kernel's cost from the
manager's.

One recorder per process, off by default: the phases are marked where
they happen (`with timings.span("snapshot")`) without threading a recorder
through every call, and cost nothing when off.
"""
import contextlib
import time

# Set by vfwarpctl at the top of the script, before the imports, so that
# their cost shows; None when run as a library.
STARTED = None


class Recorder:
    def __init__(self, started=None):
        self.t0 = started if started is not None else time.monotonic()
        # name -> [seconds, times]: a phase met several times (a layer's
        # steps, one batch after another) adds up; dicts keep first-seen order
        self.spans = {}
        self.tools = {}           # tool -> [processes, seconds]

    def add(self, name, seconds):
        t = self.spans.setdefault(name, [0.0, 0])
        t[0] += seconds
        t[1] += 1

    def tool(self, name, seconds, processes=1):
        """processes: 0 for a command of a co-process already counted
        (virsh_session: one virsh for a run's libvirt commands)."""
        t = self.tools.setdefault(name, [0, 0.0])
        t[0] += processes
        t[1] += seconds

    def as_json(self):
        return {"total_s": round(time.monotonic() - self.t0, 4),
                "phases": [{"phase": n, "s": round(v[0], 4), "times": v[1]}
                           for n, v in self.spans.items()],
                "tools": {k: {"processes": v[0], "s": round(v[1], 4)}
                          for k, v in sorted(self.tools.items())}}

    def lines(self):
        d = self.as_json()
        out = [f"timing: {p['phase']}: {p['s']:.3f} s" + (f" ({p['times']}x)" if p["times"] > 1 else "")
               for p in d["phases"]]
        out += [f"timing: tool {k}: {v['processes']} processes, {v['s']:.3f} s"
                for k, v in d["tools"].items()]
        out.append(f"timing: total: {d['total_s']:.3f} s")
        return out


_rec = None


def start(started=None):
    """Turn recording on for this process; the recorder."""
    global _rec
    _rec = Recorder(started)
    return _rec


def stop():
    global _rec
    _rec = None


def current():
    return _rec


@contextlib.contextmanager
def span(name):
    if _rec is None:
        yield
        return
    t = time.monotonic()
    try:
        yield
    finally:
        _rec.add(name, time.monotonic() - t)


def tool(name, seconds, processes=1):
    if _rec is not None:
        _rec.tool(name, seconds, processes)
