import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { z } from 'zod';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startCommandDispatcher } from '../../../edge/src/command-dispatcher.js';

const logger = createLogger({ level: 'silent' });

interface Reply {
  request_id?: string;
  ok: boolean;
  error?: { code: string; message: string };
}

const replies = (bus: MemoryBus): Reply[] =>
  bus.published.filter((m) => m.topic === 'devices/cam-q/responses').map((m) => JSON.parse(m.payload.toString()) as Reply);

async function until<T>(check: () => T | undefined, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('cmd/tool: a bounded queue, then a busy reply', () => {
  const bus = new MemoryBus();
  after(() => bus.close());

  it('runs at most `maxConcurrentTools` at once, queues `maxQueuedTools`, and answers the rest device_busy without running them', async () => {
    let running = 0;
    let peak = 0;
    let ran = 0;
    const gate: (() => void)[] = [];
    const tools = new ToolRegistry();
    tools.declare('t', { name: 'slow', description: 'waits until released', input: z.object({}) });
    tools.register('t', 'slow', async () => {
      running++;
      ran++;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => gate.push(resolve));
      running--;
      return { ok: true };
    });
    const dispatcher = await startCommandDispatcher({ bus, deviceId: 'cam-q', tools, logger, maxConcurrentTools: 2, maxQueuedTools: 3 });
    try {
      for (let i = 0; i < 10; i++) await bus.publish('devices/cam-q/cmd/tool', JSON.stringify({ tool: 'slow', request_id: `r-${i}` }));
      const busy = await until(() => {
        const b = replies(bus).filter((r) => r.error?.code === 'device_busy');
        return b.length === 5 ? b : undefined;
      }, 'five busy replies');
      assert.deepEqual(
        busy.map((r) => r.request_id),
        ['r-5', 'r-6', 'r-7', 'r-8', 'r-9'],
      );
      assert.ok(busy.every((r) => r.ok === false && /did not run/.test(r.error?.message ?? '')));
      assert.equal(dispatcher.stats().busy, 5);
      assert.equal(ran, 2, 'two running, three waiting');
      // Released one at a time, the queued ones run in order and never more than two at once.
      while (replies(bus).filter((r) => r.ok).length < 5) {
        gate.shift()?.();
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal(ran, 5);
      assert.equal(peak, 2);
      assert.deepEqual(
        replies(bus)
          .filter((r) => r.ok)
          .map((r) => r.request_id),
        ['r-0', 'r-1', 'r-2', 'r-3', 'r-4'],
      );
    } finally {
      for (const release of gate) release();
      await dispatcher.stop();
    }
  });

  it('refuses a payload larger than one tool call at the shared limit (64 KiB of arguments plus the envelope)', async () => {
    const tools = new ToolRegistry();
    tools.declare('t', { name: 'echo', description: 'echoes', input: z.object({ pad: z.string() }) });
    tools.register('t', 'echo', ({ pad }: { pad: string }) => ({ n: pad.length }));
    const fresh = new MemoryBus();
    const dispatcher = await startCommandDispatcher({ bus: fresh, deviceId: 'cam-q', tools, logger });
    try {
      await fresh.publish('devices/cam-q/cmd/tool', JSON.stringify({ tool: 'echo', arguments: { pad: 'x'.repeat(60_000) }, request_id: 'fits' }));
      await fresh.publish('devices/cam-q/cmd/tool', JSON.stringify({ tool: 'echo', arguments: { pad: 'x'.repeat(80_000) }, request_id: 'big' }));
      const fits = await until(() => replies(fresh).find((r) => r.request_id === 'fits'), 'the reply that fits');
      assert.equal(fits.ok, true);
      assert.equal(dispatcher.stats().invalid, 1);
    } finally {
      await dispatcher.stop();
      await fresh.close();
    }
  });
});

describe('commands plugins answer themselves', () => {
  it('leaves cmd/data_manifest to the recorder and still calls a command nobody handles unknown', async () => {
    const bus = new MemoryBus();
    const dispatcher = await startCommandDispatcher({ bus, deviceId: 'cam-q', tools: new ToolRegistry(), logger, pluginCommands: new Set(['data_manifest']) });
    try {
      await bus.publish('devices/cam-q/cmd/data_manifest', JSON.stringify({ request_id: 'mine' }));
      await bus.publish('devices/cam-q/cmd/data_manifest', 'not even JSON');
      await bus.publish('devices/cam-q/cmd/reboot', JSON.stringify({ request_id: 'nobody' }));
      const unknown = await until(() => replies(bus).find((r) => r.request_id === 'nobody'), 'the unknown command reply');
      assert.equal(unknown.error?.code, 'command_invalid');
      assert.match(unknown.error?.message ?? '', /known: tool, ping, data_manifest/);
      assert.equal(replies(bus).length, 1, 'no reply to the plugin’s command, valid or not');
      assert.equal(dispatcher.stats().invalid, 1);
    } finally {
      await dispatcher.stop();
      await bus.close();
    }
  });
});
