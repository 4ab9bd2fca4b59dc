#!/usr/bin/env bash
# deploy/kubernetes/{job,kueue}.yaml as a cluster would judge them, offline: the Job and ConfigMap
# against npm kubernetes-models, the Kueue objects against Kueue's CRD schemas (tests/fleet/kueue-crds)
# with ajv, plus the lint of fleet_manifests.mjs. Then every lint rule is shown to fire: each
# mutation of tests/fleet/fleet_manifests.py breaks one thing in a copy, and the check must fail
# naming that rule.
# Usage: bash tests/clients/test_fleet_manifests.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init fleet_manifests "${1:-}"
REPO="$(cd "$CLIENTS_DIR/../.." && pwd)"
[[ -d "$CLIENTS_DIR/node_modules/kubernetes-models" && -d "$CLIENTS_DIR/node_modules/ajv" ]] || {
  echo "FAIL: kubernetes-models / ajv missing; run: (cd tests/clients && npm ci --omit=optional)" >&2
  exit 1
}
python3 "$REPO/tests/fleet/fleet_manifests.py" "$REPO" "$WORK"

# mutation -> the rule id that must be reported
declare -A expect=(
  [schema-enum]=schema [schema-kueue]=schema [unknown-field]=unknown-field
  [unknown-field-kueue]=unknown-field [indexed-completions]=indexed-completions
  [failindex-needs-backoff]=failindex-needs-backoff [restart-never]=restart-never
  [per-index-needs-indexed]=per-index-needs-indexed [replacement-failed]=replacement-failed
  [rule-order]=rule-order [exit-codes]=exit-codes [requests]=requests [requests-low]=requests
  [image]=image [queue-label]=queue-label [queue-unresolved]=queue-label [quota]=quota
  [manifest]=manifest
)
mapfile -t mutations < <(python3 "$REPO/tests/fleet/fleet_manifests.py" --list)
[[ ${#mutations[@]} -eq ${#expect[@]} ]] || { echo "FAIL: ${#mutations[@]} mutations, ${#expect[@]} expectations"; exit 1; }
mutants=()
for m in "${mutations[@]}"; do
  [[ -n ${expect[$m]:-} ]] || { echo "FAIL: no expected rule for mutation $m"; exit 1; }
  mv "$WORK/$m.json" "$WORK/$m=${expect[$m]}.json"
  mutants+=("$WORK/$m=${expect[$m]}.json")
done
node "$CLIENTS_DIR/fleet_manifests.mjs" "$WORK/clean.json" "${mutants[@]}"

# The manifest inside job.yaml's ConfigMap is one rebox batch accepts: it parses, and each line's
# options column parses (the sources are absent here, so each index fails on its source dir instead).
python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ConfigMap"]
open(sys.argv[2], "w").write(docs[0]["data"]["models.tsv"])' "$REPO/deploy/kubernetes/job.yaml" "$WORK/models.tsv"
lines=$(grep -vc '^#' "$WORK/models.tsv")
for ((i = 0; i < lines; i++)); do
  rc=0
  out=$("$REBOX" batch "$WORK/models.tsv" --out "$WORK/out" --index $i 2>&1) || rc=$?
  [[ $rc -eq 1 && $out == *"no model.safetensors"* && $out != *"options column"* ]] || {
    echo "FAIL: job.yaml's manifest line $i: exit $rc: $out"; exit 1; }
done
rc=0
"$REBOX" batch "$WORK/models.tsv" --index $lines --out "$WORK/out" 2>/dev/null || rc=$?
[[ $rc -eq 4 ]] || { echo "FAIL: index $lines past job.yaml's manifest gave exit $rc, not 4"; exit 1; }
echo "job.yaml's manifest: $lines lines parse in rebox batch, options included"
echo "PASS test_fleet_manifests (${#mutations[@]} broken copies caught, $(clients_elapsed))"
