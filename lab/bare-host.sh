#!/bin/sh
# Run on a lab host as root: undo what provisioning/site.yml and the lab's tests
# set up (domains, the role's libvirt networks, installed modules and manager,
# policy, the boot unit, VFs, loaded drivers), leaving the host as booted from
# its image. Used by the lab tests (tests/lab/lib/provisioned.py) and by
# `make demo` step 10 before the playbook runs from bare hosts.
V="virsh -q -c qemu:///system"
for d in $($V list --all --name); do $V destroy "$d"; $V undefine "$d"; done >/dev/null 2>&1
for n in vfwarp-pool-red vfwarp-mgmt vfwarp-scratch; do $V net-destroy $n; $V net-undefine $n; done >/dev/null 2>&1
rm -rf /var/lib/libvirt/images/vfwarp-tenant /etc/modules-load.d/vfwarp-vfio.conf
systemctl disable --now vfwarp-policy.service 2>/dev/null
rm -f /etc/systemd/system/vfwarp-policy.service /etc/modules-load.d/vfwarp.conf \
      /etc/modprobe.d/vfwarp.conf /usr/local/sbin/vfwarpctl /etc/libibverbs.d/vfwarp.driver
rm -rf /etc/vfwarp /opt/vfwarp /run/vfwarp /var/log/vfwarp /usr/local/lib/vfwarp
U=/lib/modules/$(uname -r)/updates/vfwarp
[ -d "$U" ] && rm -rf "$U" && depmod -a
systemctl daemon-reload
for i in $(seq 0 7); do ip netns del vf$i 2>/dev/null; done
ip netns del t0 2>/dev/null
D=/sys/bus/pci/devices/$(lspci -D -n -d 1234:f0a0 | awk 'NR==1{print $1}')
[ -d /sys/module/vfwarp_pf ] && echo 0 > "$D/sriov_numvfs"
rmmod vfwarp_rdma 2>/dev/null; rmmod vfwarp_vf 2>/dev/null; rmmod vfwarp_pf 2>/dev/null
echo "bare: $(lsmod | grep -c '^vfwarp') vfwarp modules loaded"
