// Does llama.cpp (node-llama-cpp, CPU) load these GGUFs? The outside answer `rebox check` is
// compared with: one line per file, "LOADED FILE" or "REFUSED FILE: <llama.cpp's first error
// message>" (loadModel threw). Exit 0 once every file has been tried.
// Usage: node llama_load.mjs FILE.gguf...
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

let lastError = "";
const llama = await getLlama({
  gpu: false, build: "never", logLevel: LlamaLogLevel.error,
  logger: (level, message) => { if (!lastError && level === LlamaLogLevel.error) lastError = message.trim(); },
});
for (const file of process.argv.slice(2)) {
  lastError = "";
  try {
    const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
    await model.dispose();
    console.log(`LOADED ${file}`);
  } catch (e) {
    await new Promise((resolve) => setTimeout(resolve, 50));  // the loader's log line may trail
    console.log(`REFUSED ${file}: ${lastError || String(e?.message ?? e).split("\n")[0]}`);
  }
}
await llama.dispose();
