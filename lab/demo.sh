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

step "1/5 Booting two emulated hypervisor hosts (TCG; about a minute)"
labctl up -n 2
labctl status

step "2/5 The adapter on each host's PCIe root port"
for h in h1 h2; do echo "[$h] $(labctl ssh $h "lspci -nn -d 1234:f0a0")"; done

step "3/5 Loading the PF driver built against the guest kernel"
for h in h1 h2; do
  labctl ssh $h "insmod /mnt/vfwarp/modules/vfwarp_pf.ko && dmesg | grep 'vfwarp adapter' | tail -n1 | sed 's/^\[[^]]*\] /[$h] /'"
  labctl ssh $h "lspci -k -d 1234:f0a0 | sed -n 's/^\t*Kernel driver in use: /[$h] driver in use: /p'"
done

step "4/5 IOMMU groups (VFIO-ready hosts)"
for h in h1 h2; do echo "[$h] $(labctl ssh $h 'ls /sys/kernel/iommu_groups | wc -l') IOMMU groups, $(labctl ssh $h 'nproc') vCPU, $(labctl ssh $h "free -m | awk '/Mem:/ {print \$2}'") MiB"; done

step "5/5 What is not built yet"
missing=0
have_vfs=$(labctl ssh h1 "cat /sys/bus/pci/devices/*/sriov_totalvfs 2>/dev/null | head -n1" || true)
note() { echo "  - $*"; missing=$((missing + 1)); }
[ -n "$have_vfs" ] || note "SR-IOV virtual functions on the adapter (adapter skeleton issue)"
[ -f "$VFW_TOP/vf-driver/kernel/Kbuild" ] || note "VF driver vfwarp_vf.ko and iWARP verbs in tenant VMs"
[ -d "$VFW_TOP/vf-driver/rdma-core" ] || note "rdma-core provider (kernel-bypass data path)"
[ -d "$VFW_TOP/pf-driver/manager" ] || note "PF manager CLI and tenant QoS policy files"
[ -d "$VFW_TOP/provisioning" ] || note "Ansible provisioning of the hypervisor hosts"
[ $missing -eq 0 ] && echo "  (nothing: every layer is present)"
echo
echo "demo: done"
