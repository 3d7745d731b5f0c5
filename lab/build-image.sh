#!/usr/bin/env bash
# Build the Debian 13 (trixie) image of an emulated hypervisor host, and the
# build environment (the same root file system used as a chroot, which holds
# the guest kernel's headers and rdma-core's source).
#
# Cache: images/trixie-<key>/ where key = hash(packages.txt, overlay/, this
# script). Holds rootfs/ (the chroot), disk.img (ext4, booted read-only with
# -snapshot), vmlinuz, initrd.img, kver, ssh key for root. Rebuilt only when
# the key changes. Prints the image directory on its last line.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/apt-private.sh"

"$VFW_TOP/tools/install-deps" lab

key=$(vfw_hash_paths lab/image lab/build-image.sh)
img="$VFW_CACHE/images/trixie-$key"
if [ -f "$img/.done" ]; then
  echo "guest image up to date (cache key $key)"
  echo "$img"; exit 0
fi
exec 9>"$VFW_CACHE/image.lock"
flock 9
[ -f "$img/.done" ] && { echo "$img"; exit 0; }

mirror=$(vfw_debian_mirror)
pkgs=$(sed 's/#.*//' "$VFW_TOP/lab/image/packages.txt" | tr -s ' \t\n' ' ')
rm -rf "$img"; mkdir -p "$img"
root="$img/rootfs"

step "debootstrap trixie (minbase) from the machine's Debian mirror"
with_progress debootstrap debootstrap --variant=minbase trixie "$root" "$mirror" \
  >"$img/debootstrap.log" 2>&1 || { tail -n 20 "$img/debootstrap.log"; die "debootstrap failed"; }

# Run a command inside the rootfs in a private mount namespace: the bind
# mounts vanish with the process, even if it is killed.
in_root() {
  unshare -m --propagation private bash -c '
    set -e; r=$1; shift
    mount -t proc proc "$r/proc"; mount --rbind /sys "$r/sys"; mount --rbind /dev "$r/dev"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"' _ "$root" "$@"
}

step "Installing the host packages ($(echo "$pkgs" | wc -w) requested)"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"; chmod +x "$root/usr/sbin/policy-rc.d"
echo "deb-src $mirror trixie main" >>"$root/etc/apt/sources.list"
with_progress "apt in the image" in_root sh -c "apt-get -q update && apt-get -q -y --no-install-recommends install $pkgs" \
  >"$img/apt.log" 2>&1 || { tail -n 30 "$img/apt.log"; die "package installation failed"; }

step "rdma-core source of the installed version (for the provider build)"
rver=$(in_root dpkg-query -W -f='${Version}' rdma-core)
# The mirror may lack the .dsc (404) while serving the tarballs; only the
# upstream tarball is needed, so judge by that file, not apt's exit status.
in_root sh -c "mkdir -p /usr/src/rdma-core && cd /usr/src/rdma-core && apt-get -q source --download-only rdma-core=$rver" \
  >>"$img/apt.log" 2>&1 || true
orig=$(ls "$root"/usr/src/rdma-core/rdma-core_*.orig.tar.* 2>/dev/null | head -n1)
[ -n "$orig" ] || die "rdma-core source $rver not available (see $img/apt.log)"
tar -C "$root/usr/src/rdma-core" -xf "$orig"
echo "$rver" >"$img/rdma-core-version"

step "Configuring the image (network, ssh, fstab)"
rm -f "$root/usr/sbin/policy-rc.d"
cp -a "$VFW_TOP/lab/image/overlay/." "$root/"
mkdir -p "$root/mnt/vfwarp" "$root/root/.ssh"
ssh-keygen -q -t ed25519 -N '' -C vfwarp-lab -f "$img/id_ed25519"
install -m 600 "$img/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
echo vfwarp-host >"$root/etc/hostname"
in_root systemctl enable systemd-networkd ssh >/dev/null 2>&1
in_root systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_reap.service >/dev/null 2>&1 || true
# Unique per boot: the launcher passes the host name on the kernel command line.
cat >"$root/etc/systemd/system/vfwarp-hostname.service" <<'EOS'
[Unit]
Description=Set the lab host name from the kernel command line
DefaultDependencies=no
Before=network-pre.target
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'for a in $(cat /proc/cmdline); do case $a in vfwarp.host=*) hostname "$${a#vfwarp.host=}";; esac; done'
[Install]
WantedBy=sysinit.target
EOS
in_root systemctl enable vfwarp-hostname.service >/dev/null 2>&1
in_root apt-get clean

kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
[ -d "$root/lib/modules/$kver/build" ] || die "no kernel headers for $kver in the image"
echo "$kver" >"$img/kver"
cp "$root/boot/vmlinuz-$kver" "$img/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$img/initrd.img"

step "Making the ext4 disk image"
mb=$(du -sm --exclude=./usr/src "$root" | cut -f1)
truncate -s $(( mb + mb / 2 + 1024 ))M "$img/disk.img"
with_progress mkfs mkfs.ext4 -q -F -L vfwarp-root -d "$root" "$img/disk.img" || die "mkfs.ext4 failed"
touch "$img/.done"
ln -sfn "$img" "$VFW_CACHE/images/current"
echo "guest image ready: kernel $kver, rdma-core $rver, $(du -sh --apparent-size "$img/disk.img" | cut -f1)"
echo "$img"
