// Kimi-K2's tiktoken vocabulary for the deepseek2 fixture, and llama.cpp's tokenization of rebox's
// GGUF against real tiktoken (npm tiktoken: the Rust core, as WASM, that Kimi's tokenization_kimi.py
// runs through Python's tiktoken).
//   node kimi_tiktoken.mjs fixture DIR N   writes DIR/tiktoken.model (the first N ranks of
//     cl100k_base as npm tiktoken ships them: Kimi-K2's own tiktoken.model is not published in a
//     package; any prefix of a BPE rank table is one, as each merged token's parts rank below it),
//     DIR/tokenization_kimi.py (Kimi's pat_str and num_reserved_special_tokens, as the real file
//     spells them) and DIR/tokenizer_config.json (added_tokens_decoder in Kimi-K2's layout: [BOS],
//     [EOS], <|im_end|> ... after the ranks), sets config.json's vocab_size (N + 256) and bos / eos
//     ids as Kimi-K2's, and removes DIR/tokenizer.json.
//   node kimi_tiktoken.mjs tokenize DIR FILE.gguf corpus.txt   every corpus line must give llama.cpp
//     (node-llama-cpp, vocab only) exactly tiktoken's ids for the same ranks, specials and pat_str.
import {readFileSync, writeFileSync, rmSync} from "node:fs";
import {join} from "node:path";
import {createRequire} from "node:module";

const require = createRequire(import.meta.url);
const PAT = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
];
const RESERVED = 256;
// Kimi-K2's named special ids, as offsets after its 163,584 ranks (tokenizer_config.json's
// added_tokens_decoder; the rest are <|reserved_token_ID|>).
const NAMED = {0: "[BOS]", 1: "[EOS]", 2: "<|im_end|>", 3: "<|im_user|>", 4: "<|im_assistant|>",
  6: "<|start_header_id|>", 7: "<|end_header_id|>", 9: "[EOT]", 10: "<|im_system|>", 17: "<|im_middle|>",
  254: "[UNK]", 255: "[PAD]"};

const [mode, dir] = process.argv.slice(2);
if (mode === "fixture") {
  const n = Number(process.argv[4]);
  const cl100k = JSON.parse(readFileSync(require.resolve("tiktoken/encoders/cl100k_base.json"), "utf8"));
  // npm tiktoken's compressed form: "KEY OFFSET TOKEN TOKEN ..." lines, consecutive ranks from OFFSET.
  const ranks = [];
  for (const line of cl100k.bpe_ranks.split("\n").filter(Boolean)) {
    const [, offset, ...tokens] = line.split(" ");
    tokens.forEach((t, i) => ranks.push([t, Number(offset) + i]));
  }
  ranks.sort((a, b) => a[1] - b[1]);
  const kept = ranks.filter(([, r]) => r < n);
  if (kept.length !== n) throw new Error(`cl100k_base has no ranks 0..${n - 1}`);
  writeFileSync(join(dir, "tiktoken.model"), kept.map(([t, r]) => `${t} ${r}\n`).join(""));
  const py = ["class TikTokenTokenizer(PreTrainedTokenizer):", "", `    num_reserved_special_tokens = ${RESERVED}`, "",
    '    pat_str = "|".join(', "        [", ...PAT.map((p) => `            r"""${p}""",`), "        ]", "    )", ""];
  writeFileSync(join(dir, "tokenization_kimi.py"), py.join("\n"));
  const decoder = {};
  for (const [k, content] of Object.entries(NAMED)) decoder[String(n + Number(k))] = {content, special: true};
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({
    added_tokens_decoder: decoder, bos_token: "[BOS]", eos_token: "[EOS]", pad_token: "[PAD]", unk_token: "[UNK]",
    chat_template: "{% for m in messages %}<|im_{{ m.role }}|>{{ m.content }}<|im_end|>{% endfor %}",
    auto_map: {AutoTokenizer: ["tokenization_kimi.TikTokenTokenizer", null]}, tokenizer_class: "TikTokenTokenizer"}, null, 1));
  rmSync(join(dir, "tokenizer.json"), {force: true});
  // config.json's bos / eos ids as Kimi-K2's: [BOS] and [EOS], the first two after the ranks.
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  // vocab_size as Kimi-K2's: the ranks and 256 reserved ids (the last two of the 258 specials fall
  // past it); the caller widens the embedding rows to it.
  Object.assign(config, {bos_token_id: n, eos_token_id: n + 1, vocab_size: n + RESERVED});
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 1));
} else if (mode === "tokenize") {
  const [file, corpusPath] = process.argv.slice(4);
  const {Tiktoken} = await import("tiktoken/lite");
  const {getLlama, LlamaLogLevel} = await import("node-llama-cpp");
  const text = readFileSync(join(dir, "tiktoken.model"), "utf8");
  const n = text.split("\n").filter(Boolean).length;
  const config = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
  const specials = {};
  for (let i = n; i < n + RESERVED + 2; ++i) specials[config.added_tokens_decoder[String(i)]?.content ?? `<|reserved_token_${i}|>`] = i;
  const enc = new Tiktoken(text, specials, PAT.join("|"));
  const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
  const model = await llama.loadModel({modelPath: file, vocabOnly: true});
  const lines = readFileSync(corpusPath, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  let same = 0, tokens = 0;
  const problems = [];
  // Kimi's encode(allow_special_tokens=True) is tiktoken's allowed_special="all" (special text is the
  // special id), llama.cpp's special parsing on; with it off, both take special text as plain text.
  // One known difference of llama.cpp v0.4.0 itself, not of the file: its kimi-k2 pre-tokenizer
  // (src/unicode.cpp, unicode_regex_split_custom_kimi_k2) takes a whole letter run where pat_str's
  // [upper]*[lower]+ alternative ends it at a lowercase -> uppercase step ("0xFF": tiktoken "x" "FF",
  // llama.cpp "xFF"); the converter's own file shares it. Lines with such a step are counted, not
  // failed; every other line must match.
  const caseStep = /\p{Ll}[\p{Lu}\p{Lt}]/u;
  let stepLines = 0;
  for (const [i, line] of lines.entries()) {
    for (const special of [true, false]) {
      const want = Array.from(special ? enc.encode(line, "all") : enc.encode(line, [], []));
      const got = Array.from(model.tokenize(line, special));
      tokens += want.length;
      if (JSON.stringify(want) === JSON.stringify(got)) ++same;
      else if (caseStep.test(line)) ++stepLines;
      else if (problems.length < 5) problems.push(`line ${i + 1} (special ${special}): llama.cpp ${JSON.stringify(got)} vs tiktoken ${JSON.stringify(want)}`);
    }
  }
  enc.free();
  await model.dispose();
  await llama.dispose();
  console.log(`  kimi-k2: ${same}/${2 * lines.length} corpus lines (special parsing on and off) tokenized by llama.cpp as tiktoken does (${tokens} tokens, ${n} ranks); ${stepLines} differ at a lowercase -> uppercase step (llama.cpp's kimi-k2 split)`);
  if (same + stepLines !== 2 * lines.length || same < 1.9 * lines.length || lines.length === 0) {
    for (const p of problems) console.log("FAIL: " + p);
    process.exit(1);
  }
} else {
  console.error("usage: node kimi_tiktoken.mjs fixture DIR N | tokenize DIR FILE.gguf corpus.txt");
  process.exit(2);
}
