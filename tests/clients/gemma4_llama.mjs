// llama.cpp v0.4.0 (node-llama-cpp, CPU) on rebox's Gemma 4 files, in one process:
//  - the vocabulary: each test string tokenizes to exactly the ids the checkpoint's own tokenizer.json
//    gives through @lenml/tokenizers (transformers.js' Hugging Face tokenizers, the reference), with
//    special-token text parsed; a BOS is prepended (add_bos), <|channel> / <|"|> are USER_DEFINED
//    (llama.cpp renders them, so isSpecialToken is false) while <|turn> is CONTROL;
//  - the model: each file and its --outtype f32 twin load and their embeddings of a few lines agree
//    (cos >= --min-cos; only the kernels' arithmetic differs, both hold the same values);
//  - with --logits, each file also generates: its next-token log-probabilities over the whole
//    vocabulary after a prompt agree with the twin's (cos >= --min-cos; the final logit
//    softcapping and the output matrix included), and it greedily generates a few tokens.
// Usage: node gemma4_llama.mjs MODEL_DIR [--min-cos 0.999] [--logits] A.gguf:F32.gguf...
//        (exit 1 on any failure)
import {readFileSync} from "node:fs";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {TokenizerLoader} from "@lenml/tokenizers";

const {values: opt, positionals} = parseArgs({allowPositionals: true, options: {
  "min-cos": {type: "string", default: "0.999"},
  logits: {type: "boolean", default: false},
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
  if (opt.logits) vectors.push(await nextTokenLogProbs(file, model));
  await model.dispose();
  return vectors;
}

// The next-token log-probabilities over the whole vocabulary after a prompt (temperature 1, no
// top-k / top-p / min-p cut), then a few greedy tokens generated from there.
async function nextTokenLogProbs(file, model) {
  const ctx = await model.createContext({contextSize: 256, threads: 1});
  const sequence = ctx.getSequence();
  const prompt = model.tokenize(strings[2], true);
  const size = Object.keys(vocab).length;
  const input = prompt.map((t, i) => i < prompt.length - 1 ? t : [t, {generateNext: {
    probabilities: true, options: {temperature: 1, topK: size, topP: 1, minP: 0}}}]);
  const out = await sequence.controlledEvaluate(input);
  const probs = out[prompt.length - 1]?.next?.probabilities;
  const logp = new Array(size).fill(Math.log(1e-30));
  if (!probs || probs.size < size - 1) problems.push(`${file}: no full next-token distribution`);
  else for (const [token, p] of probs) if (token < size) logp[token] = Math.log(Math.max(p, 1e-30));
  const generated = [];
  await sequence.clearHistory();
  for await (const token of sequence.evaluate(prompt, {temperature: 0})) {
    generated.push(token);
    if (generated.length >= 4) break;
  }
  if (generated.length === 0 || generated.some((t) => !(t >= 0 && t < size)))
    problems.push(`${file}: generated ${JSON.stringify(generated)}`);
  console.log(`  ${file.split("/").pop()}: generates ${JSON.stringify(generated)}`);
  await ctx.dispose();
  return logp;
}

for (const pair of pairs) {
  const [file, twin] = pair.split(":");
  const a = await run(file, !checkedVocab), b = await run(twin, false);
  const minCos = Math.min(...a.map((v, i) => cosine(v, b[i])));
  console.log(`  ${file.split("/").pop()}: llama.cpp loads it and its f32 twin; min cosine ${minCos.toFixed(6)}` +
              (opt.logits ? ` (next-token log-probabilities ${cosine(a.at(-1), b.at(-1)).toFixed(6)})` : ""));
  if (!(minCos >= Number(opt["min-cos"]))) problems.push(`${file}: min cosine ${minCos} below ${opt["min-cos"]}`);
}
await llama.dispose();
if (problems.length) {
  console.log("FAIL: llama.cpp on the Gemma 4 files:");
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
console.log(`  llama.cpp tokenizes ${strings.length} strings exactly as tokenizer.json does`);
