"""dcb on the PF netdev (issue 17, docs/qos.md "dcbnl -> admin command"):
`dcb ets|maxrate|app|apptrust` set through the driver's dcbnl ops land in
the device (read back by the show commands, which ask the device, and for
the app table by the driver's debugfs `qos`), refusals change nothing, and
the kernel's app table follows the device's (replaced entries, seeded from
the device when the driver loads again).

Runs on h1 of the session's lab2; uses lib.qos.pf_loaded, which starts and
ends every test with the device's DCB defaults.
"""
from lib.pf import PF_KO
from lib.qos import pf_loaded

DEFAULT_ETS = {"tc_bw": [12, 12, 12, 12, 13, 13, 13, 13], "tc_tsa": ["ets"] * 8,
               "prio_tc": list(range(8))}


def ets(st):
    return {k: st["dcb"]["ets"][k] for k in DEFAULT_ETS}


def test_dcb_ets_and_maxrate_set_read_back_and_refused(lab2):
    with pf_loaded(lab2, num_vfs=0) as pf:
        n = pf.dev
        st = pf.state()
        assert ets(st) == DEFAULT_ETS and st["dcb"]["ets"]["ets_cap"] == 8
        assert st["dcb"]["maxrate"]["tc_maxrate"] == [0] * 8
        # Class 0 strict, 1 and 2 ETS 70/30, priorities 0-1 -> 1, 2 -> 2.
        st = pf.ok(f"dcb ets set dev {n} tc-tsa 0:strict 1:ets 2:ets 3:ets 4:ets 5:ets 6:ets "
                   "7:ets tc-bw 0:0 1:70 2:30 3:0 4:0 5:0 6:0 7:0 prio-tc 0:1 1:1 2:2")
        assert ets(st) == {"tc_bw": [0, 70, 30, 0, 0, 0, 0, 0],
                           "tc_tsa": ["strict"] + ["ets"] * 7,
                           "prio_tc": [1, 1, 2, 3, 4, 5, 6, 7]}
        # tc_maxrate is kbit/s (the dcbnl UAPI). Debian 13's dcb sends the
        # number it parsed as bytes/s unconverted (fixed upstream), so
        # "20000bps" is what reaches the driver as 20000 kbit/s = 20 Mbit/s.
        st = pf.ok(f"dcb maxrate set dev {n} tc-maxrate 1:20000bps 2:5000bps")
        assert st["dcb"]["maxrate"]["tc_maxrate"] == [0, 20000, 5000, 0, 0, 0, 0, 0]
        pf.refused(
            # Credit-based shaping: the device has strict and ETS only.
            (f"dcb ets set dev {n} tc-tsa 3:cbs", "Operation not supported"),
            # Shares not summing to 100 (dcb itself checks this one).
            (f"dcb ets set dev {n} tc-bw 1:60", "sum to 90%"),
            # Above the device's 1.6 Tbit/s.
            (f"dcb maxrate set dev {n} tc-maxrate 3:1700000000bps", "Invalid argument"),
        )


def test_dcb_app_table_and_trust(lab2):
    with pf_loaded(lab2, num_vfs=0) as pf:
        n = pf.dev
        st = pf.ok(f"dcb app add dev {n} dscp-prio 10:5 46:7 default-prio 2",
                   f"dcb apptrust set dev {n} order dscp")
        assert st["dcb"]["app"] == {"default_prio": [2], "dscp_prio": [[10, 5, " "], [46, 7, " "]]}
        assert st["device"]["app"] == {"trust": 2, "default_prio": 2}
        assert st["device"]["dscp"] == {10: 5, 46: 7}
        assert st["dcb"]["apptrust"] == {"order": ["dscp"]}
        # The device has one priority per DSCP: a new one replaces it in
        # the kernel's table too.
        st = pf.ok(f"dcb app add dev {n} dscp-prio 10:3")
        assert st["dcb"]["app"]["dscp_prio"] == [[10, 3, " "], [46, 7, " "]]
        assert st["device"]["dscp"] == {10: 3, 46: 7}
        pf.refused(
            # Ethertype entries other than the default priority, and a
            # trust order of two selectors: not in the device.
            (f"dcb app add dev {n} ethtype-prio 0x8906:3", "Operation not supported"),
            (f"dcb apptrust set dev {n} order pcp dscp", "Operation not supported"),
        )
        st = pf.ok(f"dcb app del dev {n} dscp-prio 46:7")
        assert st["device"]["dscp"] == {10: 3}
        # The device keeps its table across driver loads; the driver lists
        # it again in the kernel's table.
        st = pf.ok(f"rmmod vfwarp_pf && insmod {PF_KO} && udevadm settle -t 20")
        assert st["dcb"]["app"] == {"default_prio": [2], "dscp_prio": [[10, 3, " "]]}
        assert st["dcb"]["apptrust"] == {"order": ["dscp"]}
        pf.ok(f"dcb app del dev {n} dscp-prio 10:3 default-prio 2",
              f"dcb apptrust set dev {n} order pcp")
        st = pf.state()
        assert st["device"]["app"] == {"trust": 1, "default_prio": -1} and st["device"]["dscp"] == {}
