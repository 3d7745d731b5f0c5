#!/usr/bin/env bash
# Build the verbs test tools (tools/verbs/*.c, librdmacm + libibverbs), the
# tests' LD_PRELOAD libraries (tools/preload/*.c -> *.so) and the hostile
# tenant (tools/hostile/*.c: VFIO and the hardware interface in
# include/vfwarp/, no libraries) for the lab
# hosts, inside the image's root file system used as a chroot (it has
# libibverbs-dev and librdmacm-dev), like build-provider.sh. Warnings fail the
# build. Output in build/guest/tools/ (shared into every host at
# /mnt/vfwarp/tools/). Small and fast: rebuilt whenever a source changed.
set -euo pipefail
source "$(dirname "$0")/common.sh"

img=$("$VFW_TOP/lab/build-image.sh" | tail -n1)
root="$img/rootfs"
out="$VFW_TOP/build/guest/tools"
mkdir -p "$out"
stamp="$out/.key"
key=$( { vfw_hash_paths tools/verbs tools/preload tools/hostile include/vfwarp \
                     lab/build-tools.sh; basename "$img"; } |
       sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
  echo "verbs tools up to date: $out"
  exit 0
fi
rm -f "$stamp"
step "Building the verbs tools (chroot)"
start=$SECONDS
# chroot_cc SRC_DIR NAME OUT_NAME CC_ARGS...: compile SRC_DIR/NAME.c in the
# image's root to $out/OUT_NAME; the repo's include/ is there as
# /mnt/vfw-inc (the hardware interface, for tools/hostile)
chroot_cc() {
  local dir=$1 name=$2 target=$3
  shift 3
  rm -f "$out/$target"
  unshare -m --propagation private bash -c '
    set -e; r=$1; s=$2; o=$3; n=$4; t=$5; i=$6; shift 6
    mount -t proc proc "$r/proc"; mkdir -p "$r/mnt/vfw-src" "$r/mnt/vfw-out" "$r/mnt/vfw-inc"
    mount --bind "$s" "$r/mnt/vfw-src"; mount --bind "$o" "$r/mnt/vfw-out"
    mount --bind "$i" "$r/mnt/vfw-inc"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
      cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I/mnt/vfw-inc -o "/mnt/vfw-out/$t" \
        "/mnt/vfw-src/$n.c" "$@"' \
    _ "$root" "$dir" "$out" "$name" "$target" "$VFW_TOP/include" "$@"
  echo "    $target"
}
for src in "$VFW_TOP"/tools/verbs/*.c; do
  name=$(basename "$src" .c)
  chroot_cc "$VFW_TOP/tools/verbs" "$name" "$name" -Wno-unused-parameter -lrdmacm -libverbs
done
for src in "$VFW_TOP"/tools/hostile/*.c; do
  name=$(basename "$src" .c)
  chroot_cc "$VFW_TOP/tools/hostile" "$name" "$name"
done
for src in "$VFW_TOP"/tools/preload/*.c; do
  name=$(basename "$src" .c)
  chroot_cc "$VFW_TOP/tools/preload" "$name" "$name.so" -shared -fPIC -ldl
done
echo "$key" >"$stamp"
echo "    built in $((SECONDS - start)) s: $out"
