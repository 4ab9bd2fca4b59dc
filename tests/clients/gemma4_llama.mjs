// llama.cpp v0.4.0 (node-llama-cpp, CPU) on rebox's Gemma 4 files, in one process:
//  - the vocabulary: each test string tokenizes to exactly the ids the checkpoint's own tokenizer.json
//    gives through @lenml/tokenizers (transformers.js' Hugging Face tokenizers, the reference), with
//    special-token text parsed; a BOS is prepended (add_bos), <|channel> / <|"|> are USER_DEFINED
//    (llama.cpp renders them, so isSpecialToken is false) while <|turn> is CONTROL;
//  - the model: each file and its --outtype f32 twin load and their embeddings of a few lines agree
//    (cos >= --min-cos; only the kernels' arithmetic differs, both hold the same values).
// Usage: node gemma4_llama.mjs MODEL_DIR [--min-cos 0.999] A.gguf:F32.gguf...   (exit 1 on any failure)
import {readFileSync} from "node:fs";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {TokenizerLoader} from "@lenml/tokenizers";

const {values: opt, positionals} = parseArgs({allowPositionals: true, options: {
  "min-cos": {type: "string", default: "0.999"},
}});
const [dir, ...pairs] = positionals;
const read = (name) => JSON.parse(readFileSync(`${dir}/${name}`, "utf8"));
const reference = TokenizerLoader.fromPreTrained({tokenizerJSON: read("tokenizer.json"),
                                                  tokenizerConfig: read("tokenizer_config.json")});
const vocab = read("tokenizer.json").model.vocab;
const strings = [
  "Hello world, hello there!",
  " The quick  brown fox\n\njumps over the lazy dog.",
  "<|turn>user\nWhat is the weather in Paris?<turn|>\n<|turn>model\n",
  "<|channel>thought\nthe model thinks<channel|>then it answers",
  "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
  "Café naïve — 1234 and 56.78 ✓",
  "\t\tTabs\n\n\nand newlines",
];
const problems = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
let checkedVocab = false;
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0) / (norm(a) * norm(b));

async function run(file, withVocab) {
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
  if (withVocab) {
    if (model.tokens.bos !== vocab["<bos>"]) problems.push(`${file}: bos ${model.tokens.bos}`);
    if (!model.tokens.shouldPrependBosToken) problems.push(`${file}: llama.cpp would not prepend BOS`);
    for (const [text, special] of [["<|turn>", true], ["<|channel>", false], ["<|\"|>", false]])
      if (model.isSpecialToken(vocab[text]) !== special)
        problems.push(`${file}: ${text} isSpecialToken ${!special} (expected ${special})`);
    for (const s of strings) {
      const got = model.tokenize(s, true);
      const want = reference.encode(s, {add_special_tokens: false});
      if (JSON.stringify(got) !== JSON.stringify(want))
        problems.push(`${file}: ${JSON.stringify(s)}: llama.cpp ${JSON.stringify(got)}, tokenizer.json ${JSON.stringify(want)}`);
    }
    checkedVocab = true;
  }
  const ctx = await model.createEmbeddingContext({contextSize: 256, threads: 1});
  const vectors = [];
  for (const s of strings.slice(0, 4)) {
    const v = (await ctx.getEmbeddingFor(s)).vector;
    if (!v.length || !v.every(Number.isFinite) || norm(v) === 0) problems.push(`${file}: bad embedding`);
    vectors.push(v);
  }
  await ctx.dispose();
  await model.dispose();
  return vectors;
}

for (const pair of pairs) {
  const [file, twin] = pair.split(":");
  const a = await run(file, !checkedVocab), b = await run(twin, false);
  const minCos = Math.min(...a.map((v, i) => cosine(v, b[i])));
  console.log(`  ${file.split("/").pop()}: llama.cpp loads it and its f32 twin; min cosine ${minCos.toFixed(6)}`);
  if (!(minCos >= Number(opt["min-cos"]))) problems.push(`${file}: min cosine ${minCos} below ${opt["min-cos"]}`);
}
await llama.dispose();
if (problems.length) {
  console.log("FAIL: llama.cpp on the Gemma 4 files:");
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
console.log(`  llama.cpp tokenizes ${strings.length} strings exactly as tokenizer.json does`);
