#!/usr/bin/env bash
# Fault test: SIGKILL mid-write cannot run any handler, so it leaves the previous target
# byte-identical and one temporary "<target>.rebox-tmp-<pid>". The next run (--force) removes that
# stale temporary (its pid is dead), succeeds, and its target verifies.
# Usage: test_sigkill.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
make_fixture "$work/other" --seed 7
shim=$(build_shim)
mkdir "$work/out"
target="$work/out/out.gguf"
"$rebox" convert "$work/other" -o "$target" --quiet
cp "$target" "$work/previous.gguf"

LD_PRELOAD="$shim" REBOX_FAULT=slow REBOX_FAULT_DELAY_MS=200 \
    "$rebox" convert "$work/model" -o "$target" --quiet --force --threads 1 &
pid=$!
wait_for_temp "$work/out" "$pid" || fail "no temporary file appeared"
sleep 0.5
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
cmp "$target" "$work/previous.gguf" || fail "the previous target changed"
temps=$(temps_in "$work/out")
[[ "$temps" == "$target.rebox-tmp-$pid" ]] || fail "expected exactly the temporary of $pid, got: $temps"
echo "after SIGKILL: target unchanged, stale temporary $(basename "$temps") ($(stat -c %s "$temps") bytes)"

"$rebox" convert "$work/model" -o "$target" --quiet --force
[[ -z "$(temps_in "$work/out")" ]] || fail "the next run left the stale temporary: $(temps_in "$work/out")"
cmp -s "$target" "$work/previous.gguf" && fail "the target was not replaced"
"$rebox" verify "$work/model" "$target" >/dev/null || fail "the new target does not verify"
echo "PASS"
