// llama.cpp v0.4.0 (node-llama-cpp, vocab only) on rebox's GGUF of a checkpoint holding the tokenizer of
// llama.cpp's own qwen35 or gemma-4 vocabulary file (rebuilt by real_tokenizer_fixture.py):
//  1. each test string of the vocabulary file's .inp tokenizes to exactly the ids of its .out, the ids
//     a Hugging Face tokenizer gave (llama.cpp's tests/test-tokenizer-0.cpp: no BOS, special-token
//     text not parsed); @lenml/tokenizers (transformers.js' port of Hugging Face tokenizers) on the
//     rebuilt tokenizer.json gives the same ids, which checks the rebuilt files themselves;
//  2. over corpus files (corpus.txt, corpus_marks.txt: combining marks in Devanagari, Thai, Vietnamese,
//     decomposed accents, ... which Qwen3.5's split regex keeps in the letter runs and Qwen2's does not)
//     llama.cpp and @lenml/tokenizers agree on every line, with special-token text parsed
//     (tokenize(line, true) against encode(line)) and as plain text (no CONTROL id may appear); every
//     line as it is: neither tokenizer.json has an NFC normalizer (the qwen35 one, unlike Qwen2's and Qwen3's,
//     has none, as its .out ids show: real_tokenizer_fixture.py), so decomposed accents reach the split regex as they are;
//  3. the special tokens as llama.cpp reads them: BOS / EOS ids and whether a BOS is prepended, each
//     added token CONTROL (text matched only with special parsing) or, for Gemma 4's visible channel /
//     tool tokens, USER_DEFINED, and each detokenizing to its text.
// Usage: node real_tokenizer.mjs qwen35|gemma4 MODEL_DIR FILE.gguf TESTS.json CORPUS... (exit 1 on any mismatch)
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {TokenizerLoader} from "@lenml/tokenizers";

const [kind, dir, file, testsPath, ...corpora] = process.argv.slice(2);
const KINDS = {
  qwen35: {bos: 151643, eos: 151643, prependBos: false, visible: []},
  gemma4: {bos: 2, eos: 1, prependBos: true,
    visible: ["<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>",
      "<|\"|>"]},
};
const spec = KINDS[kind];
if (!spec || !corpora.length) {
  console.error("usage: node real_tokenizer.mjs qwen35|gemma4 MODEL_DIR FILE.gguf TESTS.json CORPUS...");
  process.exit(2);
}
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const tokenizerJson = readJson(`${dir}/tokenizer.json`);
const reference = TokenizerLoader.fromPreTrained({tokenizerJSON: tokenizerJson,
  tokenizerConfig: readJson(`${dir}/tokenizer_config.json`)});
const tests = readJson(testsPath).tests;
const problems = [];
const fail = (msg) => problems.push(msg);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const show = (ids, at) => JSON.stringify(ids.slice(Math.max(0, at - 2), at + 3));
const firstDifference = (a, b) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
};

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: file, vocabOnly: true});

// 3. Special tokens.
if (model.tokens.bos !== spec.bos) fail(`bos ${model.tokens.bos} (expected ${spec.bos})`);
if (model.tokens.eos !== spec.eos) fail(`eos ${model.tokens.eos} (expected ${spec.eos})`);
if (model.tokens.shouldPrependBosToken !== spec.prependBos)
  fail(`shouldPrependBosToken ${model.tokens.shouldPrependBosToken} (expected ${spec.prependBos})`);
const controlIds = new Set(), controlTexts = [];
for (const added of tokenizerJson.added_tokens) {
  const attributes = model.getTokenAttributes(added.id);
  const visible = spec.visible.includes(added.content);
  if (visible ? !attributes.userDefined : !attributes.control)
    fail(`token ${added.id} ${added.content}: control ${attributes.control}, user-defined ${attributes.userDefined} ` +
      `(expected ${visible ? "USER_DEFINED" : "CONTROL"})`);
  if (!visible) {
    controlIds.add(added.id);
    controlTexts.push(added.content);
  }
  if (model.detokenize([added.id], true) !== added.content)
    fail(`detokenize([${added.id}]) = ${JSON.stringify(model.detokenize([added.id], true))}`);
}

