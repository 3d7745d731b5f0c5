#!/usr/bin/env bash
# Build the tenant image (L2): the guest kernel of the host image and an
# initramfs that is the whole root file system. It holds the programs of the
# Debian packages in lab/tenant/packages.txt (taken from the host image, so
# the tenant runs the same Debian 13 user space), their shared libraries,
# the kernel modules of lab/tenant/modules.txt with their dependencies,
# vfwarp_vf.ko + vfwarp_rdma.ko, libibverbs with the vfwarp provider, sshd, and
# lab/tenant/init as PID 1 (no systemd: it boots in seconds once the
# kernel is up, where a systemd boot under nested TCG takes minutes).
#
# Cache: $VFW_CACHE/tenants/<key>/ with key = hash(lab/tenant, this script)
# + host image + the VF modules + provider. Output (shared into every host at
# /mnt/vfwarp/tenant): vmlinuz, initrd.cpio, ssh key pair of the image.
set -euo pipefail
source "$(dirname "$0")/common.sh"

img=$("$VFW_TOP/lab/build-image.sh" | tail -n1)
root="$img/rootfs"; kver=$(cat "$img/kver")
mods="$VFW_TOP/build/guest/modules"
prov="$VFW_TOP/build/guest/rdma-core"
lib=$(cd "$prov" 2>/dev/null && ls libvfwarp-rdmav*.so 2>/dev/null | head -n1 || true)
for m in $VFW_VF_MODULES; do
  [ -f "$mods/$m.ko" ] || die "no $mods/$m.ko: run 'make modules' first"
done
[ -n "$lib" ] || die "no provider in $prov: run 'make provider' first"

key=$( { vfw_hash_paths lab/tenant lab/build-tenant.sh
         echo "$(basename "$img")"; sha256sum $(printf "$mods/%s.ko " $VFW_VF_MODULES) "$prov/$lib" | cut -c1-64; } |
       sha256sum | cut -c1-16)
cache="$VFW_CACHE/tenants/$key"
out="$VFW_TOP/build/guest/tenant"

install_outputs() {
  mkdir -p "$out"
  cp "$cache/vmlinuz" "$cache/initrd.cpio" "$cache/id_ed25519" "$cache/id_ed25519.pub" "$out/"
  echo "$key" >"$out/key"
  echo "tenant image: $(du -sh --apparent-size "$out/initrd.cpio" | cut -f1) initramfs, kernel $kver (cache key $key)"
}
if [ -f "$cache/.done" ]; then install_outputs; exit 0; fi

step "Tenant image: collecting programs, libraries and modules from the host image"
stage=$(mktemp -d "$VFW_CACHE/tenant-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# Debian 13 has a merged /usr: the top-level directories are links into it.
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,root/.ssh,proc,sys,dev,run,tmp,var/log,mnt}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done

in_root() {  # a command inside the host image's root file system
  unshare -m --propagation private bash -c '
    set -e; r=$1; shift; mount -t proc proc "$r/proc"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"' _ "$root" "$@"
}

# Copy a file of the host image to the same path in the stage (symbolic
# links are kept as links and their targets copied too).
put() {
  local p=$1
  while :; do
    [ -e "$stage$p" ] || [ -L "$stage$p" ] && return 0
    mkdir -p "$stage$(dirname "$p")"
    if [ -L "$root$p" ]; then
      local t; t=$(readlink "$root$p")
      cp -P "$root$p" "$stage$p"
      case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
    else
      cp -p "$root$p" "$stage$p"; return 0
    fi
  done
}

