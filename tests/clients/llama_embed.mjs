// llama.cpp (node-llama-cpp, CPU) computes embeddings from two rebox conversions of one checkpoint:
// the default Q4_1 file and the --outtype f32 file. Both hold the same dequantized values, so for
// every corpus line the vectors must be finite, non-zero and nearly parallel (cosine >= --min-cos;
// only the kernels' arithmetic differs). Also checks that LAST pooling is in effect: the files say
// {general.architecture}.pooling_type = 3 (qwen3, qwen2, llama, ...), a text embeds like its tokens with the file's
// tokenizer.ggml.eos_token_id appended, and (--pooling-checks)
// the vector equals the last token's hidden state (pooling overridden to NONE) and differs from MEAN.
// Usage: node llama_embed.mjs --label NAME --q4 Q4_1.gguf --f32 F32.gguf --corpus corpus.txt
//          [--lines N] [--min-cos 0.999] [--pooling-checks] [--kind BF16] [--and JOB...]
//        (exit 1 on any failure)
// (--q4 is the non-F32 conversion: Q4_1 by default, or e.g. the BF16 file of a float checkpoint.)
// `--and` starts another job (pair of files) with options of its own; all jobs share one llama.cpp
// instance, so a test script starts node once (lib/common.sh: embed_job / embed_jobs_run).
import {readFileSync} from "node:fs";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel, readGgufFileInfo} from "node-llama-cpp";

const jobOptions = {
  label: {type: "string", default: "model"}, q4: {type: "string"}, f32: {type: "string"},
  corpus: {type: "string"}, lines: {type: "string"}, "min-cos": {type: "string", default: "0.999"},
  "pooling-checks": {type: "boolean", default: false},
  kind: {type: "string", default: "Q4_1"}, // what the --q4 file holds, for the messages (e.g. BF16)
};
const POOLING = {NONE: 0, MEAN: 1, LAST: 3};
const TOKEN_CHECK_LINES = 16; // the text-vs-tokens+[EOS] check doubles the work; a prefix of the corpus
const problems = [];
const started = Date.now();
const seconds = (t0) => ((Date.now() - t0) / 1000).toFixed(1);
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0) / (norm(a) * norm(b));
const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

const jobArgs = [[]];
for (const arg of process.argv.slice(2)) {
  if (arg === "--and") jobArgs.push([]);
  else jobArgs.at(-1).push(arg);
}
const jobs = jobArgs.map((args) => parseArgs({args, options: jobOptions}).values);
for (const opt of jobs) {
  if (!opt.q4 || !opt.f32 || !opt.corpus) {
    console.log(`FAIL: ${opt.label}: --q4, --f32 and --corpus are required`);
    process.exit(1);
  }
}
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});

