// Token ids and llama.cpp embeddings for hf_forward.py, for several checkpoints in one process.
// Each job MODEL_DIR:FILE.gguf[,FILE.gguf...]:
//   - tokenizes the first --lines corpus lines with MODEL_DIR's own tokenizer.json + tokenizer_config.json
//     through @lenml/tokenizers (transformers.js' tokenizers, as AutoTokenizer would: special tokens and
//     the post-processor's EOS included) into MODEL_DIR.ids.json;
//   - text check on the first file: llama.cpp's own tokenization of each line, with the file's BOS / EOS
//     where tokenizer.ggml.add_bos_token / add_eos_token say, must equal the ids, so the text path embeds
//     what the ids do;
//   - llama.cpp (node-llama-cpp, CPU) embeds each id list in each file, passed as tokens to which
//     node-llama-cpp must add nothing, and writes the vectors as returned (node-llama-cpp does not
//     normalize them) to FILE.json as {"label", "vectors"}. KV cache F32, flash attention off (below).
// Usage: node forward_embed.mjs --corpus corpus.txt [--lines 12] JOB...   (exit 1 on any failure)
import {readFileSync, writeFileSync} from "node:fs";
import {basename, join} from "node:path";
import {parseArgs} from "node:util";
import {TokenizerLoader} from "@lenml/tokenizers";
import {getLlama, LlamaLogLevel, readGgufFileInfo} from "node-llama-cpp";

const {values: opt, positionals: jobs} = parseArgs({allowPositionals: true, options: {
  corpus: {type: "string"}, lines: {type: "string", default: "12"},
}});
const lines = readFileSync(opt.corpus, "utf8").split("\n").filter((l) => l.length > 0).slice(0, Number(opt.lines));
const problems = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});

function tokenize(modelDir) {
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(readFileSync(join(modelDir, "tokenizer_config.json"), "utf8")),
  });
  const idLists = lines.map((line) => Array.from(tokenizer.encode(line)));
  writeFileSync(`${modelDir}.ids.json`, JSON.stringify(idLists));
  const counts = idLists.map((ids) => ids.length);
  console.log(`  ${basename(modelDir)}: ${lines.length} lines tokenized by its tokenizer.json (${Math.min(...counts)}..${Math.max(...counts)} tokens, last id ${idLists[0].at(-1)})`);
  return idLists;
}

async function textCheck(model, file, idLists) {
  const info = await readGgufFileInfo(file, {sourceType: "filesystem"});
  const ggml = info.metadata?.tokenizer?.ggml ?? {};
  lines.forEach((line, i) => {
    const own = [...(ggml.add_bos_token ? [ggml.bos_token_id] : []), ...model.tokenize(line, false),
      ...(ggml.add_eos_token ? [ggml.eos_token_id] : [])];
    if (own.join(",") !== idLists[i].join(","))
      problems.push(`${file} line ${i + 1}: llama.cpp tokenizes to ...${own.slice(-6)}, the HF tokenizer to ...${idLists[i].slice(-6)}`);
  });
  console.log(`  ${basename(file)}: llama.cpp's tokenization of the ${lines.length} lines (BOS added: ${Boolean(ggml.add_bos_token)}, EOS: ${Boolean(ggml.add_eos_token)}) compared with the HF ids`);
}

async function embed(file, idLists, withTextCheck) {
  // The KV cache in F32 and no flash attention: llama.cpp's defaults (F16 K/V, flash attention on CPU)
  // round every K, V and Q to 11 bits, noise that would hide a small defect; the weights stay the file's.
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0, defaultContextFlashAttention: false,
    experimentalDefaultContextKvCacheKeyType: "F32", experimentalDefaultContextKvCacheValueType: "F32"});
  if (withTextCheck) await textCheck(model, file, idLists);
  const ctx = await model.createEmbeddingContext({contextSize: 512, threads: 1});
  const vectors = [];
  for (const [i, ids] of idLists.entries()) {
    // node-llama-cpp prepends BOS / appends EOS to a token list as the file's add_bos/add_eos say unless
    // already there: then llama.cpp would embed other tokens than the HF model (e.g. add_bos_token wrong).
    const evaluated = ctx.calculateInputLength(ids);
    if (evaluated !== ids.length)
      problems.push(`${file} list ${i + 1}: llama.cpp evaluates ${evaluated} tokens for the ${ids.length} HF ids (BOS/EOS added: tokenizer.ggml.add_bos_token/add_eos_token disagree with the HF tokenizer)`);
    vectors.push(Array.from((await ctx.getEmbeddingFor(ids)).vector));
  }
  await ctx.dispose();
  await model.dispose();
  writeFileSync(file.replace(/\.gguf$/, ".json"), JSON.stringify({label: basename(file), vectors}));
}

for (const job of jobs) {
  const [modelDir, files] = job.split(":");
  if (!files) throw new Error(`job ${job}: expected MODEL_DIR:FILE.gguf[,FILE.gguf...]`);
  const idLists = tokenize(modelDir);
  for (const [n, file] of files.split(",").entries()) await embed(file, idLists, n === 0);
}
await llama.dispose();
if (problems.length) {
  console.log("FAIL: forward_embed:");
  for (const p of problems.slice(0, 20)) console.log("  " + p);
  process.exit(1);
}
