#!/usr/bin/env bash
# make demo: boot the emulated lab (two hypervisor hosts, each with the vfwarp
# adapter, uplinks on one wire), show what works step by step, say what is not
# built yet, and leave nothing running.
set -euo pipefail
source "$(dirname "$0")/common.sh"
labctl() { "$VFW_TOP/lab/labctl" --state "$state" "$@"; }
state=$(mktemp -d /tmp/vfwarp-demo.XXXXXX)
cleanup() { labctl down >/dev/null 2>&1 || true; rm -rf "$state"; echo "demo: lab stopped, nothing left running"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

step "1/10 Booting two emulated hypervisor hosts (TCG; about a minute)"
labctl up -n 2
labctl status

step "2/10 The adapter on each host's PCIe root port"
for h in h1 h2; do echo "[$h] $(labctl ssh $h "lspci -nn -d 1234:f0a0")"; done

step "3/10 Loading the PF driver built against the guest kernel"
for h in h1 h2; do
  labctl ssh $h "insmod /mnt/vfwarp/modules/vfwarp_pf.ko && dmesg | grep 'vfwarp adapter' | tail -n1 | sed 's/^\[[^]]*\] /[$h] /'"
  labctl ssh $h "lspci -k -d 1234:f0a0 | sed -n 's/^\t*Kernel driver in use: /[$h] driver in use: /p'"
done

step "4/10 IOMMU groups (VFIO-ready hosts)"
for h in h1 h2; do echo "[$h] $(labctl ssh $h 'ls /sys/kernel/iommu_groups | wc -l') IOMMU groups, $(labctl ssh $h 'nproc') vCPU, $(labctl ssh $h "free -m | awk '/Mem:/ {print \$2}'") MiB"; done

step "5/10 SR-IOV: 4 VFs per host, a VF setting, VF-to-VF ping across the wire"
for h in h1 h2; do
  n=${h#h}
  labctl ssh $h "set -e
    PF=\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}'); D=/sys/bus/pci/devices/\$PF
    modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm   # the VF driver is also an RDMA driver
    /mnt/vfwarp/rdma-core/install.sh                      # the rdma-core provider (libvfwarp)
    insmod /mnt/vfwarp/modules/vfwarp_vf.ko
    echo 4 > \$D/sriov_numvfs; udevadm settle -t 20 || true
    pfdev=\$(ls \$D/net); ip link set \$pfdev vf 1 max_tx_rate 100
    echo \"[$h] \$(ls /sys/bus/pci/devices/\$PF/ | grep -c virtfn) VFs on \$pfdev; IOMMU groups now \$(ls /sys/kernel/iommu_groups | wc -l)\"
    ip link show \$pfdev | grep -E '^ +vf [01] ' | sed 's/^ */[$h]   /'
    vf=\$(basename \$(readlink \$D/virtfn0)); nd=\$(ls /sys/bus/pci/devices/\$vf/net)
    ip netns add t0; ip link set \$nd netns t0
    ip -n t0 addr add 10.77.0.${n}1/24 dev \$nd; ip -n t0 link set \$nd up
    for i in \$(seq 50); do ip -n t0 link show \$nd | grep -q LOWER_UP && break; sleep 0.1; done
    echo \"[$h]   VF0 netdev \$nd in netns t0 as 10.77.0.${n}1\""
done
labctl ssh h1 "ip netns exec t0 ping -c 3 -i 0.3 -W 2 10.77.0.21 | sed 's/^/[h1]   /' | tail -n 3"

step "6/10 iWARP verbs between the VFs: rping and ib_write_bw -R (kernel bypass through the adapter)"
# the server on h2's VF0, the client on h1's VF0; the bytes move by the
# adapter's DMA between the processes' memory and the wire
labctl ssh h2 "ip netns exec t0 setsid timeout 120 rping -s -a 10.77.0.21 -C 5 -v >/tmp/rping-s.log 2>&1 </dev/null &"
sleep 1
labctl ssh h1 "ip netns exec t0 timeout 120 rping -c -a 10.77.0.21 -C 5 -v -V | sed 's/^/[h1]   /'"
labctl ssh h2 "sleep 1; sed 's/^/[h2]   /' /tmp/rping-s.log"
labctl ssh h2 "ip netns exec t0 setsid timeout 120 ib_write_bw -R -F -s 65536 -n 200 >/tmp/bw-s.log 2>&1 </dev/null &"
sleep 2
labctl ssh h1 "ip netns exec t0 timeout 120 ib_write_bw -R -F -s 65536 -n 200 10.77.0.21 | grep -E 'Device|Transport|#bytes|^ 65536' | sed 's/^/[h1]   /'"

step "7/10 switchdev on h1: VF representors in a bridge, and one ACL offloaded into the adapter"
# h1's eswitch to switchdev: a representor per VF (udev names them from
# their devlink ports), a bridge of them and the uplink; then a tc flower
# rule with skip_sw on VF0's representor drops its ICMP in the adapter
labctl ssh h1 "set -e
  PF=\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}'); pf=\$(ls /sys/bus/pci/devices/\$PF/net)
  devlink dev eswitch set pci/\$PF mode switchdev; udevadm settle -t 20 || true
  devlink port show pci/\$PF | grep pcivf | sed 's/^/[h1]   /'
  r0=\$(devlink -j port show pci/\$PF/1 | python3 -c 'import json,sys; print(list(json.load(sys.stdin)[\"port\"].values())[0][\"netdev\"])')
  ip link add br0 type bridge; ip link set br0 type bridge stp_state 0 forward_delay 0
  for d in \$(ls /sys/class/net | grep \"^\${pf}r\") \$pf; do ip link set \$d master br0; ip link set \$d up; done; ip link set br0 up
  echo \"[h1] representor of VF0: \$r0; ping h1 VF0 -> h2 VF0 through the bridge (it learns):\"
  ip netns exec t0 ping -c 3 -i 0.3 -W 2 10.77.0.21 | sed 's/^/[h1]   /' | tail -n 2
  tc qdisc add dev \$r0 clsact
  tc filter add dev \$r0 ingress protocol ip pref 10 flower skip_sw ip_proto icmp action drop
  echo \"[h1] tc filter add dev \$r0 ingress protocol ip flower skip_sw ip_proto icmp action drop\"
  ip netns exec t0 ping -c 2 -i 0.3 -W 2 10.77.0.21 | sed 's/^/[h1]   /' | tail -n 2 || true
  tc -s filter show dev \$r0 ingress | grep -E 'in_hw|Sent hardware' | sed 's/^/[h1]   /'
  tc qdisc del dev \$r0 clsact
  echo \"[h1] rule removed:\"; ip netns exec t0 ping -c 2 -i 0.3 -W 2 10.77.0.21 | sed 's/^/[h1]   /' | tail -n 2
  ip link del br0; devlink dev eswitch set pci/\$PF mode legacy"

step "8/10 Tenant VMs (L2): one per host from the host's libvirt, a VF each by virsh attach-device"
echo "(nested TCG: each tenant boot takes minutes; progress every 30 s)"
labctl tenant up h1 t1 & p1=$!
labctl tenant up h2 t2 & p2=$!
wait $p1; wait $p2
for h in h1 h2; do
  n=${h#h}
  pf=$(labctl ssh $h "ls /sys/bus/pci/devices/\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}')/net")
  labctl ssh $h "ip link set $pf up"     # libvirt programs VFs only through a PF that is up
  labctl tenant attach $h t$n 2 --mac 52:54:00:aa:0$n:03 --vlan 100
  labctl ssh $h "ip link show $pf | grep -E '^ +vf 2 ' | sed 's/^ */[$h] host sees: /'"
  labctl tenant ssh t$n "set -e
    for i in \$(seq 60); do for d in /sys/class/net/*; do
      [ \"\$(basename \$(readlink -f \$d/device/driver) 2>/dev/null)\" = vfwarp_vf ] && nd=\$(basename \$d); done
      [ -n \"\${nd:-}\" ] && break; sleep 2; done
    echo \"[t$n] \$(lspci -nn -d 1234:f0a1)\"
    echo \"[t$n] VF netdev \$nd, driver vfwarp_vf, MAC \$(cat /sys/class/net/\$nd/address)\"
    ip addr add 10.88.0.$n/24 dev \$nd; ip link set \$nd up; sleep 2"
done
labctl tenant ssh t1 "ping -c 3 -i 0.5 -W 3 10.88.0.2 | sed 's/^/[t1]   /' | tail -n 2"
labctl tenant ssh t2 "setsid timeout 300 rping -s -a 10.88.0.2 -C 5 -v >/tmp/rping-s.log 2>&1 </dev/null &"
sleep 3
labctl tenant ssh t1 "timeout 300 rping -c -a 10.88.0.2 -C 5 -v -V | sed 's/^/[t1]   /'"

step "9/10 The same lab provisioned by Ansible: provisioning/site.yml from bare hosts"
echo "(hosts reset to bare first; the playbook installs drivers, the PF manager, the policy,"
echo " a tenant VM per host with a VF of tenant red's pool, then rping and ib_write_bw -R"
echo " between them: minutes, each task shown as it starts, the guests' boot as retry lines)"
for h in h1 h2; do labctl tenant down $h t${h#h} >/dev/null 2>&1 || true; done
for h in h1 h2; do
  labctl ssh $h "ip netns del t0 2>/dev/null; D=/sys/bus/pci/devices/\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}')
    echo 0 > \$D/sriov_numvfs; rmmod vfwarp_vf vfwarp_pf; echo \"[$h] bare: \$(lsmod | grep -c vfwarp) vfwarp modules\""
done
ansible_bin=$("$VFW_TOP/provisioning/install-ansible.sh" | tail -n1)
t0=$SECONDS
set +e
(cd "$VFW_TOP/provisioning" && PATH="$ansible_bin:$PATH" VFWARP_LAB_STATE="$state" ANSIBLE_NOCOLOR=1 \
   ansible-playbook site.yml) 2>&1 | tee "$state/site.log" | {
  recap=
  while IFS= read -r line; do
    case $line in "PLAY RECAP"*) recap=1 ;; esac
    if [ -n "$recap" ]; then echo "$line"; continue; fi
    case $line in
      "PLAY ["*|"TASK ["*) printf '  [%4ds] %s\n' $((SECONDS - t0)) "${line%% \**}" ;;
      changed:*|fatal:*|"FAILED - RETRYING"*|*'"msg": "rping'*) echo "          $line" ;;
    esac
  done
}
rc=${PIPESTATUS[0]}
set -e
echo "site.yml: exit $rc after $((SECONDS - t0)) s (the recap above: changed counts from bare hosts)"
[ "$rc" -eq 0 ] || { echo "demo: the playbook failed"; exit 1; }

step "10/10 What is not built yet"
missing=0
have_vfs=$(labctl ssh h1 "cat /sys/bus/pci/devices/*/sriov_totalvfs 2>/dev/null | head -n1" || true)
note() { echo "  - $*"; missing=$((missing + 1)); }
[ -n "$have_vfs" ] || note "SR-IOV virtual functions on the adapter (adapter skeleton issue)"
[ -f "$VFW_TOP/vf-driver/kernel/Kbuild" ] || note "VF driver vfwarp_vf.ko"
grep -qs ib_register_device "$VFW_TOP"/vf-driver/kernel/*.c || note "iWARP verbs in the VF driver (ib_device, iw_cm)"
[ -f "$VFW_TOP/lab/vfwarp_lab/tenants.py" ] || note "VFs in nested tenant VMs (virsh attach-device, VF pools)"
grep -qs devlink_register "$VFW_TOP"/pf-driver/kernel/*.c || note "devlink rate and dcb on the PF"
grep -qs vfw_pf_repr_create "$VFW_TOP"/pf-driver/kernel/*.c || note "switchdev: VF representors"
grep -qs vfw_pf_setup_tc "$VFW_TOP"/pf-driver/kernel/*.c || note "tc flower offload into the adapter's switch"
grep -qs switchdev_bridge_port_offload "$VFW_TOP"/pf-driver/kernel/*.c || note "bridge FDB offload"
grep -qs FLOW_ACTION_VLAN_PUSH "$VFW_TOP"/pf-driver/kernel/pf_tc.c && ! grep -qs "VLAN push/pop is not offloaded" "$VFW_TOP"/pf-driver/kernel/pf_tc.c || note "tc VLAN push/pop actions in the adapter (refused today)"
grep -qs "hold_drain" "$VFW_TOP"/adapter/src/dataplane.c || note "back-pressure from a VF's tx_max to its RDMA engine (frames over the cap are dropped: docs/qos.md)"
grep -qs VFW_REG_PF_MBX_DOORBELL "$VFW_TOP"/pf-driver/kernel/*.c || note "VF-to-PF mailbox (a VF asks, the PF decides)"
[ -d "$VFW_TOP/vf-driver/rdma-core" ] || note "rdma-core provider (kernel-bypass data path)"
[ -d "$VFW_TOP/pf-driver/manager" ] || note "PF manager CLI and tenant QoS policy files"
[ -d "$VFW_TOP/provisioning" ] || note "Ansible provisioning of the hypervisor hosts"
[ $missing -eq 0 ] && echo "  (nothing: every layer is present)"
echo
echo "demo: done"
