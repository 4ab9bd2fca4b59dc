#!/usr/bin/env bash
# Fault test: every write failing with EIO (LD_PRELOAD shim) gives exit 1 and one line naming
# "input/output error", and leaves neither the target nor a temporary file.
# Usage: test_io_error.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
shim=$(build_shim)
mkdir "$work/out"
set +e
stderr=$(LD_PRELOAD="$shim" REBOX_FAULT=eio "$rebox" convert "$work/model" -o "$work/out/out.gguf" \
    --quiet 2>&1 >/dev/null)
code=$?
set -e
echo "exit $code: $stderr"
[[ $code == 1 ]] || fail "expected exit 1, got $code"
[[ "$stderr" == *"input/output error"* ]] || fail "message does not say 'input/output error'"
[[ $(line_count "$stderr") == 1 ]] || fail "message is not one line"
leftover=$(ls -A "$work/out")
[[ -z "$leftover" ]] || fail "files left behind: $leftover"
echo "PASS"
