#!/usr/bin/env bash
# Build Linux siw (soft-iWARP) as an external module for the lab hosts' kernel.
# Debian's kernel config has "# CONFIG_RDMA_SIW is not set", but the lab needs
# a software iWARP peer for interop tests of the vfwarp adapter (issue 14).
# The source is the guest kernel package's own: linux-source-<x.y> of exactly
# the installed linux-image package version (the tree with Debian's patches
# applied), built inside the image's root file system used as a chroot
# against /lib/modules/<kver>/build, like build-modules.sh.
#
# Cache ($VFW_CACHE/siw/):
#   src-<pkgver>/siw/       only drivers/infiniband/sw/siw (the ~150 MB
#                           source package is downloaded once, cut down to
#                           this and deleted)
#   out/<key>/siw.ko        key = hash(this script, the patch) + kver +
#   out/<key>/accept-fixed/siw.ko   package version + image
#
# Two builds of the same source. siw.ko is Debian's source as it is: the peer
# a tenant meets in the field, used wherever vfwarp's RNIC faces siw
# (tests/lab/test_verbs_interop.py, the benchmark). accept-fixed/siw.ko has
# one fix (lab/siw-accept-before-reply.patch), for the siw-to-siw test of the
# PF netdev (tests/lab/test_siw.py), where both ends are siw: its accept sends
# the MPA reply before it gives the socket to the QP, so a first FPDU that
# the peer sends at once can land on the CM's data_ready, which ignores data
# in RDMA mode, and is never read (under load about one rping in three
# stalled so, the 40 bytes of the client's first SEND unread in the server's
# socket, every byte acked). vfwarp's RNIC, as initiator, waits a little
# before its first FPDU for that reason (RNIC_INITIATOR_SETTLE_NS).
# Output: build/guest/modules/siw.ko and build/guest/modules/siw-accept-fixed/
# siw.ko (shared into every host at /mnt/vfwarp).
set -euo pipefail
source "$(dirname "$0")/common.sh"

img=$("$VFW_TOP/lab/build-image.sh" | tail -n1)
root="$img/rootfs"; kver=$(cat "$img/kver")
pkg="linux-image-$kver"
work="$VFW_CACHE/siw"
out="$VFW_TOP/build/guest/modules"
mkdir -p "$work/out" "$out"

# Run a command in the image chroot with DIR bind-mounted at /mnt/build; the
# mounts vanish with the private mount namespace, even if we are killed.
in_root_with() {
  local dir=$1; shift
  unshare -m --propagation private bash -c '
    set -e; r=$1; d=$2; shift 2
    mount -t proc proc "$r/proc"; mkdir -p "$r/mnt/build"; mount --bind "$d" "$r/mnt/build"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      LANG=C.UTF-8 "$@"' _ "$root" "$dir" "$@"
}

