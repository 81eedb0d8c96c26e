import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadImage, readImage } from '../../../../core/src/images/load-image.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { packageRoot } from '../../../../core/src/paths/package-root.js';

async function withImage(content: unknown, fn: (path: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-image-'));
  try {
    const path = join(dir, 'image.json');
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
    await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the example third-party plugin loads from its path and uses the die-temp service', async () => {
  const example = join(packageRoot(), 'examples', 'hello-plugin', 'index.js');
  await withImage({ name: 'hello-camera', plugins: ['die-temp', example] }, async (path) => {
    const image = await loadImage(path);
    assert.deepEqual(
      image.plugins.map((p) => p.name),
      ['die-temp', 'hello'],
    );
    const bus = new MemoryBus();
    const rt = await loadPlugins({
      plugins: image.plugins,
      runtime: { kind: 'device', id: 'cam-9', dataDir: tmpdir(), layer: 'layer0', device: { source: 'sim' } },
      bus,
      env: { HELLO_GREETING: 'hi' },
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const answer = (await rt.tools.call('say_hello', { name: 'operator' })) as { greeting: string; device_id: string; die_temp_c: number };
      assert.equal(answer.greeting, 'hi, operator');
      assert.equal(answer.device_id, 'cam-9');
      assert.equal(typeof answer.die_temp_c, 'number');
      assert.ok(answer.die_temp_c > 20 && answer.die_temp_c < 100);
      assert.deepEqual(
        bus.published.map((m) => m.topic),
        ['devices/cam-9/events/hello'],
      );
      await assert.rejects(rt.tools.call('say_hello', { name: '' }), (err: unknown) => err instanceof LookoutError && err.code === 'tool_arguments_invalid');
      await assert.rejects(
        rt.tools.call('say_hello', { name: 'Nobody' }),
        (err: unknown) => err instanceof LookoutError && err.code === 'hello.name_refused' && err.status === 400,
      );
    } finally {
      await rt.stop();
    }
  });
});

test('a relative plugin path is resolved from the image file', async () => {
  const dir = join(packageRoot(), 'examples');
  const path = join(dir, '.test-image.json');
  await writeFile(path, JSON.stringify({ name: 'rel', plugins: ['die-temp', './hello-plugin/index.js'] }));
  try {
    const image = await loadImage(path);
    assert.deepEqual(
      image.plugins.map((p) => p.name),
      ['die-temp', 'hello'],
    );
  } finally {
    await rm(path, { force: true });
  }
});

test('the shipped images load, and every plugin they name exists', async () => {
  for (const name of ['camera', 'precision']) {
    const image = await loadImage(name);
    assert.equal(image.name, name);
    assert.ok(image.plugins.some((p) => p.name === 'detector'));
  }
});

test('an image naming a plugin that does not exist is a clear error, not a silent skip', async () => {
  await withImage({ name: 'x', plugins: ['die-temp', 'no-such-plugin'] }, async (path) => {
    await assert.rejects(
      loadImage(path),
      (err: unknown) => err instanceof LookoutError && err.code === 'plugin_not_found' && /"no-such-plugin"/.test(err.message),
    );
  });
  await withImage({ name: 'x', plugins: ['./missing.js'] }, async (path) => {
    await assert.rejects(loadImage(path), (err: unknown) => err instanceof LookoutError && err.code === 'plugin_not_found');
  });
  await withImage({ name: 'x', plugins: ['zod'] }, async (path) => {
    await assert.rejects(loadImage(path), (err: unknown) => err instanceof LookoutError && err.code === 'plugin_manifest_invalid' && /"zod"/.test(err.message));
  });
});

test('a malformed image file is refused with the field named', async () => {
  await withImage('{ not json', async (path) => {
    await assert.rejects(readImage(path), (err: unknown) => err instanceof LookoutError && err.code === 'image_invalid');
  });
  await withImage({ name: 'x', plugins: [] }, async (path) => {
    await assert.rejects(readImage(path), (err: unknown) => err instanceof LookoutError && err.code === 'image_invalid' && /plugins/.test(err.message));
  });
});
