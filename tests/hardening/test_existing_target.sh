#!/usr/bin/env bash
# Fault test: an existing target is refused without --force (exit 1, one line naming --force,
# target byte-identical, no temporary left); with --force it is replaced by a verified file.
# Usage: test_existing_target.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
mkdir "$work/out"
target="$work/out/out.gguf"
printf 'precious bytes' >"$target"
set +e
stderr=$("$rebox" convert "$work/model" -o "$target" --quiet 2>&1 >/dev/null)
code=$?
set -e
echo "exit $code: $stderr"
[[ $code == 1 ]] || fail "expected exit 1, got $code"
[[ "$stderr" == *"--force"* ]] || fail "message does not name --force"
[[ $(line_count "$stderr") == 1 ]] || fail "message is not one line"
[[ "$(cat "$target")" == "precious bytes" ]] || fail "target changed"
[[ -z "$(temps_in "$work/out")" ]] || fail "temporary left behind"
"$rebox" convert "$work/model" -o "$target" --quiet --force
"$rebox" verify "$work/model" "$target" >/dev/null || fail "replaced target does not verify"
echo "PASS"
