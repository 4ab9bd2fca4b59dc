// Compares `rebox inspect --json` of a GGUF with what the independent @huggingface/gguf parser reads
// from the same file: header counts, data offset, every KV (key, on-disk type number, value, arrays in
// full, in file order) and every tensor info (name, shape, ggml type id and name, relative offset).
// Usage: node hf_gguf_compare.mjs FILE.gguf INSPECT.json   (exit 1 on any difference)
import {readFileSync} from "node:fs";
import {resolve} from "node:path";
import {gguf, GGUFValueType, GGMLQuantizationType} from "@huggingface/gguf";

const [file, inspectPath] = process.argv.slice(2);
const ours = JSON.parse(readFileSync(inspectPath, "utf8"));
const theirs = await gguf(resolve(file), {allowLocalFile: true, typedMetadata: true});
const problems = [];
const fail = (what) => {
  if (problems.length < 30) problems.push(what);
  else if (problems.length === 30) problems.push("... (more differences not shown)");
};
const PSEUDO_KEYS = new Set(["version", "tensor_count", "kv_count"]);

// Header.
if (ours.format !== "gguf") fail(`format: ${ours.format}`);
if (ours.version !== theirs.metadata.version) fail(`version: ours ${ours.version} hf ${theirs.metadata.version}`);
if (BigInt(ours.kv_count) !== theirs.metadata.kv_count) fail(`kv_count: ours ${ours.kv_count} hf ${theirs.metadata.kv_count}`);
if (BigInt(ours.tensor_count) !== theirs.metadata.tensor_count)
  fail(`tensor_count: ours ${ours.tensor_count} hf ${theirs.metadata.tensor_count}`);
if (BigInt(ours.data_offset) !== BigInt(theirs.tensorDataOffset))
  fail(`data_offset: ours ${ours.data_offset} hf ${theirs.tensorDataOffset}`);
if (ours.kv.length !== ours.kv_count) fail(`kv list has ${ours.kv.length} entries, kv_count says ${ours.kv_count}`);
if (ours.tensors.length !== ours.tensor_count)
  fail(`tensor list has ${ours.tensors.length} entries, tensor_count says ${ours.tensor_count}`);

// One scalar value: our JSON number/string/bool against the parser's typed value.
function sameScalar(typeName, mine, hf) {
  switch (typeName) {
    case "FLOAT32": return typeof mine === "number" && Math.fround(mine) === hf;
    case "FLOAT64": return mine === hf;
    case "UINT64": case "INT64":
      if (!Number.isSafeInteger(mine)) return false; // JSON number beyond 2^53 cannot be compared exactly
      return BigInt(mine) === BigInt(hf);
    default: return mine === hf;
  }
}
const show = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));

// KVs, in file order.
const theirKeys = Object.keys(theirs.typedMetadata).filter((k) => !PSEUDO_KEYS.has(k));
const ourKeys = ours.kv.map((e) => e.key);
if (show(theirKeys) !== show(ourKeys)) {
  const i = ourKeys.findIndex((k, j) => k !== theirKeys[j]);
  fail(`KV keys/order differ at #${i}: ours ${ourKeys[i]} hf ${theirKeys[i]} (ours ${ourKeys.length}, hf ${theirKeys.length})`);
}
let arrayItems = 0;
for (const e of ours.kv) {
  const t = theirs.typedMetadata[e.key];
  if (!t) { fail(`KV ${e.key}: hf does not see it`); continue; }
  if (GGUFValueType[e.type] !== t.type) fail(`KV ${e.key}: type ours ${e.type} hf ${GGUFValueType[t.type]} (${t.type})`);
  if (e.type !== "ARRAY") {
    if (!sameScalar(e.type, e.value, t.value)) fail(`KV ${e.key}: value ours ${show(e.value)} hf ${show(t.value)}`);
    continue;
  }
  if (GGUFValueType[e.elem_type] !== t.subType)
    fail(`KV ${e.key}: elem_type ours ${e.elem_type} hf ${GGUFValueType[t.subType]}`);
  if (!Array.isArray(e.value) || e.value.length !== e.length || t.value.length !== e.length) {
    fail(`KV ${e.key}: length ours ${e.length} (listed ${e.value?.length}) hf ${t.value.length}`);
    continue;
  }
  const bad = e.value.findIndex((v, i) => !sameScalar(e.elem_type, v, t.value[i]));
  if (bad >= 0) fail(`KV ${e.key}[${bad}]: ours ${show(e.value[bad])} hf ${show(t.value[bad])}`);
  arrayItems += e.length;
}

// Tensor infos, in file order.
theirs.tensorInfos.forEach((ti, i) => {
  const mine = ours.tensors[i];
  if (!mine) { fail(`tensor #${i} ${ti.name}: missing from inspect`); return; }
  const where = `tensor #${i} ${ti.name}`;
  if (mine.name !== ti.name) fail(`${where}: name ours ${mine.name}`);
  if (show(mine.ne.map(BigInt)) !== show(ti.shape)) fail(`${where}: ne ours ${show(mine.ne)} hf ${show(ti.shape)}`);
  if (mine.type_id !== ti.dtype) fail(`${where}: type_id ours ${mine.type_id} hf ${ti.dtype}`);
  if (mine.type !== GGMLQuantizationType[ti.dtype]) fail(`${where}: type name ours ${mine.type} hf ${GGMLQuantizationType[ti.dtype]}`);
  if (BigInt(mine.offset) !== ti.offset) fail(`${where}: offset ours ${mine.offset} hf ${ti.offset}`);
});

if (problems.length) {
  console.log(`FAIL: rebox inspect and @huggingface/gguf disagree on ${file}:`);
  for (const p of problems) console.log("  " + p);
  process.exit(1);
}
console.log(`ok: @huggingface/gguf agrees with rebox inspect: version ${ours.version}, data_offset ${ours.data_offset}, ` +
  `${ours.kv.length} KVs (types, values, ${arrayItems} array items), ${ours.tensors.length} tensor infos (name, ne, type, offset)`);
