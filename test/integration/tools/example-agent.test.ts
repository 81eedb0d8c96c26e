/**
 * The example agent (issue 29 item 6, examples/fleet-agent/agent.mjs) run as a user runs it, against a
 * real hub with a real `lookout-edge` camera (the encoder gives the snapshot): its answer's people
 * counts equal those of the dets the test published for the camera, it names the device and span
 * they come from, and the snapshot it writes is a JPEG.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { api, endClient, mqttClient, msg, publish, waitFor } from '../../support/hub-helpers.js';
import { startMcpFleet, type McpFleet } from './hub-mcp-fixture.js';

const DEVICE = 'cam-agent';
/** Person track ids per published dets message: at most 3 at once, 4 distinct people. */
const FRAMES = [[1], [1, 2], [1, 2, 3], [3, 4]];

describe('the example agent against a real hub', () => {
  let fleet: McpFleet;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'example-agent-'));
    fleet = await startMcpFleet({ deviceId: DEVICE, encode: true, hub: { env: { LOOKOUT_HISTORY_FLUSH_MS: '100' } } });
    const client = await mqttClient(fleet.hub.brokerUrl);
    try {
      for (const tracks of FRAMES) {
        await publish(client, `devices/${DEVICE}/dets`, {
          ...msg.dets(0),
          dets: tracks.map((t, i) => ({ c: 0, p: 0.9, b: [i * 20, 0, i * 20 + 10, 10], track_id: t })),
          person_count: tracks.length,
        });
      }
    } finally {
      await endClient(client);
    }
    await waitFor(
      'the hub counted the dets',
      async () => (await api(fleet.hub.url, `/fleet/history/people?target=${DEVICE}`)).body.frames >= FRAMES.length,
      20_000,
    );
  });

  after(async () => {
    await fleet?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers how many people were at the camera in the last ten minutes, from its counts, with a snapshot', async () => {
    const out = join(dir, 'snap.jpg');
    const agent = join(packageRoot(), 'examples', 'fleet-agent', 'agent.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [agent, '--hub', fleet.hub.url, '--camera', DEVICE, '--out', out, '--json'], {
      timeout: 60_000,
    });
    const answer = JSON.parse(stdout.trim().split('\n').at(-1)!);
    assert.equal(answer.most_at_once, Math.max(...FRAMES.map((f) => f.length)));
    assert.equal(answer.distinct_people, new Set(FRAMES.flat()).size);
    assert.deepEqual(answer.sources.devices, [DEVICE]);
    assert.equal(answer.sources.kind, 'history');
    assert.ok(Date.parse(answer.sources.to) - Date.parse(answer.sources.from) === 10 * 60_000, 'the span is the last ten minutes');
    const jpeg = readFileSync(out);
    assert.ok(jpeg.length > 100 && jpeg[0] === 0xff && jpeg[1] === 0xd8, 'the snapshot is a JPEG');
    assert.equal(answer.snapshot.bytes, jpeg.length);

    const text = await promisify(execFile)(process.execPath, [agent, '--hub', fleet.hub.url, '--camera', DEVICE, '--out', out], { timeout: 60_000 });
    assert.match(text.stdout, new RegExp(`at most 3 people at once, 4 distinct people .*${DEVICE}`));
  });
});
