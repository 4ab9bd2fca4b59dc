#!/usr/bin/env bash
# Fault test: an exception that is not a rebox::Error (here std::bad_alloc, from the LD_PRELOAD
# shim's operator new refusing large requests) exits 70 with one line "rebox: internal error: ...",
# as README's exit codes say (here `rebox inspect` of a converted file: its tokenizer arrays need more
# than the 4 KB the shim lets operator new hand out).
# Usage: test_internal_error.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
if grep -q AddressSanitizer "$rebox"; then
    skip "the sanitizer's own operator new cannot be replaced by the shim"
fi
make_fixture "$work/model"
"$rebox" convert "$work/model" -o "$work/model.gguf" --quiet
shim=$(build_shim)
set +e
err=$(LD_PRELOAD="$shim" REBOX_FAULT=bigalloc REBOX_FAULT_MAX_ALLOC=4096 \
    "$rebox" inspect "$work/model.gguf" 2>&1 >/dev/null)
code=$?
set -e
echo "inspect under bigalloc: exit $code: $err"
[[ $code == 70 ]] || fail "expected exit 70, got $code ($err)"
[[ $(line_count "$err") == 1 ]] || fail "expected one line, got: $err"
[[ $err == "rebox: internal error: std::bad_alloc" ]] || fail "unexpected message: $err"
echo "PASS"
