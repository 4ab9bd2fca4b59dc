// @huggingface/gguf reads a `rebox meta`-edited GGUF: general.name and tokenizer.chat_template have
// the new values, and every tensor info (name, shape, type) equals the original's.
// Usage: node meta_read_hf.mjs ORIG.gguf EDITED.gguf EXPECTED_NAME TEMPLATE_FILE
import {readFileSync} from "node:fs";
import {resolve} from "node:path";
import {gguf} from "@huggingface/gguf";

const [orig, edited, expectedName, templateFile] = process.argv.slice(2);
const template = readFileSync(templateFile, "utf8");
const a = await gguf(resolve(orig), {allowLocalFile: true});
const b = await gguf(resolve(edited), {allowLocalFile: true});
const problems = [];
if (b.metadata["general.name"] !== expectedName) problems.push(`general.name = ${JSON.stringify(b.metadata["general.name"])}`);
if (b.metadata["tokenizer.chat_template"] !== template) problems.push("tokenizer.chat_template differs from the template file");
if (a.tensorInfos.length !== b.tensorInfos.length) problems.push(`tensor count ${a.tensorInfos.length} vs ${b.tensorInfos.length}`);
a.tensorInfos.forEach((t, i) => {
  const u = b.tensorInfos[i];
  if (!u || t.name !== u.name || t.dtype !== u.dtype || t.shape.join(",") !== u.shape.join(","))
    problems.push(`tensor ${i} (${t.name}) differs`);
});
if (problems.length) {
  console.log("FAIL: @huggingface/gguf: " + problems.slice(0, 10).join("; "));
  process.exit(1);
}
console.log(`ok: @huggingface/gguf reads the new name and chat template (${template.length} chars), ${b.tensorInfos.length} tensor infos unchanged`);
