// llama.cpp (node-llama-cpp, CPU) loads a split model from its first shard and must embed every line
// bit-identically to the unsplit file (same weights, same backend); @huggingface/gguf opens every shard
// and sees the split keys llama.cpp expects.
// Usage: node llama_split.mjs --whole WHOLE.gguf --first FIRST-00001-of-0000N.gguf --shards N
//          --corpus corpus.txt [--lines N]                          (exit 1 on any failure)
import {readFileSync} from "node:fs";
import path from "node:path";
import {parseArgs} from "node:util";
import {gguf} from "@huggingface/gguf";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const {values: opt} = parseArgs({options: {
  whole: {type: "string"}, first: {type: "string"}, shards: {type: "string"},
  corpus: {type: "string"}, lines: {type: "string", default: "20"},
}});
const problems = [];
const count = Number(opt.shards);
const lines = readFileSync(opt.corpus, "utf8").split("\n").filter((l) => l.length > 0).slice(0, Number(opt.lines));

// Every shard opens in @huggingface/gguf with split.no / split.count / split.tensors.count typed as
// llama.cpp reads them (UINT16, UINT16, INT32).
let tensors = 0;
const prefix = opt.first.replace(/-00001-of-\d{5}\.gguf$/, "");
for (let i = 0; i < count; i++) {
  const file = `${prefix}-${String(i + 1).padStart(5, "0")}-of-${String(count).padStart(5, "0")}.gguf`;
  const {metadata, typedMetadata, tensorInfos} = await gguf(path.resolve(file), {allowLocalFile: true, typedMetadata: true});
  tensors += tensorInfos.length;
  const expect = [["split.no", 2, i], ["split.count", 2, count], ["split.tensors.count", 5, null]];
  for (const [key, type, value] of expect) {
    const got = typedMetadata[key];
    if (!got || got.type !== type || (value !== null && got.value !== value))
      problems.push(`${file}: ${key} = ${JSON.stringify(got)} (expected type ${type}${value !== null ? `, value ${value}` : ""})`);
  }
  if ((i === 0) !== ("general.architecture" in metadata))
    problems.push(`${file}: general.architecture ${i === 0 ? "missing from" : "present in"} shard ${i + 1}`);
  if (i === count - 1 && Number(typedMetadata["split.tensors.count"].value) !== tensors)
    problems.push(`split.tensors.count ${typedMetadata["split.tensors.count"].value} but the shards hold ${tensors}`);
}

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
async function embed(file) {
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
  const ctx = await model.createEmbeddingContext({contextSize: 512, threads: 1});
  const vectors = [];
  for (const line of lines) vectors.push((await ctx.getEmbeddingFor(line)).vector);
  await ctx.dispose();
  await model.dispose();
  return vectors;
}
const whole = await embed(opt.whole);
const split = await embed(opt.first);
for (let n = 0; n < lines.length; n++) {
  const a = whole[n], b = split[n];
  if (a.length === 0 || a.length !== b.length || a.some((x, i) => !Object.is(x, b[i])))
    problems.push(`line ${n + 1}: the split model embeds differently from the unsplit file`);
}
await llama.dispose();
console.log(`  ${count} shards, ${tensors} tensors; ${lines.length} lines embedded identically: ${problems.length ? "no" : "yes"}`);
if (problems.length) {
  console.log(`FAIL: ${problems.length} problem(s):\n  ` + problems.slice(0, 30).join("\n  "));
  process.exit(1);
}
