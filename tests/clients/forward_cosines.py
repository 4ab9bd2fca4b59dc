"""The command line and the verdict the numpy forward passes share (qwen35_forward.py,
gemma4_forward.py): which llama.cpp vector files to compare, the bound, and the cosines of the last
position's final hidden state, printed per file. A file named with --broken (a GGUF broken on
purpose) must fall below the bound on some line; every other file must stay at or above it on all.
"""
import json
import os

import numpy as np


def parse(argv):
    """argv -> (model_dir, ids_path, vec_paths, broken, min_cos, flags): --min-cos X, --broken FILE
    (repeatable) and any other --flag taken out, the rest positional."""
    args, broken, min_cos, flags = list(argv), [], 0.999, set()
    while "--min-cos" in args or "--broken" in args:
        i = args.index("--min-cos" if "--min-cos" in args else "--broken")
        if args[i] == "--min-cos":
            min_cos = float(args[i + 1])
        else:
            broken.append(args[i + 1])
        del args[i : i + 2]
    flags = {a for a in args if a.startswith("--")}
    args = [a for a in args if not a.startswith("--")]
    return args[0], args[1], args[2:], broken, min_cos, flags


def judge(what, forward, ids_path, vec_paths, broken, min_cos):
    """Runs `forward(ids)` -> [n, hidden] on every id list and compares its last row with each
    file's vectors. Returns the exit code (1 when a file is on the wrong side of the bound)."""
    id_lists = json.load(open(ids_path))
    wants = [forward(np.array(ids))[-1] for ids in id_lists]
    failed = False
    for path in vec_paths + broken:
        vectors = json.load(open(path))["vectors"]
        cosines = [float(w @ np.asarray(g, dtype=np.float64) /
                         (np.linalg.norm(w) * np.linalg.norm(np.asarray(g, dtype=np.float64))))
                   for w, g in zip(wants, vectors)]
        complete = len(cosines) == len(id_lists)
        ok = complete and (min(cosines) < min_cos if path in broken else min(cosines) >= min_cos)
        failed |= not ok
        print(f"  HF {what} forward (numpy) vs llama.cpp on {os.path.basename(path)}"
              f"{' (broken on purpose: must fall below)' if path in broken else ''}: {len(cosines)} lines, "
              f"cosine min {min(cosines):.6f} mean {sum(cosines) / len(cosines):.6f} (bound {min_cos})"
              + ("" if ok else "  <- FAIL"))
    if failed:
        print(f"FAIL: {what} forward: a file on the wrong side of the bound")
    return 1 if failed else 0
