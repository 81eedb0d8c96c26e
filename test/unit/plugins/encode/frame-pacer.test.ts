import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FramePacer } from '../../../../plugins/encode/src/frame-pacer.js';

test('the pacer ticks at the fps on a fixed schedule', async () => {
  let ticks = 0;
  let missed = 0;
  const pacer = new FramePacer(
    () => ticks++,
    (n) => (missed += n),
  );
  pacer.start(20);
  await sleep(1000);
  pacer.stop();
  // 20 fps for 1 s: the first tick at 0, then every 50 ms.
  assert.ok(ticks >= 18 && ticks <= 22, `${ticks} ticks in 1 s at 20 fps`);
  assert.equal(missed, 0);
  const after = ticks;
  await sleep(150);
  assert.equal(ticks, after, 'stopped means stopped');
});

test('when the process falls behind, the missed ticks are skipped and counted, not fired in a burst', async () => {
  const at: number[] = [];
  let missed = 0;
  const pacer = new FramePacer(
    () => at.push(performance.now()),
    (n) => (missed += n),
  );
  pacer.start(20);
  await sleep(120);
  // Block the event loop for 300 ms: about 6 periods.
  const until = performance.now() + 300;
  while (performance.now() < until);
  await sleep(120);
  pacer.stop();
  assert.ok(missed >= 4 && missed <= 7, `${missed} ticks missed while blocked for 300 ms at 20 fps`);
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  const burst = gaps.filter((g) => g < 5).length;
  assert.ok(burst <= 1, `no burst of catch-up ticks (gaps ${gaps.map((g) => g.toFixed(0)).join(', ')})`);
});
