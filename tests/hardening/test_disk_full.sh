#!/usr/bin/env bash
# Fault test: a conversion into a tmpfs too small for the output fails with exit 1 and one line
# naming "no space left on device", and leaves neither the target nor a temporary file behind.
# Usage: test_disk_full.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
"$rebox" convert "$work/model" -o "$work/full-size.gguf" --quiet --no-verify
size=$(stat -c %s "$work/full-size.gguf")
limit=$(((size / 2 / 4096 + 1) * 4096))  # half the output, whole pages
((limit < size)) || fail "fixture output ($size bytes) too small for a page-sized tmpfs"

mkdir -p "$work/small"
mount -t tmpfs -o size="$limit" tmpfs "$work/small" 2>/dev/null ||
    skip_unless_ci "cannot mount a tmpfs (needs root / CAP_SYS_ADMIN)"
cleanups+=("umount '$work/small'")

set +e
stderr=$("$rebox" convert "$work/model" -o "$work/small/out.gguf" --quiet 2>&1 >/dev/null)
code=$?
set -e
echo "exit $code, output $size bytes, tmpfs $limit bytes: $stderr"
[[ $code == 1 ]] || fail "expected exit 1, got $code"
[[ "$stderr" == *"no space left on device"* ]] || fail "message does not say 'no space left on device'"
[[ $(line_count "$stderr") == 1 ]] || fail "message is not one line"
[[ "$stderr" == *"out.gguf"* ]] || fail "message does not name the file"
leftover=$(ls -A "$work/small")
[[ -z "$leftover" ]] || fail "files left on the full filesystem: $leftover"
echo "PASS"