pkgs=$(sed 's/#.*//' "$VFW_TOP/lab/tenant/packages.txt" | tr -s ' \t\n' ' ')
progs=$(in_root dpkg -L $pkgs | grep -E '^/(usr/)?s?bin/' | sort -u)
# Merged /usr: dpkg lists /bin/x and /usr/bin/x for the same file.
for p in $progs; do
  q=${p#/usr}; q=/usr$q
  [ -f "$root$q" ] || [ -L "$root$q" ] || continue
  [ -d "$root$q" ] && continue
  put "$q"
done
put /usr/lib/openssh/sshd-session; put /usr/lib/openssh/sshd-auth
put /usr/share/misc/pci.ids
# Debian makes these with update-alternatives when the package is configured.
ln -sf mawk "$stage/usr/bin/awk"

# The provider: libibverbs finds "driver vfwarp" as libvfwarp-rdmav*.so in
# its provider directory.
pdir=/usr/lib/x86_64-linux-gnu/libibverbs
mkdir -p "$stage$pdir" "$stage/etc/libibverbs.d"
cp "$prov/$lib" "$stage$pdir/$lib"
echo "driver vfwarp" >"$stage/etc/libibverbs.d/vfwarp.driver"

# Shared libraries of every ELF file in the stage, resolved by the image's
# own loader (ldd in the chroot), the provider's included. Scripts among
# the programs make ldd exit non-zero, hence the `|| true`.
mkdir -p "$root/tmp/tenant-ldd"
cp "$prov/$lib" "$root/tmp/tenant-ldd/"
elfs=$(cd "$stage" && find usr -type f -perm -u+x -o -type f -name '*.so*' | sed 's|^|/|')
libs=$( { for e in $elfs; do
            case $e in $pdir/libvfwarp*) e=/tmp/tenant-ldd/$lib ;; esac
            echo "$e"; done; } |
        { in_root xargs -r ldd 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/[^ ]*ld-linux/{print $1}' | sort -u)
rm -rf "$root/tmp/tenant-ldd"
# glibc dlopens libgcc_s for pthread_cancel (iperf3 uses it).
for l in $libs /usr/lib64/ld-linux-x86-64.so.2 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1; do put "$l"; done
n_prog=$(find "$stage/usr/bin" "$stage/usr/sbin" -type f | wc -l)
n_lib=$(echo "$libs" | wc -w)

step "Tenant image: kernel modules"
mlist=$(sed 's/#.*//' "$VFW_TOP/lab/tenant/modules.txt" | tr -s ' \t\n' ' ')
# Stored uncompressed and without Debian's appended signature (objcopy
# rewrites the ELF file and drops it): no xz library for kmod to load, no
# decompression and no signature check at boot, each of which costs seconds
# under nested TCG. The kernel loads unsigned modules (it only taints).
for m in $(in_root modprobe -a -S "$kver" --show-depends $mlist | awk '$1=="insmod"{print $2}' | sort -u); do
  mkdir -p "$stage$(dirname "$m")"
  case $m in
    *.xz) xz -dc "$root$m" >"$stage/tmp/m.ko"; dst=$stage${m%.xz} ;;
    *) cp "$root$m" "$stage/tmp/m.ko"; dst=$stage$m ;;
  esac
  objcopy --strip-debug "$stage/tmp/m.ko" "$dst"
done
rm -f "$stage/tmp/m.ko"
for f in modules.order modules.builtin modules.builtin.modinfo; do put "/lib/modules/$kver/$f"; done
mkdir -p "$stage/usr/lib/modules/$kver/extra"
# Without debug information: 5 MB less to unpack and load under nested TCG.
for m in $VFW_VF_MODULES; do
  objcopy --strip-debug "$mods/$m.ko" "$stage/usr/lib/modules/$kver/extra/$m.ko"
done
# The image's depmod (this machine has no kmod), on the stage bound in.
unshare -m --propagation private bash -c '
  set -e; r=$1; s=$2; k=$3; mkdir -p "$r/mnt/stage"; mount --bind "$s" "$r/mnt/stage"
  chroot "$r" /usr/sbin/depmod -b /mnt/stage "$k"' _ "$root" "$stage" "$kver" ||
  die "depmod failed for the tenant image"

step "Tenant image: configuration, sshd, init"
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/bash
sshd:x:100:65534::/run/sshd:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
printf 'root:*:20000:0:99999:7:::\nsshd:*:20000:0:99999:7:::\n' >"$stage/etc/shadow"
chmod 600 "$stage/etc/shadow"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$stage/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' >"$stage/etc/hosts"
mkdir -p "$stage/etc/ssh"
ssh-keygen -q -t ed25519 -N '' -C vfwarp-tenant-host -f "$stage/etc/ssh/ssh_host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C vfwarp-tenant -f "$stage/id_ed25519"
mv "$stage/id_ed25519" "$stage/id_ed25519.pub" "$stage/tmp/"
install -m 600 "$stage/tmp/id_ed25519.pub" "$stage/root/.ssh/authorized_keys"
cat "$img/id_ed25519.pub" >>"$stage/root/.ssh/authorized_keys"
chmod 700 "$stage/root/.ssh"
cat >"$stage/etc/ssh/sshd_config" <<'EOF'
# Tenant image: key login for root only (no PAM in this image).
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
SetEnv PATH=/usr/sbin:/usr/bin:/sbin:/bin
EOF
install -m 755 "$VFW_TOP/lab/tenant/init" "$stage/init"

rm -rf "$cache"; mkdir -p "$cache"
mv "$stage/tmp/id_ed25519" "$stage/tmp/id_ed25519.pub" "$cache/"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$cache/initrd.cpio"
cp "$img/vmlinuz" "$cache/vmlinuz"
touch "$cache/.done"
echo "tenant image built: $n_prog programs, $n_lib libraries"
install_outputs
