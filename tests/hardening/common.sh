# Shared by the fault tests: a scratch folder removed on exit, the tiny fixture, the fault shim,
# and small assertions that print what failed. Sourced with BUILD_DIR as $1 of the test.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
rebox="$build_dir/rebox"
mkfixture="$build_dir/rebox-mkfixture"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d /tmp/rebox-fault.XXXXXX)
cleanups=("rm -rf '$work'")
on_exit() { for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[$i]}" || true; done; }
trap on_exit EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
# What the test run provides (a C compiler, root for tmpfs): missing under CI=true is a failure.
skip_unless_ci() { [[ ${CI:-} == true ]] && fail "(CI=true) $*"; skip "$*"; }

make_fixture() {  # make_fixture DIR [mkfixture args...]
    local dir=$1; shift
    "$mkfixture" "$dir" --preset tiny --tokenizer small "$@" >/dev/null
}

build_shim() {  # prints the path of the compiled LD_PRELOAD fault shim
    local cc=${CC:-cc}
    "$cc" -shared -fPIC -O1 -o "$work/fault_preload.so" "$here/fault_preload.c" -ldl ||
        skip_unless_ci "cannot compile the fault shim with $cc"
    echo "$work/fault_preload.so"
}

temps_in() { find "$1" -maxdepth 1 -name '*.rebox-tmp-*' | sort; }

wait_for_temp() {  # wait_for_temp DIR PID: until a temporary appears (or the process ends)
    local dir=$1 pid=$2
    for _ in $(seq 1 600); do
        [[ -n "$(temps_in "$dir")" ]] && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

line_count() { printf '%s' "$1" | grep -c '' || true; }
