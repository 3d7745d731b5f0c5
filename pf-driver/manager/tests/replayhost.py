"""A PF as the tools' recorded answers: a Replay of the samples in tests/data
(ip -j -d link of a PF with 4 VFs, devlink in switchdev mode, tc per
representor), and the policy files of a one-tenant switchdev host. Shared by
the plan, apply CLI and flower tests."""
from pathlib import Path

from vfwarp_manager.runner import Replay, Result

DATA = Path(__file__).resolve().parent / "data"
PF = "enp1s0"


def answers(numvfs=4, total=16, ip_sample="ip-link-pf-4vfs.json", devlink=True, tc=None):
    """The tools' answers for the samples; tc: {representor: (json text, text)}
    (a representor not named has no filters)."""
    def res(argv, name, rc=0):
        return Result(tuple(argv), rc, (DATA / name).read_text() if name else "",
                      "" if rc == 0 else "Failed to connect to devlink Netlink\n")
    dl = [("devlink", "-j", "dev", "eswitch", "show", "pci/0000:01:00.0"),
          ("devlink", "-j", "port", "show", "pci/0000:01:00.0"),
          ("devlink", "-j", "port", "function", "rate", "show")]
    names = ["devlink-eswitch-switchdev.json", "devlink-port-switchdev.json",
             "devlink-rate-switchdev.json"]
    a = {("ip", "-j", "-d", "link", "show", "dev", PF):
         res(("ip", "-j", "-d", "link", "show", "dev", PF), ip_sample)}
    for argv, name in zip(dl, names):
        a[argv] = res(argv, name) if devlink else res(argv, None, 1)
    for n in range(4):          # the representors devlink-port-switchdev.json names
        dev = f"enp1s0pf0vf{n}"
        js, txt = (tc or {}).get(dev, ("[]", ""))
        for argv, out in ((("tc", "-j", "filter", "show", "dev", dev, "ingress"), js),
                          (("tc", "filter", "show", "dev", dev, "ingress"), txt)):
            a[argv] = Result(argv, 0, out, "")
    return Replay(a, files={f"/sys/class/net/{PF}/device/sriov_numvfs": f"{numvfs}\n",
                            f"/sys/class/net/{PF}/device/sriov_totalvfs": f"{total}\n"},
                  links={f"/sys/class/net/{PF}/device": "0000:01:00.0"})


def write_policy(tmp_path, tenant):
    (tmp_path / "host.yaml").write_text(
        "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, eswitch_mode: switchdev, "
        "line_rate: 10gbit}\n")
    (tmp_path / "blue.yaml").write_text(tenant)
    return [str(tmp_path)]


BLUE = ("version: 1\nkind: tenant\nname: blue\nvfs: {range: 0-1}\nmac_base: \"02:00:00:00:10:00\"\n"
        "vlan: 100\nvlan_priority: 3\nvf_rate: {tx_max: 1gbit, tx_share: 500mbit}\n"
        "rate: {tx_share: 2gbit, tx_max: 4gbit, tx_weight: 10}\n")
