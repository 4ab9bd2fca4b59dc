#!/usr/bin/env bash
# Installs the built rebox into a temporary prefix, checks that the installed include tree is the
# public API only, builds a consumer that uses find_package(rebox) and includes only
# <rebox/rebox.hpp>, plus the example of docs/library.md, and runs both on checkpoints made by the
# build's rebox-mkfixture.
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null

# The installed headers are exactly the public ones.
installed=$(cd "$work/prefix/include" && find . -type f | sort | tr '\n' ' ')
expected="./rebox/error.hpp ./rebox/ggml_type.hpp ./rebox/gguf_value.hpp ./rebox/rebox.hpp ./rebox/version.hpp "
if [ "$installed" != "$expected" ]; then
  echo "installed headers: $installed"; echo "expected:          $expected"; exit 1
fi
# The public headers include nothing but each other and the standard library.
if grep -h '#include "' "$work/prefix/include/rebox/"*.hpp | grep -v '#include "rebox/'; then
  echo "a public header includes a non-public header"; exit 1
fi

# The first ```cpp block after "## Example" in docs/library.md is the example.
awk '/^## Example/ {section=1} section && /^```cpp$/ && !done {inside=1; next}
     /^```$/ && inside {inside=0; done=1} inside' \
  "$src/docs/library.md" > "$work/example.cpp"
[ -s "$work/example.cpp" ] || { echo "docs/library.md: no \`\`\`cpp block under ## Example"; exit 1; }

cmake -S "$src/tests/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DREBOX_EXAMPLE="$work/example.cpp" >/dev/null
cmake --build "$work/build" >/dev/null

"$build/rebox-mkfixture" "$work/tiny" --preset tiny --tokenizer small >/dev/null
"$build/rebox-mkfixture" "$work/group16" --preset tiny --tokenizer small --defect group16 >/dev/null
"$work/build/consumer" "$work/tiny" "$work/group16" "$work/out"

# The documented example: converts (exit 0, the verification summary on stdout), and on the
# refused checkpoint exits 2 with one BLOCKER line per tensor and nothing written.
"$work/build/example" "$work/tiny" "$work/example.gguf" >"$work/example.out" 2>"$work/example.err"
grep -q '^re-encoded tensors bit-identical: \([0-9]*\)/\1' "$work/example.out" \
  || { echo "example: unexpected output"; cat "$work/example.out" "$work/example.err"; exit 1; }
grep -q '^convert [0-9]*/[0-9]*$' "$work/example.err" || { echo "example: no progress lines"; exit 1; }
set +e
"$work/build/example" "$work/group16" "$work/refused.gguf" >/dev/null 2>"$work/refused.err"
code=$?
set -e
[ "$code" = 2 ] || { echo "example on group16: exit $code, expected 2"; cat "$work/refused.err"; exit 1; }
grep -q '^BLOCKER ' "$work/refused.err" || { echo "example: no BLOCKER line"; exit 1; }
[ ! -e "$work/refused.gguf" ] || { echo "example: refused.gguf was written"; exit 1; }
echo "consumer: ok"
