#!/usr/bin/env bash
# Fault test: commands that write several files (split, meta on a split set, convert
# --split-max-size; merge writes one) leave the previous files or the complete new set, never a
# mix: a rename that fails (the LD_PRELOAD shim's Nth rename) rolls back what was renamed, and a
# SIGTERM/SIGINT between two renames (renames slowed by the shim) or at a random point does the same
# from the signal handler. The old and new sets are compared by sha256 of every file in the folder.
# Usage: test_set_all_or_nothing.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
make_fixture "$work/model"
shim=$(build_shim)
"$rebox" convert "$work/model" -o "$work/a.gguf" --quiet
"$rebox" meta "$work/a.gguf" -o "$work/b.gguf" --set general.name=other >/dev/null

# The folder's files and their hashes, one line each (temporaries and asides included).
state() { (cd "$1" && find . -maxdepth 1 -type f | sort | xargs -r sha256sum); }

# Reference sets: the old one (split of a.gguf) and the new one (split of b.gguf), made unfaulted.
mkdir "$work/old" "$work/new"
"$rebox" split "$work/a.gguf" "$work/old/s" --split-max-tensors 10 >/dev/null
"$rebox" split "$work/b.gguf" "$work/new/s" --split-max-tensors 10 >/dev/null
old=$(state "$work/old")
new=$(state "$work/new")
[[ $(find "$work/old" -type f | wc -l) == 3 ]] || fail "expected 3 shards"
[[ $old != "$new" ]] || fail "old and new sets are the same"

fresh() {  # fresh DIR: DIR holds a copy of the old set
    rm -rf "$1"
    cp -r "$work/old" "$1"
}

# 1. split -f over the old set, the Nth rename failing (3 asides + 3 installs: 6 renames).
for n in 1 2 3 4 5 6; do
    dir="$work/fail-$n"
    fresh "$dir"
    set +e
    err=$(LD_PRELOAD="$shim" REBOX_FAULT=rename_fail REBOX_FAULT_AT=$n \
        "$rebox" split -f "$work/b.gguf" "$dir/s" --split-max-tensors 10 2>&1 >/dev/null)
    code=$?
    set -e
    [[ $code == 1 ]] || fail "split, rename $n failing: exit $code ($err)"
    [[ $(line_count "$err") == 1 ]] || fail "split, rename $n failing: not one line: $err"
    [[ $(state "$dir") == "$old" ]] || fail "split, rename $n failing: not the old set: $(state "$dir")"
done
echo "split: a failing rename at each of the 6 renames leaves the old set"

# 1b. convert --split-max-size --force over a previous conversion's shards, the Nth rename failing
# (4 shards: 4 asides + 4 installs).
mkdir "$work/conv-old"
"$rebox" convert "$work/model" -o "$work/conv-old/c.gguf" --split-max-size 20000 --quiet --name old
[[ $(find "$work/conv-old" -type f | wc -l) == 4 ]] || fail "expected 4 convert shards"
conv_old=$(state "$work/conv-old")
for n in 1 3 5 8; do
    dir="$work/conv-fail-$n"
    rm -rf "$dir"
    cp -r "$work/conv-old" "$dir"
    set +e
    err=$(LD_PRELOAD="$shim" REBOX_FAULT=rename_fail REBOX_FAULT_AT=$n "$rebox" convert \
        "$work/model" -o "$dir/c.gguf" --split-max-size 20000 --quiet --force --name new 2>&1)
    code=$?
    set -e
    [[ $code == 1 ]] || fail "convert, rename $n failing: exit $code ($err)"
    [[ $(state "$dir") == "$conv_old" ]] || fail "convert, rename $n failing: not the old shards"
done
echo "convert --split-max-size: a failing rename leaves the previous shards"

