import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPluginClock } from '../../../../core/src/plugin/plugin-clock.js';
import { retryUntilSaved } from '../../../../plugins/identity/src/durable-retry.js';
import { waitFor } from '../../../support/wait-for.js';

describe('retryUntilSaved', () => {
  it('retries on the clock until the save succeeds, reporting each failure, then stops', async () => {
    const clock = createPluginClock();
    const events: string[] = [];
    let calls = 0;
    let saved = 0;
    retryUntilSaved({
      clock,
      everyMs: 10,
      save: async () => {
        calls++;
        if (calls < 3) throw new Error(`ENOSPC ${calls}`);
      },
      onFailed: (err, attempts) => events.push(`failed ${attempts}: ${(err as Error).message}`),
      onSaved: (attempts) => {
        saved++;
        events.push(`saved ${attempts}`);
      },
    });
    assert.equal(calls, 0, 'the first retry waits a period: the start already tried once');
    await waitFor(() => saved === 1, 'the save to succeed');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(events, ['failed 1: ENOSPC 1', 'failed 2: ENOSPC 2', 'saved 3']);
    assert.equal(calls, 3, 'no attempt after success');
    clock.clearAll();
  });

  it('never overlaps attempts, and cancel stops the next one', async () => {
    const clock = createPluginClock();
    let running = 0;
    let most = 0;
    let calls = 0;
    const retry = retryUntilSaved({
      clock,
      everyMs: 5,
      save: async () => {
        calls++;
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 30));
        running--;
        throw new Error('still full');
      },
      onFailed: () => undefined,
      onSaved: () => assert.fail('never saved'),
    });
    await waitFor(() => calls >= 2, 'two attempts');
    retry.cancel();
    const at = calls;
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(most, 1);
    assert.ok(calls <= at + 1, `attempts after cancel: ${calls - at}`);
    clock.clearAll();
  });
});
