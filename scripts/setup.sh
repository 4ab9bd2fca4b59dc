#!/usr/bin/env bash
# Installs what rebox needs on a fresh Debian bookworm machine (as root) and builds it into build/.
# Usage: scripts/setup.sh [--with-test-clients | --tools-only] [--packages-only]
#   --with-test-clients  also installs the npm/python test clients
#   --tools-only         builds only rebox and rebox-mkfixture (what scripts/demo.sh runs)
#   --packages-only      installs the Debian packages and stops (scripts/test.sh: clang first)
set -euo pipefail
cd "$(dirname "$0")/.."
clients=0 tools_only=0 packages_only=0
for arg in "$@"; do
  case "$arg" in
    --with-test-clients) clients=1 ;;
    --tools-only) tools_only=1 ;;
    --packages-only) packages_only=1 ;;
    *) echo "setup: unknown option $arg (see the usage at the top of scripts/setup.sh)" >&2; exit 2 ;;
  esac
done

# ccache: CMakeLists.txt compiles through it when present, so the test run's fresh-clone demo build
# and any rebuild reuse objects already compiled (docs: README "What it needs").
packages=(cmake ninja-build g++ ccache pkg-config git ca-certificates
          nlohmann-json3-dev libsimdjson-dev libcli11-dev libsentencepiece-dev libxxhash-dev libssl-dev libyaml-cpp-dev
          libgtest-dev libgmock-dev libbenchmark-dev time bc)
if ((clients)); then
  packages+=(python3-numpy python3-yaml python3-sentencepiece python3-protobuf  # protobuf: the converter's sentencepiece_model_pb2
             clang libclang-rt-14-dev  # clang: sanitizer + fuzz stage
             slurmctld slurmd slurm-client munge umoci)  # fleet: a Slurm array on 127.0.0.1, the OCI image
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
((packages_only == 0)) || exit 0

if ((clients)); then
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if ((node_major < 20)); then
    echo "setup: Node.js >= 20 is needed for the test clients (found: $(node --version 2>/dev/null || echo none))" >&2
    exit 1
  fi
  # Exact versions from tests/clients/package-lock.json; --omit=optional keeps the CUDA/Vulkan builds out.
  # It downloads while the build below compiles (the build needs none of it); waited for at the end.
  mkdir -p build
  (cd tests/clients && npm ci --omit=optional --no-audit --no-fund --loglevel=error) >build/npm-ci.log 2>&1 &
  npm_pid=$!
fi

# REBOX_TEST_SET (tests/CMakeLists.txt): all GoogleTest cases (the default), or release-checks,
# which scripts/test.sh asks for because its sanitizer stage runs every case.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DREBOX_TEST_SET="${REBOX_TEST_SET:-all}" >/dev/null
if ((tools_only)); then
  cmake --build build -j"$(nproc)" --target rebox_cli rebox_mkfixture
else
  cmake --build build -j"$(nproc)"
fi
if [[ -n ${npm_pid:-} ]] && ! wait "$npm_pid"; then
  echo "setup: npm ci in tests/clients failed:" >&2
  cat build/npm-ci.log >&2
  exit 1
fi
