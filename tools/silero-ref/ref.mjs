// ref.mjs runs the real Silero VAD v5 model (silero_vad_v5.onnx from
// @ricky0123/vad-web) in the ONNX runtime (onnxruntime-web, WebAssembly, one
// thread) over 16-bit mono WAV files, window by window with the state and
// context carried as the reference Python wrapper does, and writes one JSON
// file of speech probabilities per WAV. framewire's pure-Go forward pass is
// tested against these files.
//
//   node ref.mjs OUTDIR file.wav...
//
// Each OUTDIR/<name>.json is {model_sha256, sample_rate, window, context,
// probabilities}.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-web';

const require = createRequire(import.meta.url);
const modelPath = require.resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx');

function readWAV(path) {
  const b = readFileSync(path);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error(`${path}: not a RIFF WAVE file`);
  }
  let off = 12, rate = 0, channels = 0, bits = 0, data = null;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = b.subarray(off + 8, off + 8 + size);
    if (id === 'fmt ') {
      channels = body.readUInt16LE(2);
      rate = body.readUInt32LE(4);
      bits = body.readUInt16LE(14);
    } else if (id === 'data') {
      data = body;
    }
    off += 8 + size + (size & 1);
  }
  if (channels !== 1 || bits !== 16 || !data) {
    throw new Error(`${path}: want 16-bit mono PCM, have ${channels} channels of ${bits} bits`);
  }
  const samples = new Float32Array(data.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(2 * i) / 32768;
  return { rate, samples };
}

async function main() {
  const [outDir, ...files] = process.argv.slice(2);
  if (!outDir || files.length === 0) {
    console.error('usage: node ref.mjs OUTDIR file.wav...');
    process.exit(2);
  }
  ort.env.wasm.numThreads = 1;
  const modelBytes = readFileSync(modelPath);
  const sha = createHash('sha256').update(modelBytes).digest('hex');
  const session = await ort.InferenceSession.create(modelBytes, { executionProviders: ['wasm'] });
  for (const file of files) {
    const { rate, samples } = readWAV(file);
    const window = rate === 16000 ? 512 : rate === 8000 ? 256 : 0;
    if (window === 0) throw new Error(`${file}: ${rate} Hz, want 16000 or 8000`);
    const context = window / 8;
    let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []);
    const x = new Float32Array(context + window); // the context starts as zeros
    const probabilities = [];
    for (let start = 0; start + window <= samples.length; start += window) {
      x.copyWithin(0, window, window + context);
      x.set(samples.subarray(start, start + window), context);
      const input = new ort.Tensor('float32', x.slice(), [1, context + window]);
      const out = await session.run({ input, state, sr });
      probabilities.push(out.output.data[0]);
      state = out.stateN;
    }
    const name = basename(file).replace(/\.wav$/, '');
    const json = { model_sha256: sha, sample_rate: rate, window, context, probabilities };
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify(json) + '\n');
    console.log(`${file}: ${probabilities.length} windows`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
