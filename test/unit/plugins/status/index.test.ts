import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BusPort, PublishOptions } from '../../../../core/src/bus/bus-port.js';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { StatusMessageSchema } from '../../../../core/src/contracts/status-message.js';
import { LastWillToken, type LastWill } from '../../../../core/src/plugin/last-will.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import dieTemp from '../../../../plugins/die-temp/src/index.js';
import status from '../../../../plugins/status/src/index.js';
import { scratchDir } from '../../../support/scratch-dir.js';
import { waitFor } from '../../../support/wait-for.js';

const logger = createLogger({ level: 'silent' });

/**
 * Test double of a broker that is slow to acknowledge the offline status (a loaded link): the
 * publish of `state: offline` resolves only after `delayMs`, everything else at once.
 */
class SlowOfflineAckBus implements BusPort {
  constructor(
    readonly inner: MemoryBus,
    private readonly delayMs: number,
  ) {}
  get connected(): boolean {
    return this.inner.connected;
  }
  async publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void> {
    await this.inner.publish(topic, payload, options);
    if (String(payload).includes('"offline"')) await new Promise((r) => setTimeout(r, this.delayMs));
  }
  subscribe(filter: string, handler: Parameters<BusPort['subscribe']>[1]): ReturnType<BusPort['subscribe']> {
    return this.inner.subscribe(filter, handler);
  }
  onConnect(listener: () => void): () => void {
    return this.inner.onConnect(listener);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const statesOf = (bus: MemoryBus, id: string) =>
  bus.published.filter((m) => m.topic === `devices/${id}/status`).map((m) => (JSON.parse(m.payload.toString()) as { state: string }).state);

describe('status plugin', () => {
  it('publishes nothing online after the offline status of a graceful stop', async () => {
    const scratch = await scratchDir('lookout-status-');
    const memory = new MemoryBus();
    const bus = new SlowOfflineAckBus(memory, 300);
    try {
      const loaded = await loadPlugins({
        plugins: [dieTemp, status],
        runtime: { kind: 'device', id: 'cam-s', dataDir: scratch.dir, layer: 'layer0', device: { source: 'sim' } },
        bus,
        env: { STATUS_INTERVAL_MS: '50' },
        logger,
      });
      await waitFor(() => statesOf(memory, 'cam-s').length >= 2, 'an online status and a periodic one');
      await loaded.stop();
      const states = statesOf(memory, 'cam-s');
      assert.equal(states.at(-1), 'offline', `status sequence: ${states.join(', ')}`);
      assert.equal(states.indexOf('offline'), states.length - 1, 'offline is the last status, and only once');
    } finally {
      await memory.close();
      await scratch.cleanup();
    }
  });

  it('sets a last-will that says only what it knows: when it was set, no timestamp of a moment it cannot know, no current temperature', async () => {
    const scratch = await scratchDir('lookout-status-');
    const bus = new MemoryBus();
    const loaded = await loadPlugins({
      plugins: [dieTemp, status],
      runtime: { kind: 'device', id: 'cam-w', dataDir: scratch.dir, layer: 'layer0', device: { source: 'sim' } },
      bus,
      env: {},
      logger,
    });
    try {
      const before = Date.now();
      const will = loaded.service<LastWill>(LastWillToken)!.payload() as Record<string, unknown>;
      assert.ok(StatusMessageSchema.safeParse(will).success, JSON.stringify(StatusMessageSchema.safeParse(will).error?.issues));
      assert.equal(will.state, 'offline');
      assert.equal(will.reason, 'connection_lost');
      assert.equal(will.timestamp, undefined, 'no timestamp: the broker sends it at a moment the device never knew');
      assert.ok(Date.parse(will.will_set_at as string) >= before - 1000);
      assert.deepEqual([will.die_temp_c, will.thermal_state], [null, null], 'no connect-time temperature passed off as current');
      assert.match(will.thermal_state_reason as string, /unknown: the connection was lost/);
    } finally {
      await loaded.stop();
      await bus.close();
      await scratch.cleanup();
    }
  });
});