// 1. The vocabulary file's own test strings and Hugging Face's ids.
let llamaExact = 0, referenceExact = 0;
tests.forEach(({text, ids}, n) => {
  const got = model.tokenize(text, false);
  const at = firstDifference(got, ids);
  if (at < 0) llamaExact++;
  else fail(`test ${n + 1} ${JSON.stringify(text.slice(0, 40))}: llama.cpp ${show(got, at)} vs .out ${show(ids, at)} at token ${at}`);
  const ref = reference.encode(text, {add_special_tokens: false});
  const atRef = firstDifference(ref, ids);
  if (atRef < 0) referenceExact++;
  else fail(`test ${n + 1} ${JSON.stringify(text.slice(0, 40))}: rebuilt tokenizer.json ${show(ref, atRef)} vs .out ${show(ids, atRef)} at token ${atRef}`);
});

// 2. Corpus lines, with and without special-token parsing, plus lines carrying special-token text.
const lines = [];
for (const path of corpora) {
  const text = readFileSync(path, "utf8").split("\n");
  if (text.at(-1) === "") text.pop();
  lines.push(...text);
}
const corpusLines = lines.length;
for (const s of controlTexts.slice(0, 4)) lines.push(`Hello ${s} world${s}again, ${s}`);
for (const s of spec.visible.slice(0, 3)) lines.push(`call ${s}x${s} done`);
let exact = 0, exactPlain = 0, plainChecked = 0, tokens = 0, markLines = 0;
lines.forEach((line, n) => {
  const want = reference.encode(line, {add_special_tokens: false});
  tokens += want.length;
  if (/\p{M}/u.test(line)) markLines++;
  const got = model.tokenize(line, true);
  const at = firstDifference(got, want);
  if (at < 0) exact++;
  else fail(`line ${n + 1} (special on): llama.cpp ${show(got, at)} vs tokenizer.json ${show(want, at)} at token ${at} | ${line.slice(0, 50)}`);
  const plain = model.tokenize(line, false);
  if (controlTexts.some((s) => line.includes(s))) {
    const leaked = plain.filter((t) => controlIds.has(t));
    if (leaked.length) fail(`line ${n + 1} (special off): control ids ${JSON.stringify(leaked)} from plain text`);
    return;
  }
  plainChecked++;
  const atPlain = firstDifference(plain, want);
  if (atPlain < 0) exactPlain++;
  else fail(`line ${n + 1} (special off): llama.cpp ${show(plain, atPlain)} vs tokenizer.json ${show(want, atPlain)} at token ${atPlain} | ${line.slice(0, 50)}`);
});

await model.dispose();
await llama.dispose();
console.log(`  ${kind}: ${tests.length} test strings of the vocabulary file: llama.cpp ${llamaExact}/${tests.length}, ` +
  `@lenml/tokenizers on the rebuilt tokenizer.json ${referenceExact}/${tests.length} equal to Hugging Face's .out ids`);
console.log(`  ${kind}: ${corpusLines} corpus lines (${markLines} with combining marks) ` +
  `+ ${lines.length - corpusLines} special-token lines, ${tokens} tokens: special on ${exact}/${lines.length}, ` +
  `special off ${exactPlain}/${plainChecked} identical; ${controlIds.size} CONTROL, ${spec.visible.length} USER_DEFINED added tokens`);
if (problems.length) {
  console.log(`FAIL: ${kind}: ${file} (${problems.length} problems):`);
  for (const p of problems.slice(0, 30)) console.log("  " + p);
  process.exit(1);
}
console.log(`ok: ${kind}: llama.cpp on rebox's file tokenizes as Hugging Face's tokenizer`);
