#!/usr/bin/env bash
# Fault test: SIGTERM (and SIGINT) during the write removes the temporary file, exits non-zero
# (128 + signal) and leaves no target. Writes are slowed by the LD_PRELOAD shim so the signal
# lands mid-write on any machine.
# Usage: test_sigterm.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
shim=$(build_shim)

for signal in TERM INT; do
    out="$work/out-$signal"
    mkdir "$out"
    LD_PRELOAD="$shim" REBOX_FAULT=slow REBOX_FAULT_DELAY_MS=200 \
        "$rebox" convert "$work/model" -o "$out/out.gguf" --quiet --threads 1 &
    pid=$!
    wait_for_temp "$out" "$pid" || fail "SIG$signal: no temporary file appeared"
    sleep 0.5
    temp=$(temps_in "$out")
    [[ -s "$temp" ]] || fail "SIG$signal: temporary is empty, not mid-write"
    kill -"$signal" "$pid"
    set +e
    wait "$pid"
    code=$?
    set -e
    expected=$((128 + $(kill -l "$signal")))
    echo "SIG$signal: exit $code"
    [[ $code == "$expected" ]] || fail "SIG$signal: expected exit $expected, got $code"
    leftover=$(ls -A "$out")
    [[ -z "$leftover" ]] || fail "SIG$signal: files left behind: $leftover"
done
echo "PASS"