async function runJob(opt) {
  const minCosAllowed = Number(opt["min-cos"]);
  let lines = readFileSync(opt.corpus, "utf8").split("\n").filter((l) => l.length > 0);
  if (opt.lines) lines = lines.slice(0, Number(opt.lines));
  const fail = (msg) => problems.push(`${opt.label}: ${msg}`);
  const jobStarted = Date.now();
  const before = problems.length;

  let arch = "qwen3"; // the KV prefix: general.architecture of the files
  let EOS; // tokenizer.ggml.eos_token_id, the same in both files
  for (const file of [opt.q4, opt.f32]) {
    const info = await readGgufFileInfo(file, {sourceType: "filesystem"});
    arch = info.metadata?.general?.architecture;
    const eos = info.metadata?.tokenizer?.ggml?.eos_token_id;
    if (EOS !== undefined && eos !== EOS) fail(`${file}: eos_token_id ${eos} differs from the other file's ${EOS}`);
    EOS = eos;
    const pooling = info.metadata?.[arch]?.pooling_type;
    if (pooling !== POOLING.LAST) fail(`${file}: ${arch}.pooling_type ${pooling} (expected 3 = LAST)`);
  }

  async function embedAll(file, {tokenCheck = false, metadataOverrides, subset = lines} = {}) {
    const model = await llama.loadModel({modelPath: file, gpuLayers: 0, metadataOverrides});
    const ctx = await model.createEmbeddingContext({contextSize: 512, threads: 1});
    const vectors = [];
    for (const [n, line] of subset.entries()) {
      const vector = (await ctx.getEmbeddingFor(line)).vector;
      vectors.push(vector);
      if (!vector.length || !vector.every(Number.isFinite)) fail(`${file} line ${n + 1}: non-finite or empty vector`);
      else if (norm(vector) === 0) fail(`${file} line ${n + 1}: zero vector`);
      if (tokenCheck && n < TOKEN_CHECK_LINES) {
        const withEos = [...model.tokenize(line, false), EOS];
        const fromTokens = (await ctx.getEmbeddingFor(withEos)).vector;
        const d = maxAbsDiff(fromTokens, vector);
        if (d !== 0) fail(`${file} line ${n + 1}: text and tokens+[EOS] embed differently (max |diff| ${d}); is EOS appended?`);
      }
    }
    const size = model.embeddingVectorSize;
    await ctx.dispose();
    await model.dispose();
    return {vectors, size};
  }

  let t0 = Date.now();
  const q4 = await embedAll(opt.q4, {tokenCheck: true});
  console.log(`  ${opt.label}: ${opt.kind} file: ${lines.length} lines embedded (+ text vs tokens+[EOS] on ${Math.min(lines.length, TOKEN_CHECK_LINES)}), dim ${q4.size}, ${seconds(t0)} s`);
  t0 = Date.now();
  const f32 = await embedAll(opt.f32);
  console.log(`  ${opt.label}: F32 file: ${lines.length} lines embedded, ${seconds(t0)} s`);

  const cosines = q4.vectors.map((v, i) => cosine(v, f32.vectors[i]));
  const worst = cosines.reduce((w, c, i) => (c < cosines[w] || Number.isNaN(c) ? i : w), 0);
  const minCos = cosines[worst];
  const sorted = [...cosines].sort((a, b) => a - b);
  console.log(`  ${opt.label}: cosine quantiles min/10%/median: ${[0, 0.1, 0.5].map((q) => sorted[Math.floor(q * (sorted.length - 1))].toFixed(6)).join(" / ")}`);
  console.log(`  ${opt.label}: min cosine(${opt.kind}, F32) over ${lines.length} lines = ${minCos.toFixed(6)} (line ${worst + 1}; need >= ${minCosAllowed})`);
  if (!(minCos >= minCosAllowed)) fail(`min cosine ${minCos} at line ${worst + 1} is below ${minCosAllowed}`);

  if (opt["pooling-checks"]) {
    // LAST pooling = the (normed) hidden state of the final token, which is what the addon returns
    // when pooling is NONE; MEAN must give something else.
    const few = lines.slice(0, 4);
    const asNone = await embedAll(opt.q4, {subset: few, metadataOverrides: {[arch]: {pooling_type: POOLING.NONE}}});
    const asMean = await embedAll(opt.q4, {subset: few, metadataOverrides: {[arch]: {pooling_type: POOLING.MEAN}}});
    few.forEach((_, i) => {
      const dNone = maxAbsDiff(asNone.vectors[i], q4.vectors[i]);
      const dMean = maxAbsDiff(asMean.vectors[i], q4.vectors[i]);
      if (dNone > 1e-6 * norm(q4.vectors[i])) fail(`line ${i + 1}: file pooling differs from last-token state by ${dNone}`);
      if (!(dMean > 1e-3 * norm(q4.vectors[i]))) fail(`line ${i + 1}: file pooling equals MEAN pooling (diff ${dMean}); LAST not in effect`);
    });
    console.log(`  ${opt.label}: pooling: ${few.length} lines equal the last-token state and differ from MEAN pooling`);
  }

  if (problems.length === before) {
    console.log(`ok: ${opt.label}: llama.cpp embeddings of the ${opt.kind} and F32 conversions agree (${seconds(jobStarted)} s)`);
  }
}

for (const opt of jobs) await runJob(opt);
await llama.dispose();
if (problems.length) {
  console.log("FAIL: llama.cpp embeddings:");
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
if (jobs.length > 1) console.log(`ok: ${jobs.length} jobs in one llama.cpp process (${seconds(started)} s)`);
