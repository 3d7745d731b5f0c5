#!/usr/bin/env bash
# Build the project's guest kernel modules against the guest kernel's headers,
# inside the image's root file system used as a chroot (the host kernel has no
# module support and a different compiler). Output: build/guest/modules/*.ko,
# which the launcher shares into every host at /mnt/vfwarp.
set -euo pipefail
source "$(dirname "$0")/common.sh"

img=$("$VFW_TOP/lab/build-image.sh" | tail -n1)
root="$img/rootfs"; kver=$(cat "$img/kver")
out="$VFW_TOP/build/guest"
mkdir -p "$out/modules" "$out/src"

built=0
# vf-driver/kernel/tests: the kernel-verbs test modules (vfw_ktest*.ko) the
# lab tests load to drive the VF's ib_device as a kernel ULP would.
for dir in pf-driver/kernel vf-driver/kernel vf-driver/kernel/tests; do
  [ -f "$VFW_TOP/$dir/Kbuild" ] || continue
  case $dir in
    */tests) name=vf-ktest ;;
    *) name=${dir%%/*} ;;
  esac
  step "Building $dir for guest kernel $kver"
  # Copy sources (and the shared hardware interface and kernel code, which
  # Kbuild reaches as ../../include and ../../common) so the tree stays clean.
  mkdir -p "$out/src/$name/kernel"
  rsync -rc --delete --exclude '*.o' --exclude '*.ko' "$VFW_TOP/$dir/" "$out/src/$name/kernel/"
  rsync -rc --delete "$VFW_TOP/include/" "$out/src/include/"
  rsync -rc --delete --exclude '*.o' --exclude '.*.cmd' "$VFW_TOP/common/" "$out/src/common/"
  unshare -m --propagation private bash -c '
    set -e; r=$1; o=$2; k=$3; n=$4
    mount -t proc proc "$r/proc"; mkdir -p "$r/mnt/build"; mount --bind "$o" "$r/mnt/build"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      make -s -C "/lib/modules/$k/build" M="/mnt/build/src/$n/kernel" modules' \
    _ "$root" "$out" "$kver" "$name" >"$out/$name.log" 2>&1 || { cat "$out/$name.log"; die "$dir failed to build"; }
  grep -i warning "$out/$name.log" && die "$dir: the module build has warnings (see above)"
  cp "$out/src/$name/kernel/"*.ko "$out/modules/"
  built=$((built + 1))
done
echo "$kver" >"$out/modules/kver"
echo "built $built module directories for $kver: $(cd "$out/modules" && ls *.ko 2>/dev/null | tr '\n' ' ')"
