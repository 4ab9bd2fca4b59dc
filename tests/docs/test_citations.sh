#!/usr/bin/env bash
# The code's citations must point into the repository's own docs: no file under src include tests
# tools fuzz bench scripts (nor docs/ or README.md) may cite research notes outside the repository
# (the notes, shared and spec folders beside it), and every `docs/NAME.md` it cites must exist, with a heading
# for each section it names (`docs/gguf.md §3.2`, `§1.1-§1.5`, `§4.4/§5`, `§1-2` check each number).
# Usage: test_citations.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: test_citations.sh SOURCE_DIR}
cd "$root" || exit 1
self=tests/docs/test_citations.sh
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

dirs=()
for d in src include tests tools fuzz bench scripts docs; do [[ -d $d ]] && dirs+=("$d"); done
files=$(grep -rlI --exclude-dir=node_modules "" "${dirs[@]}" README.md 2>/dev/null | grep -v -x "$self" | sort)

# 1. Nothing outside the repository is cited.
# Spelled in pieces so that this script itself holds no such path.
n=notes s=shared
outside="(^|[^A-Za-z0-9_.-])(${n}/|${s}/|spec/[A-Za-z0-9_-]+\\.md)"
while IFS= read -r hit; do
    [[ -n $hit ]] && fail "$hit  (cite docs/*.md instead: the repository's docs must stand alone)"
done < <(grep -nHE "$outside" $files | cut -c1-200)

# 2. Every docs/NAME.md citation resolves, and so does every section number right after it.
# The section numbers each doc has: "## 1. Binary layout" -> 1, "### 1.1 Header" -> 1.1.
declare -A sections_of
has_section() {  # NUMBER FILE
    [[ -v sections_of[$2] ]] ||
        sections_of[$2]=" $(grep -oE '^#{1,6} [0-9][0-9.]*' "$2" | sed -E 's/^#+ //; s/\.$//' | tr '\n' ' ')"
    [[ ${sections_of[$2]} == *" ${1%.} "* ]]
}
cite='docs/[A-Za-z0-9_-]+\.md( ?§[0-9][0-9.]*(( ?[-/,] ?| and )§?[0-9][0-9.]*)*)?'
# Each file's lines as FILE:LINE:TEXT; a line ending in a docs/NAME.md citation is joined with the next
# line when that one continues it with a section ("...docs/gguf.md" / "// §3.1, §5).").
joined_lines() {
    awk 'function flush() { if (held != "") print heldloc ":" held; held = "" }
         FNR == 1 { flush() }
         {
             if (held != "" && match($0, /^[ \t]*(\/\/|#|\*)?[ \t]*§/)) {
                 t = $0; sub(/^[ \t]*(\/\/|#|\*)?[ \t]*/, " ", t); print heldloc ":" held t; held = ""; next
             }
             flush()
             if ($0 ~ /docs\/[A-Za-z0-9_-]+\.md[ \t]*$/) { held = $0; heldloc = FILENAME ":" FNR; next }
             print FILENAME ":" FNR ":" $0
         }
         END { flush() }' "$@"
}
checked=0
where=
while IFS= read -r item; do
    if [[ $item =~ ^[^:]+:[0-9]+:$ ]]; then
        where=${item%:}
        continue
    fi
    checked=$((checked + 1))
    doc=${item%%.md*}.md
    if [[ ! -f $doc ]]; then
        fail "$where: cites $doc, which does not exist"
        continue
    fi
    rest=${item#"$doc"}
    while [[ $rest =~ §?([0-9][0-9.]*)(.*) ]]; do
        n=${BASH_REMATCH[1]}
        rest=${BASH_REMATCH[2]}
        has_section "$n" "$doc" || fail "$where: cites $doc §${n%.}, which has no such section heading"
    done
done < <(joined_lines $files | grep -E 'docs/[A-Za-z0-9_-]+\.md' | grep -oE "^[^:]+:[0-9]+:|$cite")

if ((failures)); then
    echo "$failures citation problem(s)"
    exit 1
fi
echo "citations ok: $checked docs/ citations resolve"
