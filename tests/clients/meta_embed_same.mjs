// llama.cpp (node-llama-cpp, CPU) loads a GGUF and its `rebox meta`-edited copy and embeds the
// first lines of the corpus with each: the vectors must be identical (same weights, same graph;
// only metadata changed), and the edited file must report the new general.name.
// Usage: node meta_embed_same.mjs ORIG.gguf EDITED.gguf corpus.txt LINES EXPECTED_NAME
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel, readGgufFileInfo} from "node-llama-cpp";

const [orig, edited, corpus, count, expectedName] = process.argv.slice(2);
const lines = readFileSync(corpus, "utf8").split("\n").filter((l) => l.length > 0).slice(0, Number(count));
const problems = [];

const info = await readGgufFileInfo(edited, {sourceType: "filesystem"});
if (info.metadata?.general?.name !== expectedName)
  problems.push(`${edited}: general.name is ${JSON.stringify(info.metadata?.general?.name)}, expected ${JSON.stringify(expectedName)}`);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
async function embedAll(file) {
  const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
  const ctx = await model.createEmbeddingContext({contextSize: 512, threads: 1});
  const vectors = [];
  for (const line of lines) vectors.push(Array.from((await ctx.getEmbeddingFor(line)).vector));
  await ctx.dispose();
  await model.dispose();
  return vectors;
}
const a = await embedAll(orig);
const b = await embedAll(edited);
let differing = 0;
a.forEach((v, i) => {
  if (!v.length || !v.every(Number.isFinite)) problems.push(`line ${i + 1}: empty or non-finite vector`);
  if (v.length !== b[i].length || v.some((x, k) => x !== b[i][k])) differing++;
});
if (differing) problems.push(`${differing} of ${lines.length} lines embed differently after the metadata edit`);
await llama.dispose();
if (problems.length) {
  console.log("FAIL: " + problems.join("; "));
  process.exit(1);
}
console.log(`ok: ${lines.length} lines embed identically (dim ${a[0].length}) in the original and the edited file`);
