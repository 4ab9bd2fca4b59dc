#!/usr/bin/env bash
# Fault test: `rebox merge` into a tmpfs with less free space than the merged file needs refuses
# before writing anything, in one line saying how much it needs; --dry-run says the same.
# Usage: test_merge_free_space.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
"$rebox" convert "$work/model" -o "$work/full.gguf" --quiet --no-verify
"$rebox" split "$work/full.gguf" "$work/s" --split-max-tensors 10 >/dev/null
size=$(stat -c %s "$work/full.gguf")
limit=$(((size / 2 / 4096 + 1) * 4096))  # half the output, whole pages
((limit < size)) || fail "fixture output ($size bytes) too small for a page-sized tmpfs"

mkdir -p "$work/small"
mount -t tmpfs -o size="$limit" tmpfs "$work/small" 2>/dev/null ||
    skip_unless_ci "cannot mount a tmpfs (needs root / CAP_SYS_ADMIN)"
cleanups+=("umount '$work/small'")

for dry in "" "--dry-run"; do
    set +e
    stderr=$("$rebox" merge $dry "$work/s-00001-of-00003.gguf" "$work/small/out.gguf" 2>&1 >/dev/null)
    code=$?
    set -e
    echo "merge $dry: exit $code, merged $size bytes, tmpfs $limit bytes: $stderr"
    [[ $code == 1 ]] || fail "expected exit 1, got $code"
    [[ "$stderr" == *"the output needs "*"($size bytes) but only "*" are free"* ]] ||
        fail "message does not say how much it needs"
    [[ $(line_count "$stderr") == 1 ]] || fail "message is not one line"
    leftover=$(ls -A "$work/small")
    [[ -z "$leftover" ]] || fail "files left on the small filesystem: $leftover"
done
echo "PASS"
