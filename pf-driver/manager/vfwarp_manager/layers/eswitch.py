"""The eswitch layer: the PF's devlink eswitch mode (legacy | switchdev).
A mode change destroys and re-creates every VF's representor, so its step
waits for udev to have named them (`udevadm settle`) before the layers
that use them (flower.py) go on; its undo does the same.
"""
from . import live
from .actions import Step, argv_action


def read(runner, dev):
    return {"mode": live.read_eswitch(runner, dev)}


def target(desired):
    return {"mode": desired["eswitch"]["mode"]}


def step(dev, have, want):
    settle = argv_action(["udevadm", "settle", "-t", "20"])  # representor names
    mode = lambda m: argv_action(["devlink", "dev", "eswitch", "set", dev, "mode", m])  # noqa: E731
    return Step("eswitch", dev, f"mode: {have} -> {want}", [mode(want), settle], [mode(have), settle])
