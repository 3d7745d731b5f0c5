#!/usr/bin/env bash
# make demo: boot the emulated lab (two hypervisor hosts, each with the vfwarp
# adapter, uplinks on one wire), show what works step by step, say what is not
# built yet, and leave nothing running.
set -euo pipefail
source "$(dirname "$0")/common.sh"
labctl() { "$VFW_TOP/lab/labctl" --state "$state" "$@"; }
state=$(mktemp -d /tmp/vfwarp-demo.XXXXXX)
# The demo's exit status says whether its steps worked: non-zero only when a
# step failed (set -e), and then the step is named.
current=
cleanup() {
  local rc=$?
  labctl down >/dev/null 2>&1 || true; rm -rf "$state"; echo "demo: lab stopped, nothing left running"
  if [ "$rc" -ne 0 ] && [ -n "$current" ]; then
    if [ "$rc" -eq 130 ]; then echo "demo: interrupted in step $current" >&2
    else echo "demo: step $current failed (exit $rc)" >&2; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# VFWARP_DEMO_LAST_STEP=N ends the demo after step N (to watch one step
# without the long ones after it: tenant VMs, the Ansible run);
# VFWARP_DEMO_STEPS="1 10" runs only those steps (step 1 boots the lab, which
# every other step but 11 needs; some steps build on earlier ones: 6 on 5, 9 on 5;
# VFWARP_DEMO_STEPS=11 lab/demo.sh boots nothing)
last_step=${VFWARP_DEMO_LAST_STEP:-99}
only_steps=${VFWARP_DEMO_STEPS:-}

# Each step is a function; the table at the end runs them in order.

demo_1() {
labctl up -n 2
labctl status
}

demo_2() {
for h in h1 h2; do echo "[$h] $(labctl ssh $h "lspci -nn -d 1234:f0a0")"; done
}

demo_3() {
for h in h1 h2; do
  labctl ssh $h "insmod /mnt/vfwarp/modules/vfwarp_pf.ko && dmesg | grep 'vfwarp adapter' | tail -n1 | sed 's/^\[[^]]*\] /[$h] /'"
  labctl ssh $h "lspci -k -d 1234:f0a0 | sed -n 's/^\t*Kernel driver in use: /[$h] driver in use: /p'"
done
}

demo_4() {
for h in h1 h2; do echo "[$h] $(labctl ssh $h 'ls /sys/kernel/iommu_groups | wc -l') IOMMU groups, $(labctl ssh $h 'nproc') vCPU, $(labctl ssh $h "free -m | awk '/Mem:/ {print \$2}'") MiB"; done
}

demo_5() {
for h in h1 h2; do
  n=${h#h}
  labctl ssh $h "set -e
    PF=\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}'); D=/sys/bus/pci/devices/\$PF
    modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm   # for vfwarp_rdma's ib_devices
    /mnt/vfwarp/rdma-core/install.sh                      # the rdma-core provider (libvfwarp)
    for m in $VFW_VF_MODULES; do insmod /mnt/vfwarp/modules/\$m.ko; done
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
}

demo_6() {
# the server on h2's VF0, the client on h1's VF0; the bytes move by the
# adapter's DMA between the processes' memory and the wire
labctl ssh h2 "ip netns exec t0 setsid timeout 120 rping -s -a 10.77.0.21 -C 5 -v >/tmp/rping-s.log 2>&1 </dev/null &"
sleep 1
labctl ssh h1 "ip netns exec t0 timeout 120 rping -c -a 10.77.0.21 -C 5 -v -V | sed 's/^/[h1]   /'"
labctl ssh h2 "sleep 1; sed 's/^/[h2]   /' /tmp/rping-s.log"
labctl ssh h2 "ip netns exec t0 setsid timeout 120 ib_write_bw -R -F -s 65536 -n 200 >/tmp/bw-s.log 2>&1 </dev/null &"
sleep 2
labctl ssh h1 "ip netns exec t0 timeout 120 ib_write_bw -R -F -s 65536 -n 200 10.77.0.21 | grep -E 'Device|Transport|#bytes|^ 65536' | sed 's/^/[h1]   /'"
}

demo_7() {
# The PF manager as the Ansible role installs it (its files and the pure-Python
# part of PyYAML: the host image has python3 but not python3-yaml), a host file
# with a 12 Mbit/s line rate enforced in the adapter, tenant red (VF 0) capped
# at 4 Mbit/s and tenant blue (VF 1) guaranteed 6 Mbit/s; then both send to
# h2 at once with iperf3 and each gets what its file says.
yaml_dir=$(python3 -c 'import os, yaml; print(os.path.dirname(yaml.__file__))')
mkdir -p "$state/policy"
printf 'version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, line_rate: 12mbit, enforce_line_rate: true}\n' \
  > "$state/policy/host.yaml"
printf 'version: 1\nkind: tenant\nname: red\nvfs: {indices: [0]}\nrate: {tx_max: 4mbit}\n' > "$state/policy/red.yaml"
printf 'version: 1\nkind: tenant\nname: blue\nvfs: {indices: [1]}\nrate: {tx_share: 6mbit}\n' > "$state/policy/blue.yaml"
tar -czf "$state/mgr.tgz" --exclude __pycache__ -C "$VFW_TOP/pf-driver/manager" vfwarpctl vfwarp_manager \
    -C "$yaml_dir/.." yaml -C "$state" policy
labctl ssh h1 "rm -rf /opt/vfwarpctl && mkdir -p /opt/vfwarpctl && tar -xz -C /opt/vfwarpctl" < "$state/mgr.tgz"
for f in host red blue; do sed "s/^/[h1]   $f.yaml: /" "$state/policy/$f.yaml"; done
labctl ssh h1 "set -e
  PF=\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}')
  vf1=\$(basename \$(readlink /sys/bus/pci/devices/\$PF/virtfn1)); nd=\$(ls /sys/bus/pci/devices/\$vf1/net)
  ip netns add t1; ip link set \$nd netns t1; ip -n t1 addr add 10.77.0.12/24 dev \$nd; ip -n t1 link set \$nd up
  cd /opt/vfwarpctl && ./vfwarpctl apply policy | sed 's/^/[h1]   /'
  devlink port function rate show | grep -E '/(1|2): type leaf' | sed 's/^/[h1]   /' || true"
labctl ssh h2 "for p in 5201 5202; do ip netns exec t0 setsid timeout 60 iperf3 -s -1 -p \$p >/dev/null 2>&1 </dev/null & done; sleep 1"
labctl ssh h1 "ip netns exec t0 timeout 40 iperf3 -c 10.77.0.21 -p 5201 -t 8 -O 2 -J >/tmp/red.json & \
  ip netns exec t1 timeout 40 iperf3 -c 10.77.0.21 -p 5202 -t 8 -O 2 -J >/tmp/blue.json; wait
  for t in red blue; do python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(\"[h1]   %-4s %5.2f Mbit/s\" % (sys.argv[2], r[\"end\"][\"sum_received\"][\"bits_per_second\"] / 1e6))' /tmp/\$t.json \$t; done
  echo '[h1]   (red: its cap of 4 Mbit/s less headers, ~3.8; blue: the rest of the line, at least its 6)'
  echo '[h1] the tenants removed from the policy: vfwarpctl removes the rate nodes it owned'
  cd /opt/vfwarpctl && rm policy/red.yaml policy/blue.yaml
  printf 'version: 1\\nkind: host\\nadapter: {pf: enp1s0, num_vfs: 4, line_rate: 12mbit}\\n' > policy/host.yaml
  ./vfwarpctl apply policy | sed 's/^/[h1]   /'
  # enforce_line_rate false leaves the param alone: back to no line rate by hand
  B=\$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print \$1}')
  devlink dev param set pci/\$B name line_rate_kbps value 0 cmode runtime
  ip netns del t1"
}

