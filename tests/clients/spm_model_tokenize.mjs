// llama.cpp (node-llama-cpp, vocab only) tokenizes with the vocabulary rebox read from a SentencePiece
// tokenizer.model (no tokenizer.json); every line must give exactly the ids Google's SentencePiece
// gave (REFERENCE.json from spm_model_reference.py), with special-token parsing off (SentencePiece
// never parses control-token text). Also checks the SPM vocabulary type, BOS/EOS/UNK ids, BOS added,
// and that detokenization gives back every line SentencePiece decodes back.
// Usage: node spm_model_tokenize.mjs FILE.gguf REFERENCE.json   (exit 1 on any mismatch)
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [file, referencePath] = process.argv.slice(2);
const reference = JSON.parse(readFileSync(referencePath, "utf8"));
const problems = [];
const fail = (msg) => problems.push(msg);
const expectEq = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(`${what}: ${JSON.stringify(got)} (expected ${JSON.stringify(want)})`);
};

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: file, vocabOnly: true});
expectEq("vocabularyType", model.vocabularyType, "spm");
expectEq("tokens.bos", model.tokens.bos, reference.bos);
expectEq("tokens.eos", model.tokens.eos, reference.eos);
expectEq("tokens.shouldPrependBosToken", model.tokens.shouldPrependBosToken, true);
expectEq("<unk> is UNKNOWN", model.getTokenAttributes(reference.unk).unknown, true);

let exact = 0, roundTrips = 0, roundTripChecked = 0;
reference.lines.forEach(({line, ids, round_trip}, n) => {
  const got = model.tokenize(line, false);
  if (JSON.stringify(got) === JSON.stringify(ids)) exact++;
  else fail(`line ${n + 1}: llama.cpp ${JSON.stringify(got.slice(0, 12))} vs SentencePiece ${JSON.stringify(ids.slice(0, 12))}  | ${line.slice(0, 60)}`);
  if (round_trip) {
    roundTripChecked++;
    const text = model.detokenize(ids, false);
    if (text === line) roundTrips++;
    else fail(`line ${n + 1}: detokenize gives ${JSON.stringify(text.slice(0, 60))}  | ${line.slice(0, 60)}`);
  }
});
await model.dispose();
await llama.dispose();
console.log(`  tokenizer.model (${reference.pieces} pieces): tokenize(line, specialTokens=false): ${exact}/${reference.lines.length} lines identical to SentencePiece`);
console.log(`  detokenize: ${roundTrips}/${roundTripChecked} lines SentencePiece decodes back give the line back`);
if (problems.length) {
  console.log(`FAIL: llama.cpp tokenization of ${file} (${problems.length} problems):`);
  for (const p of problems.slice(0, 40)) console.log("  " + p);
  process.exit(1);
}
console.log("ok: llama.cpp tokenizes with the vocabulary read from tokenizer.model exactly like SentencePiece");
