#!/usr/bin/env bash
# The daemon-less OCI image of deploy/container/build-oci.sh works: built with umoci from the
# release binary, its rootfs unpacked and entered with chroot converts a fixture to the same sha256
# as the host binary, and `rebox batch` runs there as a Job's pod would (manifest, weights and
# output at the paths deploy/kubernetes/job.yaml mounts). Exits 77 (skipped) without umoci or root,
# 1 under CI=true (the test run installs umoci and runs as root).
# Usage: bash tests/fleet/test_oci_image.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
skip() { [[ ${CI:-} == true ]] && { echo "FAIL (CI=true): $*"; exit 1; }; echo "SKIP: $*"; exit 77; }
command -v umoci >/dev/null || skip "umoci not installed (apt-get install umoci)"
((EUID == 0)) || skip "chroot needs root"
start=$SECONDS
T=$(mktemp -d /tmp/rebox-oci.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

bash "$REPO/deploy/container/build-oci.sh" "$BUILD" "$T/layout" test
umoci unpack --image "$T/layout:test" "$T/bundle" >/dev/null
rootfs=$T/bundle/rootfs
entrypoint=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["args"][0])' "$T/bundle/config.json")
[[ $entrypoint == /usr/bin/rebox ]] || fail "entrypoint is $entrypoint"
# Only the binary, its libraries and the mount points: no shell, no package manager.
[[ ! -e $rootfs/bin/sh && ! -e $rootfs/usr/bin/sh ]] || fail "the image has a shell"

"$BUILD/rebox-mkfixture" "$rootfs/models/tiny" --preset tiny --force >/dev/null
"$BUILD/rebox" convert "$rootfs/models/tiny" -o "$T/host.gguf" -q -t 1
chroot "$rootfs" /usr/bin/rebox convert /models/tiny -o /out/tiny.gguf -q -t 1
host=$(sha256sum <"$T/host.gguf")
image=$(sha256sum <"$rootfs/out/tiny.gguf")
[[ $host == "$image" ]] || fail "sha256 in the image $image, on the host $host"

printf '/models/tiny\ttiny-batch\t-t 1\n' >"$rootfs/manifest/models.tsv"
JOB_COMPLETION_INDEX=0 chroot "$rootfs" /usr/bin/rebox batch /manifest/models.tsv --out /out
cmp "$rootfs/out/tiny-batch.gguf" "$T/host.gguf" || fail "batch in the image wrote other bytes"
echo "PASS test_oci_image (sha256 ${host%% *}, image $(du -sh "$T/layout" | cut -f1); $((SECONDS - start)) s)"
