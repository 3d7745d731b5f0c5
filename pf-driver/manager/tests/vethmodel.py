"""A host model over a veth pair in a private network namespace, for testing
the transaction (journal, undo order, recovery, confirm timer) with real
commands on a real kernel where no SR-IOV PF exists. A veth has no VFs, so
this model changes what a veth has: MTU, alias, queue length, MAC; one
step per property, so a failure can be injected between any two of them.
It plugs in the way a future layer does (layers.MODELS).

Also a command-line helper for tests that need a separate process
(SIGKILL mid-transaction, the confirm timer, lock contention):
  vethmodel.py run STATE_DIR NETNS TARGET_JSON    transaction.run; prints the outcome
  vethmodel.py confirm STATE_DIR NETNS TARGET_JSON SECONDS
  vethmodel.py hold STATE_DIR SECONDS             take the lock, print 'held', sleep
  vethmodel.py cli ARGS...                        vfwarpctl with this model known
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vfwarp_manager.cli import vfwarpctl as cli  # noqa: E402
from vfwarp_manager.layers import host as layers  # noqa: E402
from vfwarp_manager.txn import confirm, statedir, transaction  # noqa: E402
from vfwarp_manager.txn.lock import Lock  # noqa: E402
from vfwarp_manager.runner import Runner  # noqa: E402

LINKS = ("va", "vb")
PROPS = ("mtu", "alias", "txqlen", "address")
SET_ARG = {"mtu": "mtu", "alias": "alias", "txqlen": "txqueuelen", "address": "address"}


class VethHost:
    kind = "veth"

    def __init__(self, netns):
        self.netns = netns

    @property
    def scope(self):
        return {"netns": self.netns}

    def read(self, runner):
        links = {}
        for name in LINKS:
            (d,) = json.loads(runner.check(["ip", "-n", self.netns, "-j", "link", "show", "dev", name]))
            links[name] = {"mtu": d["mtu"], "alias": d.get("ifalias", ""), "txqlen": d["txqlen"],
                           "address": d["address"]}
        return {"links": links}

    @staticmethod
    def normalize(state):
        return state

    def steps(self, before, target):
        out = []
        for name in LINKS:
            have, want = before["links"][name], target["links"][name]
            for p in PROPS:
                if want.get(p) is None or want[p] == have[p]:
                    continue
                base = ["ip", "-n", self.netns, "link", "set", "dev", name, SET_ARG[p]]
                out.append(layers.Step("links", name, f"{p}: {have[p]} -> {want[p]}",
                                       [layers.argv_action(base + [want[p]])],
                                       [layers.argv_action(base + [have[p]])]))
        return out


layers.MODELS["veth"] = lambda scope: VethHost(scope["netns"])
PROG = [sys.executable, str(Path(__file__).resolve()), "cli"]


def main(argv):
    cmd = argv[0]
    if cmd == "cli":
        return cli.main(argv[1:], prog=PROG)
    if cmd == "hold":
        sd = statedir.StateDir(argv[1])
        sd.ensure()
        Lock(sd.lock).acquire(0)
        print("held", flush=True)
        time.sleep(float(argv[2]))
        return 0
    sd, model, target = statedir.StateDir(argv[1]), VethHost(argv[2]), json.loads(argv[3])
    sd.ensure()
    out = transaction.run(sd, model, Runner(), target, "apply", inject=transaction.Injection.from_env())
    if cmd == "confirm" and out.result == "applied":
        confirm.start(sd, model, out.snapshot, int(argv[4]), PROG)
    print(json.dumps(out.as_json()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
