#!/usr/bin/env bash
# The code's citations must point into the repository's own docs: no file under src include tests
# tools fuzz bench scripts (nor docs/ or README.md) may cite research notes outside the repository
# (notes/..., shared/..., spec/....md), and every `docs/NAME.md` it cites must exist, with a heading
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
outside='(^|[^A-Za-z0-9_.-])(notes/|shared/|spec/[A-Za-z0-9_-]+\.md)'
while IFS= read -r hit; do
    [[ -n $hit ]] && fail "$hit  (cite docs/*.md instead: the repository's docs must stand alone)"
done < <(grep -nHE "$outside" $files | cut -c1-200)

# 2. Every docs/NAME.md citation resolves, and so does every section number right after it.
has_section() {  # FILE NUMBER: a markdown heading "## N. ..." or "### N ..." exists
    local n=${1%.} re
    re="^#{1,6} ${n//./\\.}([. ]|$)"
    grep -qE "$re" "$2"
}
cite='docs/[A-Za-z0-9_-]+\.md( ?§[0-9][0-9.]*(( ?[-/,] ?| and )§?[0-9][0-9.]*)*)?'
while IFS= read -r line; do
    where=${line%%:docs/*}
    citation=${line#"$where":}
    doc=${citation%%.md*}.md
    if [[ ! -f $doc ]]; then
        fail "$where: cites $doc, which does not exist"
        continue
    fi
    sections=$(grep -oE '§?[0-9][0-9.]*' <<<"${citation#"$doc"}" | tr -d '§')
    for n in $sections; do
        has_section "$n" "$doc" || fail "$where: cites $doc §${n%.}, which has no such section heading"
    done
done < <(grep -noHE "$cite" $files)

if ((failures)); then
    echo "$failures citation problem(s)"
    exit 1
fi
echo "citations ok: $(grep -ohE "$cite" $files | wc -l) docs/ citations resolve"
