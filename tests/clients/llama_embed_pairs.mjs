// llama.cpp (node-llama-cpp, CPU) loads several pairs of rebox conversions of one checkpoint each (a
// file and its --outtype f32 twin) in one process and embeds corpus lines with both: every vector must
// be finite and non-zero, and the pair nearly parallel (cosine >= --min-cos, only the kernels'
// arithmetic differs since both hold the same dequantized values).
// Usage: node llama_embed_pairs.mjs --corpus corpus.txt [--lines N] [--min-cos 0.999] LABEL:A.gguf:F32.gguf[:MIN]...
// (MIN: that pair's own bound instead of --min-cos)
// (exit 1 on any failure)
import {readFileSync} from "node:fs";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const {values: opt, positionals: pairs} = parseArgs({allowPositionals: true, options: {
  corpus: {type: "string"}, lines: {type: "string", default: "6"}, "min-cos": {type: "string", default: "0.999"},
}});
const lines = readFileSync(opt.corpus, "utf8").split("\n").filter((l) => l.length > 0)
  .slice(0, Number(opt.lines));
const minCosAllowed = Number(opt["min-cos"]);
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0) / (norm(a) * norm(b));
const problems = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});

async function embed(file) {
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
  const ctx = await model.createEmbeddingContext({contextSize: 256, threads: 1});
  const vectors = [];
  for (const [n, line] of lines.entries()) {
    const vector = (await ctx.getEmbeddingFor(line)).vector;
    if (!vector.length || !vector.every(Number.isFinite) || norm(vector) === 0)
      problems.push(`${file} line ${n + 1}: empty, non-finite or zero vector`);
    vectors.push(vector);
  }
  await ctx.dispose();
  await model.dispose();
  return vectors;
}

for (const pair of pairs) {
  const [label, file, twin, own] = pair.split(":");
  const allowed = own === undefined ? minCosAllowed : Number(own);
  const a = await embed(file), b = await embed(twin);
  const minCos = Math.min(...a.map((v, i) => cosine(v, b[i])));
  console.log(`  ${label}: llama.cpp loads both files; min cosine over ${lines.length} lines ${minCos.toFixed(6)}`);
  if (!(minCos >= allowed)) problems.push(`${label}: min cosine ${minCos} below ${allowed}`);
}
await llama.dispose();
if (problems.length) {
  console.log("FAIL: llama.cpp embeddings:");
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
