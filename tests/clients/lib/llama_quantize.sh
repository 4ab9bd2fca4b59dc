# llama.cpp's own llama-quantize for the client tests: tools/quantize/ of the llama.cpp source
# bundled in node-llama-cpp (ggufpy_setup clones it), compiled (a few seconds of g++, cached under
# the build dir, never part of the product) against the prebuilt libllama.v0.4.0.so /
# libllama-common.so / libggml*.so of @node-llama-cpp/linux-x64.
# llama_quantize_setup: after clients_init and ggufpy_setup; sets LLAMA_QUANTIZE.
llama_quantize_setup() {
  local libs="$CLIENTS_DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
  local dir="$BUILD/llama-quantize-oracle"
  LLAMA_QUANTIZE="$dir/llama-quantize"
  local stamp
  stamp="$(cat "$GGUFPY_SRC/.rebox-clone-complete" "$libs/libllama.v0.4.0.so" | sha256sum | cut -c1-16)"
  (
    flock 9
    if [[ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" || ! -x "$LLAMA_QUANTIZE" ]]; then
      mkdir -p "$dir"
      command -v g++ >/dev/null || { echo "FAIL: g++ needed to build llama-quantize" >&2; exit 1; }
      local src="$GGUFPY_SRC"
      g++ -std=c++17 -O1 -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" \
        "$src/tools/quantize/quantize.cpp" "$src/tools/quantize/main.cpp" -o "$LLAMA_QUANTIZE.part" \
        -L"$libs" -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so \
        -Wl,-rpath,"$libs"
      mv "$LLAMA_QUANTIZE.part" "$LLAMA_QUANTIZE"
      echo "$stamp" >"$dir/stamp"
    fi
  ) 9>"$BUILD/llama-quantize-oracle.lock" || return 1
}
