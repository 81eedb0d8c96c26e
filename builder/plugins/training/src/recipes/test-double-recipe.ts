/**
 * The test-double training recipe (`recipe: "test-double"`): it trains nothing, but behaves as a
 * recipe does, so `npm test` and the README's walk-through run the whole builder path without Python
 * or a GPU. Per epoch it sleeps `options.epoch_ms`, reports a loss that goes down, and at the end
 * writes a real ONNX of the declared shape ([1, 3, input_size, input_size] in; dets and labels out)
 * that onnxruntime and the detector's ONNX back-end load. `options.fail_at_epoch` makes it fail there
 * as a diverging run would; `options.export_size` exports another side than declared (a broken recipe).
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { detrOnnx } from './onnx-writer.js';
import { EXPORT_PREFIX, PROGRESS_PREFIX, type RecipeParams } from './recipe-protocol.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { params: { type: 'string' }, out: { type: 'string' } } });
  if (!values.params || !values.out) throw new Error('usage: test-double-recipe --params <params.json> --out <dir>');
  const p = JSON.parse(await readFile(values.params, 'utf8')) as RecipeParams;
  const isDir = await stat(p.dataset).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new Error(`dataset ${p.dataset} is not a folder on this machine`);
  const epochMs = Number(p.options.epoch_ms ?? 20);
  const failAt = p.options.fail_at_epoch === undefined ? undefined : Number(p.options.fail_at_epoch);
  console.log(`test-double recipe: ${p.epochs} epochs, batch ${p.batch_size}, ${p.input_size}x${p.input_size}, ${p.classes.length} classes`);
  for (let epoch = 1; epoch <= p.epochs; epoch++) {
    await new Promise((r) => setTimeout(r, epochMs));
    if (epoch === failAt) throw new Error(`loss diverged (NaN) at epoch ${epoch}`);
    const loss = 2 / (1 + epoch);
    console.log(`${PROGRESS_PREFIX}${JSON.stringify({ epoch, epochs: p.epochs, metrics: { loss, map50: 1 - loss / 2 } })}`);
  }
  const side = Number(p.options.export_size ?? p.input_size);
  let seed = 1;
  const weights = () => ((seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5) * 0.6;
  const onnx = join(values.out, 'inference_model.onnx');
  await writeFile(onnx, detrOnnx({ height: side, width: side, queries: 20, classes: p.classes.length, weights }));
  console.log(`${EXPORT_PREFIX}${JSON.stringify({ onnx })}`);
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
