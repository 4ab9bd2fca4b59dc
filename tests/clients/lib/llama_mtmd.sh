# llama.cpp's own llama-mtmd-cli as a test oracle (sourced, not run): tools/mtmd/ of the llama.cpp
# source bundled in node-llama-cpp (mtmd, clip and every projector graph, plus vendor/hash), compiled
# at -O0 (the graphs run in the prebuilt ggml; only clip's graph building is compiled here: about a
# minute and a half of g++ on two cores, through ccache when there is one, cached under the build dir
# behind a stamp and a lock, never part of the product) against the prebuilt libllama.v0.4.0.so / libllama-common.so / libggml*.so of
# @node-llama-cpp/linux-x64, whose CPU backends are loaded from the binary's folder.
# Usage: after clients_init and ggufpy_setup: llama_mtmd_setup; then "$LLAMA_MTMD_CLI" ...
llama_mtmd_setup() {
  local libs="$CLIENTS_DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
  local dir="$BUILD/llama-mtmd-oracle"
  local stamp lock_fd src
  LLAMA_MTMD_CLI="$dir/llama-mtmd-cli"
  mkdir -p "$dir"
  exec {lock_fd}>"$dir.lock"
  flock "$lock_fd"
  stamp="$(cat "$GGUFPY_SRC/.rebox-clone-complete" "$libs/libllama.v0.4.0.so" | sha256sum | cut -c1-16)"
  if [[ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" || ! -x "$LLAMA_MTMD_CLI" ]]; then
    command -v g++ >/dev/null || { echo "FAIL: g++ needed to build llama-mtmd-cli" >&2; return 1; }
    src="$GGUFPY_SRC"
    local cxx=g++
    command -v ccache >/dev/null && cxx="ccache g++"  # a second build directory compiles nothing
    rm -rf "$dir/obj" && mkdir -p "$dir/obj"
    local flags=(-std=c++17 -O0 -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor"
      -I"$src/tools/mtmd")
    # mtmd's library sources (tools/mtmd/CMakeLists.txt) and the CLI, two compilers at a time.
    printf '%s\n' "$src"/tools/mtmd/{mtmd,mtmd-audio,mtmd-image,mtmd-helper,mtmd-helper-gen,clip,mtmd-cli}.cpp \
      "$src"/tools/mtmd/models/*.cpp "$src/vendor/hash/hash.cpp" |
      CCACHE_BASEDIR="$BUILD" xargs -P2 -I{} sh -c "$cxx"' "$@" -c "{}" -o "'"$dir/obj"'/$(basename "{}" .cpp).o"' _ "${flags[@]}" ||
      { echo "FAIL: compiling llama.cpp's tools/mtmd" >&2; return 1; }
    gcc -O1 -c -I"$src/vendor/hash" "$src/vendor/hash/sha256/sha256.c" -o "$dir/obj/sha256.o"
    g++ "$dir"/obj/*.o -o "$LLAMA_MTMD_CLI.part" -L"$libs" -l:libllama-common.so -l:libllama.v0.4.0.so \
      -l:libggml.v0.4.0.so -l:libggml-base.so -Wl,-rpath,"$libs" -lpthread || return 1
    ln -sf "$libs"/libggml-cpu-*.so "$dir/"  # ggml_backend_load_all looks beside the binary
    rm -rf "$dir/obj"
    mv "$LLAMA_MTMD_CLI.part" "$LLAMA_MTMD_CLI"
    echo "$stamp" >"$dir/stamp"
  fi
  exec {lock_fd}>&-
}

# rebox's pair against the converter-made pair in llama.cpp's mtmd: llama-mtmd-cli loads TEXT.gguf beside rebox's
# MMPROJ.gguf, encodes tools/mtmd/test-1.jpeg and generates 4 tokens (the exit status: the pair loads, mtmd's n_embd
# check passes, the image encodes), clip.cpp dumping the image embeddings (MTMD_DEBUG_EMBEDDINGS=PATH);
# ggufpy_mmproj.py, after checking MMPROJ against the bundle's MmprojModel class chain, writes that chain's own
# mmproj of MODEL_DIR (every tensor and KV as prepare_tensors hands them to gguf-py's GGUFWriter) to
# $WORK/converter-NAME.gguf; mtmd encodes the same image through it beside the same TEXT model, and
# mtmd_embd_cos.py asks for the same shape and every token's cos >= 0.999.
# Usage: llama_mtmd_converter_cos NAME MODEL_DIR TEXT.gguf MMPROJ.gguf OUTTYPE MTMD_ARGS...
#   (after llama_mtmd_setup; OUTTYPE: the converter's --outtype MMPROJ corresponds to; MTMD_ARGS: the chat
#   template and image-token limit the family needs)
llama_mtmd_converter_cos() {
  local name="$1" model_dir="$2" text="$3" mmproj="$4" outtype="$5"
  shift 5
  local converter="$WORK/converter-$name.gguf" which file tokens
  rm -f "$converter"
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$model_dir" "$mmproj" "$outtype" "$converter" \
    >/dev/null || { echo "FAIL: ggufpy_mmproj.py on $mmproj" >&2; return 1; }
  [[ -s "$converter" ]] || { echo "FAIL: the converter wrote no mmproj for $model_dir" >&2; return 1; }
  for which in rebox converter; do
    file="$mmproj" tokens=4
    [[ $which == converter ]] && file="$converter" tokens=1
    rm -f "$WORK/$name-$which.emb"
    MTMD_DEBUG_EMBEDDINGS="$WORK/$name-$which.emb" "$LLAMA_MTMD_CLI" -m "$text" --mmproj "$file" \
      --image "$GGUFPY_SRC/tools/mtmd/test-1.jpeg" -p "describe" -n "$tokens" -t 2 --temp 0 "$@" \
      >"$WORK/$name-$which.log" 2>&1 ||
      { tail -20 "$WORK/$name-$which.log"; echo "FAIL: llama-mtmd-cli on $text with $file" >&2; return 1; }
    [[ -s "$WORK/$name-$which.emb" ]] ||
      { echo "FAIL: llama-mtmd-cli wrote no image embeddings with $file" >&2; return 1; }
  done
  echo "ok: llama.cpp's mtmd loaded the $name pair, encoded an image and generated ($(clients_elapsed))"
  printf '%s, rebox vs converter mmproj: ' "$name"
  ggufpy "$CLIENTS_DIR/mtmd_embd_cos.py" "$WORK/$name-rebox.emb" "$WORK/$name-converter.emb" 0.999 ||
    { echo "FAIL: mtmd's image embeddings through rebox's $name mmproj and the converter's differ" >&2; return 1; }
}
