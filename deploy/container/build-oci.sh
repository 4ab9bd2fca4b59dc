#!/usr/bin/env bash
# Builds an OCI image layout of the release rebox binary without a container daemon, with Debian's
# umoci: the image is FROM scratch and holds /usr/bin/rebox, the shared libraries ldd resolves for
# it (at the same paths) and nothing else. Push it with skopeo where a registry is reachable:
#   skopeo copy oci:OUT_LAYOUT:TAG docker://registry.example.com/rebox:TAG
# Usage: deploy/container/build-oci.sh BUILD_DIR OUT_LAYOUT [TAG]   (TAG defaults to rebox's version)
# Runs as root or, with umoci --rootless, as any user.
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 BUILD_DIR OUT_LAYOUT [TAG]" >&2
  exit 1
fi
build_dir=$1
layout=$2
binary=$build_dir/rebox
[[ -x $binary ]] || { echo "build-oci: $binary: no rebox binary (build the rebox_cli target first)" >&2; exit 1; }
command -v umoci >/dev/null || { echo "build-oci: umoci not found (apt-get install umoci)" >&2; exit 1; }
tag=${3:-$("$binary" --version | awk '{print $2}')}
[[ -e $layout ]] && { echo "build-oci: $layout exists (remove it or pick another path)" >&2; exit 1; }

rootless=()
((EUID == 0)) || rootless=(--rootless)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci unpack "${rootless[@]}" --image "$layout:$tag" "$work/bundle"
rootfs=$work/bundle/rootfs

install -D -m 0755 "$binary" "$rootfs/usr/bin/rebox"
# Every library the dynamic loader resolves for the binary, and the loader itself, at its own path.
# ldd prints "name => /path (addr)" for libraries and "/path (addr)" for the loader.
ldd "$binary" | awk '/=> \// {print $3} /^\t\// {print $1}' | sort -u | while read -r lib; do
  install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
done
# The loader is also found through /lib64 and /lib on merged-/usr Debian: keep those links.
for link in /lib /lib64; do
  [[ -L $link && ! -e $rootfs$link ]] && ln -s "$(readlink "$link")" "$rootfs$link"
done
mkdir -p "$rootfs/tmp" "$rootfs/models" "$rootfs/out" "$rootfs/manifest"

umoci repack --image "$layout:$tag" "$work/bundle"
umoci config --image "$layout:$tag" --config.entrypoint /usr/bin/rebox \
  --config.user 65532:65532 --config.workingdir / \
  --config.label "org.opencontainers.image.title=rebox" \
  --config.label "org.opencontainers.image.version=$tag"
umoci gc --layout "$layout"
echo "build-oci: $layout:$tag ($(du -sh "$layout" | cut -f1))"
