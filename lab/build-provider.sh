#!/usr/bin/env bash
# Build the rdma-core provider libvfwarp (vf-driver/rdma-core/) for the lab
# hosts. rdma-core providers build only in tree (driver.h is private, the
# symbols bind to IBVERBS_PRIVATE_<n>), so this adds providers/vfwarp to a
# scratch copy of the image's own rdma-core source (the version libibverbs1
# in the image has) and builds just that target inside the image's root file
# system used as a chroot, like build-modules.sh.
#
# Cache: $VFW_CACHE/provider-build/rdma-core-<ver>/{src,build} is the scratch
# tree, reused incrementally; out/<key>/ holds the result per content key =
# hash(provider sources, ABI and hardware headers, this script) + rdma-core
# version + image. Output in build/guest/rdma-core/ (shared into every host
# at /mnt/vfwarp/rdma-core):
#   libvfwarp-rdmav34.so  the provider
#   vfwarp.driver         "driver /mnt/vfwarp/rdma-core/libvfwarp" (libibverbs
#                         opens an absolute name + "-rdmav34.so")
#   install.sh            run on a host: puts vfwarp.driver in /etc/libibverbs.d
set -euo pipefail
source "$(dirname "$0")/common.sh"

img=$("$VFW_TOP/lab/build-image.sh" | tail -n1)
root="$img/rootfs"
rver=$(cat "$img/rdma-core-version")       # Debian version, e.g. 56.1-1
uver=${rver%%-*}
uver=${uver#*:}
src="$root/usr/src/rdma-core/rdma-core-$uver"
[ -f "$src/CMakeLists.txt" ] || die "rdma-core $uver source not in the image ($src)"
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")/\1/p' "$src/CMakeLists.txt")
[ -n "$pabi" ] || die "cannot read IBVERBS_PABI_VERSION from $src/CMakeLists.txt"
lib="libvfwarp-rdmav$pabi.so"

work="$VFW_CACHE/provider-build"
tree="$work/rdma-core-$uver"
key=$( { vfw_hash_paths vf-driver/rdma-core include/vfwarp/vfwarp-abi.h \
           include/vfwarp/vfwarp_rdma.h lab/build-provider.sh
         echo "$rver $(basename "$img")"; } | sha256sum | cut -c1-16)
cached="$work/out/$key"
out="$VFW_TOP/build/guest/rdma-core"
mkdir -p "$work/out" "$out"

install_outputs() {
  cp "$cached/$lib" "$out/$lib"
  printf 'driver /mnt/vfwarp/rdma-core/libvfwarp\n' >"$out/vfwarp.driver"
  cat >"$out/install.sh" <<'EOS'
#!/bin/sh
# Run on a lab host: make libibverbs load libvfwarp from the shared build
# directory. Hosts boot with -snapshot, so this lasts until the next boot.
set -e
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /etc/libibverbs.d
cp "$here/vfwarp.driver" /etc/libibverbs.d/vfwarp.driver
echo "installed /etc/libibverbs.d/vfwarp.driver -> $(cat "$here/vfwarp.driver")"
EOS
  chmod +x "$out/install.sh"
  echo "$rver" >"$out/rdma-core-version"
}

if [ -f "$cached/$lib" ]; then
  install_outputs
  echo "provider up to date (cache key $key): $out/$lib"
  exit 0
fi

exec 9>"$work/lock"
flock 9

if [ ! -f "$tree/src/.copied" ]; then
  step "Scratch copy of rdma-core $uver's source"
  rm -rf "$tree"; mkdir -p "$tree"
  cp -a "$src" "$tree/src"
  touch "$tree/src/.copied"
fi
"$VFW_TOP/vf-driver/rdma-core/integrate.sh" "$tree/src" "$VFW_TOP"
rsync -rc --delete "$VFW_TOP/vf-driver/rdma-core/tests/" "$tree/tests/"

# Inside the chroot, the scratch tree is at /mnt/provider-build (a private
# bind mount that vanishes with the process). cmake runs once per tree (and
# again by itself when a CMakeLists.txt changed); ninja builds only the
# provider and what it links (libibverbs, the util and ABI libraries).
log="$work/build.log"
rm -f "$out/$lib"     # no stale provider next to a failed build
step "Building $lib in rdma-core $uver (chroot; ninja -j2)"
start=$SECONDS
with_progress "provider build" unshare -m --propagation private bash -c '
  set -e; r=$1; w=$2; t=$3; j=$4
  mount -t proc proc "$r/proc"; mkdir -p "$r/mnt/provider-build"
  mount --bind "$w" "$r/mnt/provider-build"
  chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    sh -c "set -e; b=/mnt/provider-build/$t/build; mkdir -p \$b; cd \$b
      [ -f build.ninja ] || cmake -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0 \
        ../src
      ninja -j2 $j
      echo \"==> unit test of the data path (fake kernel and device, ASan/UBSan)\"
      cc -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
        -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Werror \
        -I\$b/include -I\$b/../src/providers/vfwarp \
        \$b/../tests/test_datapath.c \$b/../src/providers/vfwarp/verbs.c \
        -o \$b/test_datapath -lpthread
      \$b/test_datapath"' \
  _ "$root" "$work" "rdma-core-$uver" "vfwarp-rdmav$pabi" >"$log" 2>&1 ||
  { tail -n 60 "$log"; die "provider build or unit test failed (full log: $log)"; }
grep -h '^test_datapath:' "$log" | sed 's/^/    /'
# -Werror is on for the provider; this also catches warnings from the
# headers it pulls in, compiled as part of it.
if grep -n 'providers/vfwarp/.*warning' "$log"; then
  die "the provider build has warnings (see above)"
fi
built="$tree/build/lib/$lib"
[ -f "$built" ] || die "ninja finished but $built is missing (log: $log)"
echo "    built in $((SECONDS - start)) s"

mkdir -p "$cached.tmp"
cp "$built" "$cached.tmp/$lib"
rm -rf "$cached"; mv "$cached.tmp" "$cached"
install_outputs
echo "provider: $out/$lib"
