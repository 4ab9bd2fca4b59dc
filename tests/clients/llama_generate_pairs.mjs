// llama.cpp (node-llama-cpp, CPU) generates with rebox conversions: for each pair of a file and its
// --outtype f32 twin (one process, threads 1, a small context), the next-token log-probabilities
// over the whole vocabulary after a corpus line (temperature 1, no top-k / top-p / min-p cut) must
// agree (cosine >= --min-cos: both hold the same values, only the kernels' arithmetic differs), and
// each file greedily generates a few in-vocabulary tokens from there.
// Usage: node llama_generate_pairs.mjs --corpus corpus.txt [--min-cos 0.999] LABEL:A.gguf:F32.gguf...
// (exit 1 on any failure)
import {readFileSync} from "node:fs";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const {values: opt, positionals: pairs} = parseArgs({allowPositionals: true, options: {
  corpus: {type: "string"}, "min-cos": {type: "string", default: "0.999"},
}});
const line = readFileSync(opt.corpus, "utf8").split("\n").find((l) => l.length > 0);
const floor = Math.log(1e-30);
const problems = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});

// {token: log-probability} after the prompt, and the greedy continuation.
async function generate(file) {
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
  const ctx = await model.createContext({contextSize: 256, threads: 1});
  const sequence = ctx.getSequence();
  const prompt = model.tokenize(line, true);
  const everything = {temperature: 1, topK: 1 << 20, topP: 1, minP: 0};
  const input = prompt.map((t, i) => i < prompt.length - 1 ? t
    : [t, {generateNext: {probabilities: true, options: everything}}]);
  const out = await sequence.controlledEvaluate(input);
  const probs = out[prompt.length - 1]?.next?.probabilities;
  const logp = new Map();
  if (!probs || probs.size === 0) problems.push(`${file}: no next-token distribution`);
  else for (const [token, p] of probs) logp.set(token, Math.log(Math.max(p, 1e-30)));
  await sequence.clearHistory();
  const generated = [];
  for await (const token of sequence.evaluate(prompt, {temperature: 0})) {
    generated.push(token);
    if (generated.length >= 4) break;
  }
  if (generated.length < 4 || generated.some((t) => !logp.has(t)))
    problems.push(`${file}: generated ${JSON.stringify(generated)}`);
  await ctx.dispose();
  await model.dispose();
  return {logp, generated};
}

for (const pair of pairs) {
  const [label, file, twin] = pair.split(":");
  const a = await generate(file), b = await generate(twin);
  const tokens = new Set([...a.logp.keys(), ...b.logp.keys()]);
  let dot = 0, na = 0, nb = 0;
  for (const t of tokens) {
    const x = a.logp.get(t) ?? floor, y = b.logp.get(t) ?? floor;
    dot += x * y, na += x * x, nb += y * y;
  }
  const cos = dot / Math.sqrt(na * nb);
  console.log(`  ${label}: llama.cpp generates ${JSON.stringify(a.generated)} (f32 twin ` +
              `${JSON.stringify(b.generated)}); next-token log-probabilities over ${tokens.size} ` +
              `tokens, cosine ${cos.toFixed(6)}`);
  if (!(cos >= Number(opt["min-cos"]))) problems.push(`${label}: cosine ${cos} below ${opt["min-cos"]}`);
}
await llama.dispose();
if (problems.length) {
  console.log("FAIL:");
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