demo_8() {
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
}

demo_9() {
echo "(KVM domains inside the emulated hosts: a tenant boot takes about half a minute; progress every 30 s)"
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
}

demo_10() {
echo "(hosts reset to bare first; the playbook installs drivers, the PF manager, the policy,"
echo " a tenant VM per host with a VF of tenant red's pool, then rping and ib_write_bw -R"
echo " between them: minutes, each task shown as it starts, the guests' boot as retry lines)"
for h in h1 h2; do labctl tenant down $h t${h#h} >/dev/null 2>&1 || true; done
for h in h1 h2; do
  labctl ssh $h "$(cat "$VFW_TOP/lab/bare-host.sh")" | sed "s/^/[$h] /"
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
}

demo_11() {
# read from docs/status.md, kept true at every landing (lab/vfwarp_lab/status.py):
# a gap listed is what the demo says, not a failed step; no lab needed
"$VFW_TOP/lab/not-built" "$VFW_TOP/docs/status.md"
}

steps=(
  "1/11 Booting two emulated hypervisor hosts (TCG; about a minute)"
  "2/11 The adapter on each host's PCIe root port"
  "3/11 Loading the PF driver built against the guest kernel"
  "4/11 IOMMU groups (VFIO-ready hosts)"
  "5/11 SR-IOV: 4 VFs per host, a VF setting, VF-to-VF ping across the wire"
  "6/11 iWARP verbs between the VFs: rping and ib_write_bw -R (kernel bypass through the adapter)"
  "7/11 Tenant QoS from policy files: vfwarpctl on h1, a cap and a guarantee on a congested uplink"
  "8/11 switchdev on h1: VF representors in a bridge, and one ACL offloaded into the adapter"
  "9/11 Tenant VMs (L2): one per host from the host's libvirt, a VF each by virsh attach-device"
  "10/11 The same lab provisioned by Ansible: provisioning/site.yml from bare hosts"
  "11/11 What is not built yet"
)
needs_lab() { local k; for k in $only_steps; do [ "$k" = 11 ] || return 0; done; return 1; }
for s in "${steps[@]}"; do
  n=${s%%/*}
  if [ "$n" -gt "$last_step" ]; then echo "demo: ended after step $last_step (VFWARP_DEMO_LAST_STEP)"; exit 0; fi
  # step 1 boots the lab: always, unless only steps that need no lab are asked for
  if [ -n "$only_steps" ] && [[ " $only_steps " != *" $n "* ]]; then
    [ "$n" = 1 ] && needs_lab || continue
  fi
  step "$s"
  current=$n
  "demo_$n"
  current=
done
echo
echo "demo: done, every step worked"