# The Debian version of the running kernel's package, e.g. 6.12.117-1: the
# source package "linux" has exactly this version.
pkgver=$(chroot "$root" dpkg-query -W -f='${Version}' "$pkg") || die "$pkg not installed in the image"
uver=${pkgver%-*}; uver=${uver#*:}
key=$( { vfw_hash_paths lab/build-siw.sh lab/siw-accept-before-reply.patch; echo "$kver $pkgver $(basename "$img")"; } |
       sha256sum | cut -c1-16)
cached="$work/out/$key"

install_outputs() {
  mkdir -p "$out/siw-accept-fixed"
  cp "$cached/siw.ko" "$out/siw.ko"
  cp "$cached/accept-fixed/siw.ko" "$out/siw-accept-fixed/siw.ko"
  echo "siw up to date (cache key $key, kernel $kver, source linux $pkgver): $out/siw.ko, $out/siw-accept-fixed/siw.ko"
}
if [ -f "$cached/siw.ko" ] && [ -f "$cached/accept-fixed/siw.ko" ]; then install_outputs; exit 0; fi

exec 9>"$work/lock"
flock 9

src="$work/src-$pkgver"
if [ ! -f "$src/.done" ]; then
  rm -rf "$src"; mkdir -p "$src/dl"
  # linux-source-<major.minor> of exactly the running kernel's package version
  # is the kernel tree with Debian's patches applied (so any Debian change to
  # siw is included). The mirror serves it, while the "linux" source package
  # (orig tarball + debian/patches) is not reliably there (404 seen).
  srcpkg="linux-source-$(echo "$uver" | cut -d. -f1-2)"
  step "Downloading $srcpkg=$pkgver (~150 MB, once)"
  t0=$SECONDS
  # apt checks the file against the signed Packages index of the image.
  with_progress "apt-get download" in_root_with "$src/dl" sh -c \
    "cd /mnt/build && apt-get -q -o APT::Sandbox::User=root download $srcpkg=$pkgver" \
    >"$src/apt.log" 2>&1 || { tail -n 20 "$src/apt.log"; die "$srcpkg $pkgver not available (see $src/apt.log)"; }
  debf=$(ls "$src/dl/${srcpkg}_"*.deb 2>/dev/null | head -n1)
  [ -n "$debf" ] || die "apt-get download left no $srcpkg .deb (see $src/apt.log)"
  echo "    downloaded $(du -m "$debf" | cut -f1) MB in $((SECONDS - t0)) s"

  step "Extracting drivers/infiniband/sw/siw"
  t0=$SECONDS
  # The .deb holds usr/src/$srcpkg.tar.xz; stream it out and keep one directory.
  extract() {
    dpkg-deb --fsys-tarfile "$debf" | tar -xOf - "./usr/src/$srcpkg.tar.xz" |
      tar -C "$src" -xJf - --strip-components=4 "$srcpkg/drivers/infiniband/sw/siw"
  }
  with_progress "tar" extract
  [ -f "$src/siw/Makefile" ] || die "drivers/infiniband/sw/siw not in $debf"
  echo "    extracted in $((SECONDS - t0)) s"
  sha256sum "$debf" | sed "s|$src/dl/||" >"$src/sources.sha256"
  rm -rf "$src/dl"
  touch "$src/.done"
fi

# build_siw DIR [PATCH]: siw.ko of the source (with PATCH applied) in DIR.
build_siw() {
  local bld=$1 patch=${2:-}
  rm -rf "$bld"; mkdir -p "$bld"
  cp "$src/siw/"*.[ch] "$bld/"
  if [ -n "$patch" ]; then
    patch -d "$bld" -p1 --no-backup-if-mismatch --forward -s <"$patch" ||
      die "$patch does not apply to linux $pkgver"
  fi
  # Kbuild from the upstream Makefile, with the config symbol forced to m, so
  # the object list is the kernel's own rather than a copy here.
  sed 's/^obj-\$(CONFIG_RDMA_SIW)[[:space:]]*+=/obj-m :=/' "$src/siw/Makefile" >"$bld/Kbuild"
  grep -q '^obj-m := siw.o' "$bld/Kbuild" || die "unexpected siw Makefile: $(cat "$src/siw/Makefile")"
  with_progress "make" in_root_with "$bld" make -C "/lib/modules/$kver/build" M=/mnt/build modules \
    >"$bld/build.log" 2>&1 || { cat "$bld/build.log"; die "siw failed to build"; }
  if grep -i warning "$bld/build.log"; then die "siw: the module build has warnings (see above)"; fi
}

step "Building siw.ko for guest kernel $kver (source linux $pkgver), as is and accept-fixed"
t0=$SECONDS
bld="$work/build-$key"
build_siw "$bld"
build_siw "$bld-fixed" "$VFW_TOP/lab/siw-accept-before-reply.patch"
echo "    built in $((SECONDS - t0)) s"
mkdir -p "$cached/accept-fixed"
cp "$bld/siw.ko" "$bld/build.log" "$src/sources.sha256" "$cached/"
cp "$bld-fixed/siw.ko" "$bld-fixed/build.log" "$cached/accept-fixed/"
rm -rf "$bld" "$bld-fixed"
install_outputs
