#!/usr/bin/env bash
# The first run cannot regress: clone the repository's committed HEAD into a temporary folder, run
# `bash scripts/demo.sh` there exactly as a newcomer would (setup.sh skips installed packages and
# builds only the two tools), and require exit 0 and the verify verdict as the demo's last line:
# "re-encoded tensors bit-identical: N/N, max abs error 0.0; copied tensors bit-identical: M/M" with N > 0.
# The clone's build goes through ccache when it is installed (CMakeLists.txt, keyed independently of
# the checkout's path), so it reuses the test run's own build of the same sources; CCACHE_DISABLE=1
# measures a cold build. KEEP_DEMO=1 keeps the
# temporary folder (its demo.log) for a look. Usage: test_demo_clone.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: test_demo_clone.sh SOURCE_DIR}
if ! sha=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
  echo "SKIP: $src is not a git checkout (nothing committed to clone)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rebox-demo.XXXXXX") || exit 1
trap '[[ -n ${KEEP_DEMO:-} ]] || rm -rf "$work"' EXIT

git clone -q --no-checkout "$src" "$work/rebox" && git -C "$work/rebox" checkout -q "$sha" || exit 1

start=$SECONDS
(cd "$work/rebox" && bash scripts/demo.sh) >"$work/demo.log" 2>&1
rc=$?
echo "demo.sh at ${sha:0:12}: exit $rc after $((SECONDS - start)) s"
last=$(tail -n 1 "$work/demo.log")
if ((rc != 0)); then
  echo "FAIL: scripts/demo.sh exited $rc; its last 30 lines:"
  tail -n 30 "$work/demo.log"
  exit 1
fi
verdict='^re-encoded tensors bit-identical: ([0-9]+)/([0-9]+), max abs error 0\.0; copied tensors bit-identical: ([0-9]+)/([0-9]+)$'
if [[ ! $last =~ $verdict ]] || [[ ${BASH_REMATCH[1]} != "${BASH_REMATCH[2]}" ]] ||
  ((BASH_REMATCH[1] == 0)) || [[ ${BASH_REMATCH[3]} != "${BASH_REMATCH[4]}" ]]; then
  echo "FAIL: the demo's last line is not a clean verify verdict: '$last'; its last 30 lines:"
  tail -n 30 "$work/demo.log"
  exit 1
fi
echo "ok: $last"
