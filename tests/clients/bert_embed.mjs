// llama.cpp (node-llama-cpp, CPU) on rebox's encoder files (WordPiece, XLM-R's Unigram or ModernBERT's
// byte-level BPE vocabulary; also gemma-embedding's Gemma 3 vocabulary), for bert_forward.py and the other
// forward passes, plus the tokenization check:
//   --embed MODEL_DIR:FILE.gguf[:N]: tokenizes the corpus lines (the first N of them when given) with MODEL_DIR's tokenizer.json +
//     tokenizer_config.json through @lenml/tokenizers (transformers.js, the reference: [CLS] ... [SEP]) into
//     MODEL_DIR.ids.json; llama.cpp's own tokenization of each line (tokenize(line, false) between the file's
//     BOS and EOS, as add_bos_token / add_eos_token say) must equal it, except lines with Hangul, where
//     llama.cpp's WordPiece is known to differ (it drops the vowel and final jamo after decomposing a
//     syllable), or with spacing combining marks (its accent stripping drops them): those lines are
//     listed, and must differ, so the note stays true (a Unigram vocabulary has no known divergence on the
//     corpus: every line must agree; nor a byte-level BPE one); then embeds every
//     reference id list and writes FILE.json {"label", "vectors"}.
//   --rank MODEL_DIR:FILE.gguf: pairs of lines (query, document) tokenized by the reference without special
//     tokens, scored by node-llama-cpp's ranking context; writes FILE.rank.json {"inputs", "scores"} with the
//     token list llama.cpp evaluates ([CLS] q [SEP] [SEP] d [SEP], node-llama-cpp's own layout).
// Usage: node bert_embed.mjs --corpus corpus.txt [--lines 24] [--embed JOB] [--rank JOB]  (exit 1 on failure)
import {createHash} from "node:crypto";
import {readFileSync, writeFileSync} from "node:fs";
import {basename, join} from "node:path";
import {parseArgs} from "node:util";
import {TokenizerLoader} from "@lenml/tokenizers";
import {getLlama, LlamaLogLevel, readGgufFileInfo} from "node-llama-cpp";

const {values: opt} = parseArgs({options: {
  corpus: {type: "string"}, lines: {type: "string", default: "24"},
  embed: {type: "string", multiple: true, default: []}, rank: {type: "string", multiple: true, default: []},
}});
const lines = readFileSync(opt.corpus, "utf8").split("\n").filter((l) => l.length > 0).slice(0, Number(opt.lines));
const problems = [];
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
// llama.cpp's known WordPiece divergences: Hangul, and spacing combining marks (Mc, e.g. Devanagari vowel
// signs), which its accent stripping removes where HF's removes only nonspacing marks (Mn).
const knownWordPiece = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]|\p{Mc}/u;
// llama.cpp's Unigram ("t5", XLM-R): none known on this corpus.
const knownUnigram = null;
// llama.cpp's byte-level BPE ("gpt2", ModernBERT): none known on this corpus.
const knownBpe = null;

// One reference tokenizer per distinct tokenizer.json + tokenizer_config.json (several jobs often share the same
// files, e.g. a file and its --outtype f32 twin; building the Gemma 3 one takes seconds).
const references = new Map();
function reference(modelDir) {
  const json = readFileSync(join(modelDir, "tokenizer.json"), "utf8");
  const config = readFileSync(join(modelDir, "tokenizer_config.json"), "utf8");
  const key = createHash("sha256").update(json).update("\0").update(config).digest("hex");
  if (!references.has(key))
    references.set(key, TokenizerLoader.fromPreTrained({tokenizerJSON: JSON.parse(json), tokenizerConfig: JSON.parse(config)}));
  return references.get(key);
}

async function load(file) {
  return llama.loadModel({modelPath: file, gpuLayers: 0, defaultContextFlashAttention: false,
    experimentalDefaultContextKvCacheKeyType: "F32", experimentalDefaultContextKvCacheValueType: "F32"});
}

