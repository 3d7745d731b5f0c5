"""The invalid corpus (tests/policy/invalid/*.yaml): one operator mistake per file.

Each file starts with comment lines the test reads:
  # mistake: what the operator did
  # expect: LINE:COL RULE | a fragment of the message
  # with: base/legacy-host.yaml     (optional: companions instead of the default)
  # totalvfs: N                     (optional: the PF's sriov_totalvfs)
A tenant file is validated with base/host.yaml and base/blue.yaml, a host
file with base/blue.yaml, unless `# with:` names other companions.
"""
import re
from pathlib import Path

INVALID = Path(__file__).resolve().parent / "invalid"


def cases():
    return sorted(p for p in INVALID.glob("*.yaml"))


def header(path):
    h = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^# (mistake|expect|with|totalvfs): (.*)$", line)
        if m:
            h[m.group(1)] = m.group(2).strip()
    return h


def expectation(h):
    m = re.match(r"^(\d+):(\d+) (\S+) \| (.+)$", h.get("expect", ""))
    return (int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)) if m else None


def companions(path, h):
    base = INVALID / "base"
    if "with" in h:
        return [str(INVALID / w) for w in h["with"].split()]
    is_host = re.search(r"^kind: host$", path.read_text(), re.M)
    return [str(base / "blue.yaml")] if is_host else [str(base / "host.yaml"), str(base / "blue.yaml")]


def run(path):
    """Every error the validator reports for this case, as PolicyError objects."""
    from vfwarp_manager.policy import validate as policy
    h = header(path)
    total = int(h["totalvfs"]) if "totalvfs" in h else None
    try:
        policy.load(companions(path, h) + [str(path)], totalvfs=total)
    except policy.PolicyInvalid as e:
        return e.errors
    return []
