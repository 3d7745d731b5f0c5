"""Actions (one command, or one sysfs write) and steps (what changes in one
object, with the actions that do it and the actions that undo it): what a
host model plans and the transaction runs and journals (JSON-able dicts).
"""
from dataclasses import dataclass, field

from . import flower as flower_layer, live, network as network_layer


def write_action(path, text):
    return {"write": path, "text": str(text)}


def argv_action(argv):
    return {"argv": [str(a) for a in argv]}


def run_action(runner, action):
    """Execute one action; ToolError / OSError / LiveError when the kernel refuses it."""
    if "vf_port" in action:
        # A devlink port named by its VF number (rate_layer.leaf_action): which
        # port index the VF has is the driver's choice, asked now.
        dev, vf, i = action["vf_port"]
        ports = {n: idx for idx, n in live.read_vf_ports(runner, dev).items()}
        if vf not in ports:
            raise live.LiveError(f"{dev}: VF {vf} has no devlink port")
        argv = list(action["argv"])
        argv[i] = f"{dev}/{ports[vf]}"
        runner.check(argv)
    elif "flower" in action:
        flower_layer.run_flower(runner, action, lambda where: flower_layer.reprs_of(runner, where))
    elif "net_define" in action:
        network_layer.run_build(runner, action)
    elif "stdin" in action:
        network_layer.run_stdin(runner, action)
    elif "argv" in action and action["argv"][0] == "virsh":
        network_layer.check(runner, action["argv"])      # a command of the virsh co-process
    elif "argv" in action:
        runner.check(action["argv"])
    elif "write" in action:
        runner.write_file(action["write"], action["text"])
    else:
        raise ValueError(f"unknown action {action!r}")


def describe_action(action):
    if "flower" in action:
        return f"tc filter {action['flower']} (vf {action['vf']} pref {action['pref']})"
    if "net_define" in action:
        return f"virsh net-define (network {action['net_define']['name']}, built from its target)"
    if "argv" in action:
        return " ".join(action["argv"]) + (" < XML" if "stdin" in action else "")
    return f"echo {action['text']} > {action['write']}"


@dataclass
class Step:
    layer: str
    obj: str
    summary: str                      # what changes, "prop: live -> want, ..."
    do: list                          # actions, in order
    undo: list = field(default_factory=list)   # actions restoring the state before this step

    def __str__(self):
        return f"{self.layer} {self.obj}: {self.summary}"

    def as_json(self):
        return {"layer": self.layer, "object": self.obj, "summary": self.summary,
                "do": self.do, "undo": self.undo}

    @classmethod
    def from_json(cls, d):
        return cls(d["layer"], d["object"], d["summary"], d["do"], d["undo"])