async function embedJob(job) {
  const [modelDir, file, count] = job.split(":");
  const jobLines = count ? lines.slice(0, Number(count)) : lines;
  const tokenizer = reference(modelDir);
  const idLists = jobLines.map((line) => Array.from(tokenizer.encode(line)));
  writeFileSync(`${modelDir}.ids.json`, JSON.stringify(idLists));
  const model = await load(file);
  const ggml = (await readGgufFileInfo(file, {sourceType: "filesystem"})).metadata?.tokenizer?.ggml ?? {};
  const divergent = [];
  const unigram = ggml.model === "t5", bpe = ggml.model === "gpt2";
  // Other vocabularies (gemma-embedding's SentencePiece-style "llama"): none known on this corpus.
  const knownDivergence = unigram ? knownUnigram : bpe ? knownBpe : ggml.model === "bert" ? knownWordPiece : null;
  const kind = unigram ? "Unigram" : bpe ? "byte-level BPE" : ggml.model === "bert" ? "WordPiece" : `"${ggml.model}"`;
  jobLines.forEach((line, i) => {
    const own = [...(ggml.add_bos_token ? [ggml.bos_token_id] : []), ...model.tokenize(line, false),
      ...(ggml.add_eos_token ? [ggml.eos_token_id] : [])];
    const same = own.join(",") === idLists[i].join(",");
    if (knownDivergence?.test(line)) {
      divergent.push(i + 1);
      if (same) problems.push(`${file} line ${i + 1}: llama.cpp now tokenizes it as HF does: update the note`);
    } else if (!same) {
      problems.push(`${file} line ${i + 1}: llama.cpp tokenizes to ${own.slice(0, 12)}..., the HF tokenizer to ${idLists[i].slice(0, 12)}...`);
    }
  });
  console.log(`  ${basename(file)}: llama.cpp's ${kind} vocabulary equals the HF tokenizer on ` +
    `${jobLines.length - divergent.length} lines` + (divergent.length ?
      `; lines ${divergent.join(", ")} (Hangul / Mc marks) differ as llama.cpp is known to` : ""));
  // A context that holds the longest list (llama.cpp would refuse or cut a longer one).
  const longest = Math.max(...idLists.map((ids) => ids.length));
  const ctx = await model.createEmbeddingContext({contextSize: Math.max(128, longest), threads: 1});
  const vectors = [];
  for (const [i, ids] of idLists.entries()) {
    if (ctx.calculateInputLength(ids) !== ids.length)
      problems.push(`${file} list ${i + 1}: node-llama-cpp adds tokens to the ${ids.length} HF ids`);
    vectors.push(Array.from((await ctx.getEmbeddingFor(ids)).vector));
  }
  await ctx.dispose();
  await model.dispose();
  writeFileSync(file.replace(/\.gguf$/, ".json"), JSON.stringify({label: basename(file), vectors}));
}

async function rankJob(job) {
  const [modelDir, file] = job.split(":");
  const tokenizer = reference(modelDir);
  const model = await load(file);
  const ctx = await model.createRankingContext({contextSize: 128, threads: 1});
  const {bos, eos, sep} = model.tokens;
  const inputs = [], scores = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const query = Array.from(tokenizer.encode(lines[i], {add_special_tokens: false})).slice(0, 40);
    const document = Array.from(tokenizer.encode(lines[i + 1], {add_special_tokens: false})).slice(0, 40);
    inputs.push([bos, ...query, eos, sep, ...document, eos]);
    scores.push(await ctx.rank(query, document));
  }
  await ctx.dispose();
  await model.dispose();
  writeFileSync(file.replace(/\.gguf$/, ".rank.json"), JSON.stringify({label: basename(file), inputs, scores}));
  console.log(`  ${basename(file)}: ${scores.length} query/document pairs ranked by node-llama-cpp`);
}

for (const job of opt.embed) await embedJob(job);
for (const job of opt.rank) await rankJob(job);
await llama.dispose();
if (problems.length) {
  console.log("FAIL: bert_embed:");
  for (const p of problems.slice(0, 20)) console.log("  " + p);
  process.exit(1);
}
