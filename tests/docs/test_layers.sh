#!/usr/bin/env bash
# The folders of src/ include only folders below them: docs/design.md's "Layers" line lists them
# bottom first (`format` < `quantize` < ...), and a file in src/A/ (any depth) that includes
# "B/..." with B above A in that order, or a folder the line does not place, fails. include/rebox
# is the floor every folder may use.
# Usage: test_layers.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: test_layers.sh SOURCE_DIR}
cd "$root" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

line=$(grep -m1 -E '^Layers, bottom first:' docs/design.md)
[[ -n $line ]] || { echo "FAIL: docs/design.md has no 'Layers, bottom first:' line"; exit 1; }
declare -A rank
n=0
for folder in $(grep -oE '`[a-z_]+`' <<<"$line" | tr -d '`'); do
    rank[$folder]=$n
    n=$((n + 1))
done
for dir in src/*/; do
    folder=$(basename "$dir")
    [[ -v rank[$folder] ]] || fail "src/$folder/ is not placed in docs/design.md's 'Layers' line"
done

while IFS=: read -r file lineno included; do
    from=$(cut -d/ -f2 <<<"$file")
    to=${included%%/*}
    [[ $to == rebox || $to == "$from" || ! -d src/$to ]] && continue
    [[ -v rank[$from] && -v rank[$to] ]] || continue
    ((rank[$to] > rank[$from])) &&
        fail "$file:$lineno includes $included: src/$to/ sits above src/$from/ in docs/design.md's Layers"
done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^#include "[a-z_]+/[^"]+"' src |
    sed -E 's/#include "([^"]+)"/\1/')

((failures == 0)) && echo "layers: $n folders, every include points down"
exit $((failures > 0))
