#!/usr/bin/env python3
"""Benchmark (not a test): vfwarpctl's start-up on this machine, the working
tree against a git revision, interleaved in the same run (issue 19, the
re-apply and plan targets: docs/policy.md "Speed").

For each of the two managers, REPS times, alternating:
  - `python3 -X importtime -c "import vfwarp_manager.cli.vfwarpctl"` (before
    the manager's folders: `vfwarp_manager.cli`): the import of the CLI and
    everything it pulls in (the importtime line's cumulative us);
  - `vfwarpctl plan DIR --json --timings` on the benchmark's 33 files
    (bench/policy_bench.py: 128 VFs, 32 tenants) with a warm parse cache:
    its start-up phase and its "load policy files" phase. There is no PF
    here, so plan stops at reading the live state (exit 3): what is timed
    is what comes before it, which is what the lab host's figures call
    "interpreter + imports" and "files from the parse cache".
Also whether PyYAML was imported by that plan (it should not be, on a cache hit).

    python3 bench/manager_startup.py [--baseline REV] [--reps 7]
"""
import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "bench"))
from policy_bench import policy_files  # noqa: E402


def checkout(rev, dest):
    tar = subprocess.run(["git", "-C", str(TOP), "archive", rev, "pf-driver/manager"],
                         capture_output=True, check=True).stdout
    tarfile.open(fileobj=io.BytesIO(tar)).extractall(dest)
    return Path(dest) / "pf-driver" / "manager"


def cli_module(manager):
    """The CLI's module: cli/vfwarpctl.py since the manager has folders, cli.py before."""
    layered = (Path(manager) / "vfwarp_manager" / "cli" / "vfwarpctl.py").exists()
    return "vfwarp_manager.cli.vfwarpctl" if layered else "vfwarp_manager.cli"


def import_us(manager):
    mod = cli_module(manager)
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {mod}"],
                       cwd=manager, capture_output=True, text=True, check=True)
    m = re.search(r"\|\s*(\d+) \| " + re.escape(mod) + "$", p.stderr, re.M)
    return int(m.group(1))


def plan(manager, files, state):
    code = ("import runpy, sys; sys.argv = sys.argv[1:]\n"
            "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\n"
            "finally:\n    sys.stderr.write('YAML %s\\n' % ('yaml' in sys.modules))\n")
    p = subprocess.run([sys.executable, "-c", code, str(manager / "vfwarpctl"), "plan", files,
                        "--json", "--timings"], capture_output=True, text=True,
                       env=dict(os.environ, VFWARP_STATE_DIR=state))
    tim = json.loads(next(ln for ln in p.stderr.splitlines() if ln.startswith('{"timings"')))["timings"]
    ph = {x["phase"]: x["s"] for x in tim["phases"]}
    return {"start_s": ph["start-up (interpreter, imports, arguments)"],
            "files_s": ph["load policy files"], "yaml": "YAML True" in p.stderr}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="HEAD")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = os.path.join(tmp, "pol")
        os.mkdir(files)
        for name, text in policy_files().items():
            Path(files, name).write_text(text)
        trees = {"baseline": checkout(a.baseline, os.path.join(tmp, "base")),
                 "tree": TOP / "pf-driver" / "manager"}
        states = {k: os.path.join(tmp, f"state-{k}") for k in trees}
        for k, m in trees.items():
            os.mkdir(states[k])
            plan(m, files, states[k])          # fills the parse cache (and the .pyc files)
        res = {k: {"import_us": [], "start_s": [], "files_s": [], "yaml": []} for k in trees}
        for _ in range(a.reps):
            for k, m in trees.items():
                res[k]["import_us"].append(import_us(m))
                r = plan(m, files, states[k])
                for f in ("start_s", "files_s", "yaml"):
                    res[k][f].append(r[f])
    med = {k: {f: statistics.median(v[f]) for f in ("import_us", "start_s", "files_s")}
           for k, v in res.items()}
    for k in trees:
        print(f"{k:9s} import of the CLI {med[k]['import_us'] / 1000:6.1f} ms   "
              f"plan start-up {med[k]['start_s'] * 1000:6.1f} ms   files (cache hit) "
              f"{med[k]['files_s'] * 1000:5.1f} ms   PyYAML imported: {any(res[k]['yaml'])}")
    print("ratio tree/baseline: import %.2f, start-up %.2f, files %.2f (median of %d, %s vs %s)" % (
        med["tree"]["import_us"] / med["baseline"]["import_us"],
        med["tree"]["start_s"] / med["baseline"]["start_s"],
        med["tree"]["files_s"] / med["baseline"]["files_s"], a.reps, "working tree", a.baseline))


if __name__ == "__main__":
    main()
