"""`make demo` step 11, "What is not built yet" (lab/demo.sh, lab/not-built,
lab/vfwarp_lab/status.py): it says what docs/status.md says, and a gap it
lists is not a failure of the demo. The demo script runs for real with
VFWARP_DEMO_STEPS=11 in a copy of the tree whose lab/labctl only records
its calls, so nothing boots whatever the script asks for."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TOP / "lab"))
from vfwarp_lab import status  # noqa: E402

STATUS_MD = TOP / "docs" / "status.md"


def tree(tmp_path, status_text=None):
    """tmp/top: the repo's entries linked in; lab/ of links but for a labctl
    that records its argv; docs/status.md the real one or status_text."""
    top = tmp_path / "top"
    (top / "lab").mkdir(parents=True)
    for e in TOP.iterdir():
        if e.name not in ("lab", "docs", ".git"):
            (top / e.name).symlink_to(e)
    for e in (TOP / "lab").iterdir():
        if e.name != "labctl":
            (top / "lab" / e.name).symlink_to(e)
    labctl = top / "lab" / "labctl"
    labctl.write_text(f'#!/bin/sh\necho "$*" >>{tmp_path}/labctl.calls\n')
    labctl.chmod(0o755)
    (top / "docs").mkdir()
    (top / "docs" / "status.md").write_text(
        STATUS_MD.read_text() if status_text is None else status_text)
    return top


def step_11(tmp_path, status_text=None):
    top = tree(tmp_path, status_text)
    env = dict(os.environ, VFWARP_DEMO_STEPS="11", VFWARP_CACHE=str(tmp_path / "cache"))
    env.pop("VFWARP_DEMO_LAST_STEP", None)
    r = subprocess.run(["bash", str(top / "lab" / "demo.sh")], capture_output=True,
                       text=True, env=env, timeout=120)
    calls = (tmp_path / "labctl.calls")
    return r, calls.read_text().split("\n") if calls.exists() else []


def test_step_11_ends_green_and_lists_what_status_md_says(tmp_path):
    r, calls = step_11(tmp_path)
    out = r.stdout
    assert r.returncode == 0, f"step 11 exited {r.returncode}:\n{out}\n{r.stderr}"
    assert "11/11 What is not built yet" in out
    left = status.not_built(status.rows(STATUS_MD.read_text()))
    assert left, "docs/status.md lists nothing as not built: the check below would be empty"
    for line in status.lines_for(left):
        assert line in out, f"not said by the demo: {line}"
    assert "demo: done, every step worked" in out
    # the list comes from docs/status.md, not from a lab
    assert not any(c.startswith(("up", "ssh")) for c in calls), calls


def test_a_gap_listed_is_not_a_failed_demo(tmp_path):
    text = ("# Status\n\n## Not built yet\n| capability | state | note |\n|---|---|---|\n"
            "| teleportation | not started | |\n\n## Issue 1: a thing — done\n"
            "| Done means | state | shown by |\n|---|---|---|\n"
            "| the thing | done | `make test` |\n| its benchmark | **partial**: half | bench |\n")
    r, _ = step_11(tmp_path, text)
    assert r.returncode == 0, f"step 11 exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    assert "  - teleportation (not started)\n" in r.stdout
    assert "  - its benchmark (partial; Issue 1: a thing)\n" in r.stdout
    assert "the thing" not in r.stdout


def test_a_failed_step_is_named_and_fails_the_demo(tmp_path):
    # step 11 cannot read docs/status.md at all: that step failed
    top = tree(tmp_path)
    (top / "docs" / "status.md").unlink()
    env = dict(os.environ, VFWARP_DEMO_STEPS="11", VFWARP_CACHE=str(tmp_path / "cache"))
    r = subprocess.run(["bash", str(top / "lab" / "demo.sh")], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode != 0
    assert "demo: step 11 failed" in r.stderr
    assert "every step worked" not in r.stdout


def test_the_real_status_md_reads_cleanly():
    text = STATUS_MD.read_text()
    rows = status.rows(text)
    assert len(rows) > 50     # every issue's table, escaped pipes (`qp\|cq`) included
    assert status.problems(text, rows) == []
    assert any(r.section == status.NOT_BUILT_SECTION for r in rows)
    assert status.main(["--strict", str(STATUS_MD)]) == 0


def test_table_rows_pipes_and_states():
    text = ("intro | not a table\n## A — done (x)\n| what | state | shown by |\n|---|---|---|\n"
            "| `rdma res show qp\\|cq` | done: qp, cq | t |\n"
            "| b | **not started** | — |\n| c | Partial (half) | t |\n"
            "| d | blocked: needs KVM | t |\n| e | see the latest note | t |\n"
            "| f | done\\|more | t |\n| g | two | cells | too many |\n\n"
            "| no state column | x |\n|---|---|\n| h | partial |\n")
    rows = status.rows(text)
    by = {r.what: r for r in rows}
    assert set(by) == {"`rdma res show qp|cq`", "b", "c", "d", "e", "f", "g"}
    assert by["`rdma res show qp|cq`"].state == "done"
    assert (by["b"].state, by["c"].state, by["d"].state) == ("not started", "partial", "blocked")
    assert by["e"].state == "" and by["g"].state == ""
    assert [r.what for r in status.not_built(rows)] == ["b", "c", "d", "e", "g"]
    assert status.short(by["b"].section) == "A"
    bad = status.problems(text, rows)
    assert len(bad) == 2 and "'see the latest note'" in bad[0]


def test_a_known_gaps_paragraph_is_refused_by_strict(tmp_path):
    p = tmp_path / "status.md"
    p.write_text("| what | state |\n|---|---|\n| a | done |\n\nKnown gaps: no teleportation.\n")
    assert status.main([str(p)]) == 0
    assert status.main(["--strict", str(p)]) == 1
    assert status.main([str(tmp_path / "missing.md")]) == 2


@pytest.mark.parametrize("left,said", [
    ([], "  (nothing: every row of docs/status.md is done)"),
    ([status.Row(3, "Not built yet", "x", "not started", "not started", "why")],
     "  - x (not started): why"),
])
def test_lines_said(left, said):
    assert status.lines_for(left) == [said]
