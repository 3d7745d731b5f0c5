"""`--timings` (timings.py): where a vfwarpctl run spends its time, per phase
and per tool, on stderr; the command's own output unchanged."""
import io
import json

from qosdevice import QosDevice
from qosfiles import policy_dir
from vfwarp_manager import timings
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.runner import Runner


def test_phases_on_stderr_text_and_json_stdout_untouched(tmp_path, capsys):
    files = policy_dir(tmp_path)
    dev = QosDevice(numvfs=0)
    out = io.StringIO()
    rc = cli.main(["apply", "--timings", "--state-dir", str(tmp_path / "s"), files], runner=dev, out=out)
    assert rc == 0 and "timing" not in out.getvalue()
    err = capsys.readouterr().err.splitlines()
    names = [ln.split(": ")[1] for ln in err]
    for phase in ("start-up (interpreter, imports, arguments)", "load policy files",
                  "snapshot (read live state)", "plan steps", "run devlink batch", "run ip batch",
                  "run sysfs write", "verify (read back)", "total"):
        assert phase in names, (phase, err)
    out = io.StringIO()
    assert cli.main(["plan", "--json", "--timings", files], runner=dev, out=out) == 0
    assert json.loads(out.getvalue())["changes"] == []
    (line,) = capsys.readouterr().err.splitlines()
    doc = json.loads(line)["timings"]
    assert [p["phase"] for p in doc["phases"]][1:] == ["load policy files", "compile",
                                                      "read live state", "diff"]
    # each figure is rounded to 0.1 ms on its own: the sum of the rounded phases may
    # pass the rounded total by up to half a unit per phase (a run of 2026-11-28 failed
    # on 0.0048 >= 0.0048000000000000004)
    phases = doc["phases"][1:]
    assert doc["total_s"] >= sum(p["s"] for p in phases) - 0.00005 * len(phases)
    # off again after the command: nothing recorded
    assert timings.current() is None


def test_processes_counted_per_tool_and_repeated_phases_added_up():
    rec = timings.start()
    try:
        for _ in range(3):
            with timings.span("x"):
                Runner().run(["true"])
        Runner().run(["sh", "-c", "exit 0"], stdin="")
    finally:
        timings.stop()
    d = rec.as_json()
    assert d["tools"]["true"]["processes"] == 3 and d["tools"]["sh"]["processes"] == 1
    assert [(p["phase"], p["times"]) for p in d["phases"]] == [("x", 3)]
    assert "timing: x: " in rec.lines()[0] and "(3x)" in rec.lines()[0]
