import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busSettingsFromEnv } from '../../../edge/src/bus-env.js';
import { isUsageError } from '../../../edge/src/edge-args.js';

describe('bus settings of lookout-edge from its environment', () => {
  it('maps the reconnect cap and the outbox bounds', () => {
    assert.deepEqual(
      busSettingsFromEnv({
        LOOKOUT_BUS_RECONNECT_MAX_MS: '5000',
        LOOKOUT_OUTBOX_MAX_MESSAGES: '100',
        LOOKOUT_OUTBOX_MAX_BYTES: '65536',
        LOOKOUT_OUTBOX_FLUSH_MS: '50',
      }),
      { mqttOptions: { reconnect: { initialMs: 250, maxMs: 5000 } }, outbox: { maxMessages: 100, maxBytes: 65536, flushMs: 50 } },
    );
    assert.deepEqual(busSettingsFromEnv({}), { outbox: {} });
  });

  it('refuses a value that is not a positive integer, naming the key', () => {
    for (const value of ['0', '-1', '1.5', 'lots']) {
      assert.throws(
        () => busSettingsFromEnv({ LOOKOUT_OUTBOX_MAX_MESSAGES: value }),
        (e) => isUsageError(e) && (e as Error).message.includes('LOOKOUT_OUTBOX_MAX_MESSAGES'),
      );
    }
  });
});
