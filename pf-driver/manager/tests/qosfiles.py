"""The QoS example's policy files (examples/qos) written to a directory,
and vfwarpctl run on them against a stand-in device (qosdevice.py). Shared by
the QoS layers', --timings and reapply-vf tests."""
import io
from pathlib import Path

from vfwarp_manager.cli import vfwarpctl as cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "qos"
HOST, RED, BLUE = ((EXAMPLE / f"{n}.yaml").read_text() for n in ("host", "red", "blue"))


def policy_dir(tmp_path, name="pol", **files):
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    for f in d.iterdir():
        f.unlink()
    for k, v in dict({"host": HOST, "red": RED, "blue": BLUE}, **files).items():
        if v is not None:
            (d / f"{k}.yaml").write_text(v)
    return str(d)


def ctl(tmp_path, dev, *argv):
    out = io.StringIO()
    rc = cli.main([argv[0], "--state-dir", str(tmp_path / "state"), *argv[1:]], runner=dev, out=out)
    return rc, out.getvalue()