# 2. A signal between two renames (each rename slowed to 300 ms; the signal lands in rename k).
check_signal() {  # check_signal LABEL DIR CODE: the folder holds the old or the new set
    local label=$1 dir=$2 code=$3 now
    now=$(state "$dir")
    if [[ $now == "$old" ]]; then echo "$label: exit $code, old set"
    elif [[ $now == "$new" ]]; then echo "$label: exit $code, complete new set"
    else fail "$label: a mixed set (exit $code): $now"; fi
}
for signal in TERM INT; do
    for k in 0 1 2 3 4 5; do
        dir="$work/sig-$signal-$k"
        fresh "$dir"
        LD_PRELOAD="$shim" REBOX_FAULT=slow_rename REBOX_FAULT_DELAY_MS=300 \
            "$rebox" split -f "$work/b.gguf" "$dir/s" --split-max-tensors 10 >/dev/null 2>&1 &
        pid=$!
        # The writing takes well under a second; then rename k is in progress.
        wait_for_temp "$dir" "$pid" || true
        sleep "$(awk -v k="$k" 'BEGIN { printf "%.2f", 0.15 + 0.3 * k }')"
        kill -"$signal" "$pid" 2>/dev/null || true
        set +e
        wait "$pid"
        code=$?
        set -e
        check_signal "split SIG$signal in rename $((k + 1))" "$dir" "$code"
    done
done

# 3. Random points, renames at full speed: split, meta on the split set (shard 1 and shard 2
# (the 11th tensor of a.gguf opens shard 2 of a --split-max-tensors 10 set)
# rewritten: --set changes shard 1's KVs, --rename-tensor a tensor of shard 2), merge -f.
first_tensor_of_2=$("$rebox" inspect --json "$work/a.gguf" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["tensors"][10]["name"])')
mkdir "$work/meta-new"
cp "$work"/old/* "$work/meta-new/"
"$rebox" meta "$work/meta-new/s-00001-of-00003.gguf" --set general.name=meta \
    --rename-tensor "$first_tensor_of_2=renamed.weight" >/dev/null
meta_new=$(state "$work/meta-new")
for i in $(seq 1 12); do
    delay=$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % 400) / 1000 }')
    dir="$work/rand-$i"
    fresh "$dir"
    case $((i % 3)) in
        0) cmd=("$rebox" split -f "$work/b.gguf" "$dir/s" --split-max-tensors 10); want=$new ;;
        1) cmd=("$rebox" meta "$dir/s-00001-of-00003.gguf" --set general.name=meta
                --rename-tensor "$first_tensor_of_2=renamed.weight"); want=$meta_new ;;
        2) cp "$work/b.gguf" "$dir/m.gguf"
           cmd=("$rebox" merge -f "$dir/s-00001-of-00003.gguf" "$dir/m.gguf") ;;
    esac
    before=$(state "$dir")
    LD_PRELOAD="$shim" REBOX_FAULT=slow REBOX_FAULT_DELAY_MS=20 "${cmd[@]}" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -TERM "$pid" 2>/dev/null || true
    set +e
    wait "$pid"
    code=$?
    set -e
    now=$(state "$dir")
    if ((i % 3 == 2)); then
        # merge writes one file: m.gguf is b.gguf still, or the merge of the old set (a.gguf's KVs
        # and tensors).
        merged=$(cd "$dir" && sha256sum m.gguf | cut -d' ' -f1)
        [[ $merged == $(sha256sum "$work/b.gguf" | cut -d' ' -f1) ]] && result=old || result=new
        [[ -z $(temps_in "$dir") ]] || fail "merge at ${delay}s: temporary left: $(temps_in "$dir")"
        if [[ $result == new ]]; then
            "$rebox" diff "$dir/m.gguf" "$work/a.gguf" >/dev/null ||
                fail "merge at ${delay}s: m.gguf is neither the old file nor the merged set"
        fi
        echo "merge SIGTERM at ${delay}s: exit $code, $result file"
    elif [[ $now == "$before" ]]; then echo "${cmd[1]} SIGTERM at ${delay}s: exit $code, old set"
    elif [[ $now == "$want" ]]; then echo "${cmd[1]} SIGTERM at ${delay}s: exit $code, new set"
    else fail "${cmd[1]} SIGTERM at ${delay}s: a mixed set (exit $code): $now"; fi
done
echo "PASS"
