# gguf-py (llama.cpp's own Python GGUF reader/writer) from the llama.cpp source bundled in
# node-llama-cpp (sourced helper). Needs Debian python3-numpy and python3-yaml.
# Usage: source lib/gguf_py.sh; ggufpy_setup "$BUILD"; ggufpy script.py args...
# The bundle is cloned once into $BUILD/llama-src; a stamp written after a successful clone
# marks it complete, so an interrupted clone is redone. ctest runs the gguf-py tests in parallel:
# the clone is done under a lock (flock), so two tests never clone into the same folder.

GGUFPY_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GGUFPY_PYTHON=/usr/bin/python3 # not the pyenv python3 on PATH: it cannot see Debian's numpy

ggufpy_setup() {
  local build="$1"
  local bundle="$GGUFPY_LIB_DIR/../node_modules/node-llama-cpp/llama/gitRelease.bundle"
  GGUFPY_SRC="$build/llama-src"
  local stamp="$GGUFPY_SRC/.rebox-clone-complete"
  (
    flock 9
    if [[ ! -f "$stamp" || ! -f "$GGUFPY_SRC/gguf-py/gguf/__init__.py" ]]; then
      [[ -f "$bundle" ]] || { echo "FAIL: $bundle missing; run npm ci in tests/clients" >&2; exit 1; }
      rm -rf "$GGUFPY_SRC" "$GGUFPY_SRC.part"
      git -c advice.detachedHead=false clone -q "$bundle" "$GGUFPY_SRC.part" || exit 1
      git -C "$GGUFPY_SRC.part" rev-parse HEAD >"$GGUFPY_SRC.part/.rebox-clone-complete" || exit 1
      mv "$GGUFPY_SRC.part" "$GGUFPY_SRC" || exit 1
    fi
  ) 9>"$build/llama-src.lock" || return 1
  "$GGUFPY_PYTHON" -c 'import numpy, yaml' 2>/dev/null ||
    { echo "FAIL: $GGUFPY_PYTHON lacks numpy/yaml (apt-get install python3-numpy python3-yaml)" >&2; return 1; }
}

# ggufpy_site/sitecustomize.py views GGUFReader's memory map as a plain ndarray (4x faster on real
# vocabularies; the reader's own code unchanged).
ggufpy() { PYTHONPATH="$GGUFPY_LIB_DIR/ggufpy_site:$GGUFPY_SRC/gguf-py" "$GGUFPY_PYTHON" "$@"; }
