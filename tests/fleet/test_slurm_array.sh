#!/usr/bin/env bash
# A real Slurm array on 127.0.0.1 runs deploy/slurm/convert.sbatch over a 3-line manifest (a good
# model, a BLOCKER, a missing source dir): the good GGUF is byte-identical to `rebox convert`'s,
# every index leaves its report, and `sbatch --wait` returns the worst exit code (2). The test
# writes its own slurm.conf and munge key in a temporary folder, starts munged, slurmctld and slurmd
# itself and stops exactly those PIDs on exit. Needs root (Slurm's daemons) and Debian's slurmctld
# slurmd slurm-client munge; exits 77 (skipped) when they are absent, 1 under CI=true (the test run
# installs them, so there a missing one is a failure).
# Usage: bash tests/fleet/test_slurm_array.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
REBOX="$BUILD/rebox"
skip() { [[ ${CI:-} == true ]] && { echo "FAIL (CI=true): $*"; exit 1; }; echo "SKIP: $*"; exit 77; }
for tool in munged slurmctld slurmd sbatch sinfo scontrol; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$tool" >/dev/null || skip "$tool not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
((EUID == 0)) || skip "Slurm's daemons need root here"
start=$SECONDS

T=$(mktemp -d /tmp/rebox-slurm.XXXXXX)
chmod 700 "$T"
pids=()
cleanup() {
  local pid
  # Jobs of this test's own cluster first (slurmstepd outlives slurmd), then the daemons it started.
  [[ -n ${SLURM_CONF:-} ]] && scancel -u "$(id -un)" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$T"/*.log; do echo "--- $log"; tail -20 "$log"; done
  exit 1
}

# munge: its own key, socket and files.
mkdir -p "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge/munge.key"
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/munge.seed" --log-file="$T/munged.log" 2>"$T/munged.out.log" &
pids+=($!)

# Slurm: one node (this machine) on 127.0.0.1, no accounting, ports from this shell's PID.
port=$((17000 + ($$ % 1000) * 2))
cpus=$(nproc)
mkdir -p "$T/state" "$T/spool" "$T/jobs"
cat >"$T/slurm.conf" <<CONF
ClusterName=rebox-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$T/slurm.conf
for _ in $(seq 50); do [[ -S $T/munge/munge.sock ]] && break; sleep 0.1; done
[[ -S $T/munge/munge.sock ]] || fail "munged did not start"
slurmctld -D -i >"$T/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -N localhost >"$T/slurmd.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle* ]] && break
  sleep 0.2
done
[[ $(sinfo -h -o %T 2>/dev/null) == idle* ]] || fail "the node did not come up: $(sinfo 2>&1)"

# The manifest: good (exit 0), group 16 (BLOCKER, exit 2), no such dir (exit 1).
"$BUILD/rebox-mkfixture" "$T/zoo/good" --preset tiny --force >/dev/null
"$BUILD/rebox-mkfixture" "$T/zoo/blocked" --preset tiny --defect group16 --force >/dev/null
printf '# source\tname\toptions\ngood\tgood\t-t 1\nblocked\tblocked\nabsent\tabsent\n' >"$T/zoo/models.tsv"
"$REBOX" convert "$T/zoo/good" -o "$T/reference.gguf" -q -t 1

rc=0
(cd "$T/jobs" && MANIFEST="$T/zoo/models.tsv" OUT="$T/out" REBOX="$REBOX" \
  timeout 120 sbatch --wait --array=0-2 --cpus-per-task=1 "$REPO/deploy/slurm/convert.sbatch") \
  >"$T/sbatch.log" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "sbatch --wait returned $rc (expected 2, the BLOCKER: the worst of 0, 2, 1): $(cat "$T/sbatch.log")"

cmp "$T/out/good.gguf" "$T/reference.gguf" || fail "the array's good.gguf differs from rebox convert's"
python3 - "$T/out" <<'PY' || fail "reports"
import json, sys
out = sys.argv[1]
good = json.load(open(f"{out}/good.json"))
assert good["written"] is True and good["verification"]["ok"] is True, good
for name, code in (("blocked", 2), ("absent", 1)):
    record = json.load(open(f"{out}/{name}.json"))
    assert record["exit_code"] == code, (name, record)
PY
[[ ! -e $T/out/blocked.gguf && ! -e $T/out/absent.gguf ]] || fail "a failed index left a GGUF"
ls "$T/jobs"/rebox-convert-*_{0,1,2}.log >/dev/null || fail "no per-task logs: $(ls "$T/jobs")"
summary_rc=0
"$REBOX" batch "$T/zoo/models.tsv" --summary "$T/out" >"$T/summary.log" || summary_rc=$?
[[ $summary_rc -eq 1 ]] || fail "summary exit $summary_rc (expected 1): $(cat "$T/summary.log")"
echo "PASS test_slurm_array (sbatch --wait = $rc; $((SECONDS - start)) s)"
