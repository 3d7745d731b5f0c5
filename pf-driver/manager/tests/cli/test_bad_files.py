"""Issue 33 item 7: an operator's mistake in the policy files gets one error
line, FILE:LINE:COL, and nothing else happens.

Each test writes the QoS example's files (qosfiles.py) with one mistake, then
  - runs the real `vfwarpctl validate` in its own process, so that a
    traceback or a hang shows: exit 1, that one line on stdout, nothing on
    stderr;
  - runs `apply` of the same files on a stand-in device already at the good
    files (qosdevice.py records every command): exit 1 with the same line,
    and not one command run, the device's state as it was.
"""
import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qosdevice import QosDevice
from qosfiles import BLUE, HOST, RED, ctl, policy_dir

VFWARPCTL = Path(__file__).resolve().parents[2] / "vfwarpctl"


def write_dir(path, files):
    """files: {file name: text}; the example's host.yaml and blue.yaml unless given."""
    path.mkdir()
    for name, text in dict({"host.yaml": HOST, "blue.yaml": BLUE}, **files).items():
        if text is not None:
            (path / name).write_text(text)
    return str(path)


def validate(*paths):
    # A hang is a failure too: far more than a loaded lab host's start-up.
    return subprocess.run([sys.executable, str(VFWARPCTL), "validate", *paths],
                          capture_output=True, text=True, timeout=60)


def assert_refused(tmp_path, bad_dir, place, rule, fragment):
    """validate and apply of bad_dir both give the one line `place: error[rule]: ...`
    holding fragment, and apply changes nothing."""
    r = validate(bad_dir)
    head = f"{place}: error[{rule}]: "
    assert (r.returncode, r.stderr) == (1, ""), (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stdout.count("\n") == 1 and r.stdout.startswith(head), r.stdout
    assert fragment in r.stdout, r.stdout
    dev = QosDevice()
    assert ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[0] == 0
    before, commands = copy.deepcopy(dev.st), len(dev.log)
    rc, out = ctl(tmp_path, dev, "apply", bad_dir)
    assert rc == 1 and r.stdout.rstrip("\n") in out.splitlines(), out
    assert (dev.st, len(dev.log)) == (before, commands), dev.log[commands:]


def col(text, line, needle):
    """1-based column of needle on 1-based line of text."""
    return text.splitlines()[line - 1].index(needle) + 1


def test_control_characters_in_a_name_are_shown_escaped(tmp_path):
    # YAML's "\n" and "\e" escapes: printed raw, the name would forge a second
    # error line and clear the operator's terminal (ESC [2J).
    red = RED.replace("name: red", 'name: "red\\nx.yaml:1:1: error[forged]: boom\\e[2J"')
    d = write_dir(tmp_path / "bad", {"red.yaml": red})
    assert_refused(tmp_path, d, f"{d}/red.yaml:4:7", "syntax",
                   "'red\\nx.yaml:1:1: error[forged]: boom\\x1b[2J' is not valid here")


def test_control_characters_in_a_file_name_are_shown_escaped(tmp_path):
    d = write_dir(tmp_path / "bad", {"red.yaml": RED, "x\x1b[2J\ny.yaml": "- not a mapping\n"})
    assert_refused(tmp_path, d, f"{d}/x\\x1b[2J\\ny.yaml:1:1", "type", "a policy file is a mapping")


def test_integer_with_a_leading_zero_is_refused(tmp_path):
    # YAML 1.1 (PyYAML) reads 0100 as octal 64, YAML 1.2 and editors as 100
    d = write_dir(tmp_path / "bad", {"red.yaml": RED + "vlan: 0100\n"})
    assert_refused(tmp_path, d, f"{d}/red.yaml:8:7", "int-leading-zero",
                   "YAML 1.1 reads 0100 as the octal 64, YAML 1.2 as 100")


def test_base_60_integer_is_refused(tmp_path):
    # YAML 1.1 reads 1:40 as 1 * 60 + 40, YAML 1.2 as the string "1:40"
    d = write_dir(tmp_path / "bad", {"red.yaml": RED + "vlan: 1:40\n"})
    assert_refused(tmp_path, d, f"{d}/red.yaml:8:7", "int-base-60",
                   "YAML 1.1 reads 1:40 as the base-60 number 100, YAML 1.2 as a string")


HUGE = "9" * 5000


@pytest.mark.parametrize("key,text,rule,fragment", [
    ("vlan", f"vlan: {HUGE}\n", "range", "a 5000-digit number is out of range 1..4094"),
    ("version", f"version: {HUGE}\n", "version", "unsupported format version 999999"),
    ("vfs", f"vfs: {{range: {HUGE}-1}}\n", "range", "... (5002 characters)' is out of range 0..255"),
    ("vf_rate", f"vf_rate: {{tx_max: {HUGE}mbit}}\n", "range", "a rate of 5000 digits is larger"),
])
def test_5000_digit_integer_is_refused(tmp_path, key, text, rule, fragment):
    # Python converts no text of over 4,300 digits to an int (ValueError)
    lines = [ln for ln in RED.splitlines(keepends=True) if not ln.startswith(f"{key}:")]
    red = "".join(lines) + text
    d = write_dir(tmp_path / "bad", {"red.yaml": red})
    line, column = red.count("\n"), text.index(HUGE) + 1
    assert_refused(tmp_path, d, f"{d}/red.yaml:{line}:{column}", rule, fragment)


def test_500_nested_brackets_are_refused(tmp_path):
    # PyYAML composes nested collections by recursion: 500 levels exhaust
    # Python's stack (RecursionError); refused at the first level too deep
    red = RED + "vlan: " + "[" * 500 + "]" * 500 + "\n"
    d = write_dir(tmp_path / "bad", {"red.yaml": red})
    # the file's mapping is level 1, so the 32nd bracket opens level 33
    assert_refused(tmp_path, d, f"{d}/red.yaml:8:{col(red, 8, '[') + 31}", "yaml-depth",
                   "nested deeper than 32 levels")


@pytest.mark.parametrize("name,lowercase", [("red.YAML", "red.yaml"), ("red.Yml", "red.yml")])
def test_policy_file_extension_in_another_case_is_refused(tmp_path, name, lowercase):
    # skipped as no policy file, red.YAML's tenant would be removed at apply
    d = write_dir(tmp_path / "bad", {name: RED})
    assert_refused(tmp_path, d, f"{d}/{name}:1:1", "file-extension", f"rename it {lowercase}")


def test_named_pipe_is_refused_without_waiting(tmp_path):
    # open() of a named pipe waits for a writer: validate hung for ever
    d = write_dir(tmp_path / "bad", {"red.yaml": RED})
    os.mkfifo(os.path.join(d, "green.yaml"))
    assert_refused(tmp_path, d, f"{d}/green.yaml:1:1", "file-type",
                   "a named pipe, not a regular file")


@pytest.mark.parametrize("added,value,fragment", [
    ("rate: {tx_weight: 1001}", "1001", "1001 is out of range 1..1000"),
    ("vf: [{index: 0, tx_priority: 8}]", "8", "8 is out of range 0..7"),
])
def test_rate_value_the_driver_refuses_is_refused(tmp_path, added, value, fragment):
    # devlink rate's weight and priority are u32s; vfwarp_pf takes 1..1000
    # and 0..7, and refused the rest halfway through an apply
    red = "".join(ln for ln in RED.splitlines(True) if not ln.startswith(added.split(":")[0] + ":"))
    red += added + "\n"
    line = red.count("\n")
    d = write_dir(tmp_path / "bad", {"red.yaml": red})
    assert_refused(tmp_path, d, f"{d}/red.yaml:{line}:{col(red, line, value)}", "range", fragment)


def test_rdma_dscp_without_a_host_table_is_refused(tmp_path):
    # no dscp_prio: nothing the files say maps the RDMA traffic's DSCP
    host = "".join(ln for ln in HOST.splitlines(True) if not ln.startswith(("dscp_prio", "apptrust")))
    red = RED + "rdma: {dscp: 26}\n"
    d = write_dir(tmp_path / "bad", {"host.yaml": host, "red.yaml": red})
    assert_refused(tmp_path, d, f"{d}/red.yaml:8:{col(red, 8, '26')}", "rdma-dscp-unmapped",
                   "DSCP 26 is not in the host's dscp_prio table")
