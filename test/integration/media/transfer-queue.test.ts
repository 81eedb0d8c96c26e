/**
 * The hub's transfer queue with real parts (issue 30, item 5): a live simulated device (camera,
 * H.265 encoder, recorder) whose tool server serves its chunks at GET /recordings/<file>, reached
 * through TCP relays that cut or stall a transfer mid-file. A pull cut more often than one attempt
 * resumes is tried again by the queue and resumes from its offset (Range, If-Range), ending with a
 * file byte-identical to the device's; /pull-recording goes through the queue; a device that is
 * down fails after the configured attempts with the reason; a running pull is cancelled; a hub
 * stopped while a pull runs resumes it from its offset when it starts again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { recordingsRoot } from '../../../core/src/paths/recordings-root.js';
import type { DeviceHandle } from '../../../edge/src/device-runtime.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import type { Transfer } from '../../../hub/plugins/transfers/src/service.js';
import { CuttingRelay } from '../../support/cutting-relay.js';
import { NO_SSH, startRecordingDevice, toolPortOf } from '../../support/recording-device.js';
import { freePort } from '../../support/free-port.js';
import { api, callTool, endClient, mqttClient, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-transfers';
const GONE = 'cam-transfers-gone';
const QUEUE_ENV = { LOOKOUT_TRANSFERS_BACKOFF_MS: '100', LOOKOUT_TRANSFERS_BACKOFF_MAX_MS: '400', LOOKOUT_TRANSFERS_MAX_ATTEMPTS: '3' };
/** Requests one attempt makes at a cut file: the first and its resumes (DeviceHttpRecordings' RESUMES + 1). */
const REQUESTS_PER_ATTEMPT = 4;

/**
 * A TCP relay that passes chunk answers (`GET /recordings/….h265`) up to `stallAfter` bytes and
 * then holds the rest: the link stalls, the hub's pull stays running with what came.
 */
class StallRelay {
  stallAfter = Infinity;
  port = 0;
  readonly heads: string[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(target: number) {
    this.server = createServer((client) => {
      const device = connect(target, '127.0.0.1');
      this.sockets.add(client).add(device);
      let armed = false;
      let sent = 0;
      // Read when a chunk is asked for: the hub's HTTP client keeps connections open and reuses them.
      let limit = Infinity;
      client.on('data', (data: Buffer) => {
        const head = data.toString('latin1', 0, Math.min(data.length, 2000));
        if (/^GET \/recordings\//.test(head)) this.heads.push(head);
        if (/^GET \/recordings\/\S+\.h265 /.test(head)) {
          armed = true;
          sent = 0;
          limit = this.stallAfter;
        }
        device.write(data);
      });
      device.on('data', (data: Buffer) => {
        if (!armed) return void client.write(data);
        const room = limit - sent;
        sent += data.length;
        if (room >= data.length) return void client.write(data);
        if (room > 0) client.write(data.subarray(0, room));
        device.pause();
      });
      const close = () => {
        client.destroy();
        device.destroy();
      };
      client.on('error', close).on('close', close);
      device.on('error', close).on('close', close);
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  ranges(): string[] {
    return this.heads.map((h) => /^range: (.*)\r$/im.exec(h)?.[1] ?? '');
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const transfer = async (hub: RunningHub, id: string): Promise<Transfer> => (await api<Transfer>(hub.url, `/fleet/transfers/${id}`)).body;
/** The transfer once finished; past the limit, fails with its last state. */
async function settled(hub: RunningHub, id: string, what: string): Promise<Transfer> {
  let last: Transfer | undefined;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    last = await transfer(hub, id);
    if (['done', 'failed', 'cancelled'].includes(last.state)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
}

describe('the transfer queue pulls recordings from a live device', () => {
  let dir: string;
  let device: DeviceHandle;
  let cutting: CuttingRelay;
  let stall: StallRelay;
  let hub: RunningHub;
  let stallHub: RunningHub | undefined;
  let chunk: { name: string; size_bytes: number; started_at: string };
  let deviceFile: (name: string) => Buffer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transfers-'));
    device = await startRecordingDevice(DEVICE, dir);
    deviceFile = (name) => readFileSync(join(recordingsRoot(join(dir, 'device')), name));
    const toolPort = toolPortOf(device);
    cutting = await CuttingRelay.start(toolPort, 1000, 0);
    stall = await new StallRelay(toolPort).listen();
    const closedPort = await freePort();
    const registryFile = join(dir, 'registry.json');
    writeFileSync(
      registryFile,
      JSON.stringify({
        devices: [
          { device_id: DEVICE, ips: ['127.0.0.1'], tool_port: cutting.port },
          { device_id: GONE, ips: ['127.0.0.1'], tool_port: closedPort },
        ],
      }),
    );
    hub = await testHub({
      dataDir: join(dir, 'hub'),
      registryFile,
      toolTimeoutMs: 5000,
      env: { ...NO_SSH, ...QUEUE_ENV, LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000' },
    });
    chunk = await waitFor(
      'a complete chunk of more than 6 KB on the device',
      async () => {
        const r = await callTool(hub.url, DEVICE, 'list_recording_chunks', { limit: 10 });
        const list = (r.body?.result?.chunks ?? []) as { name: string; size_bytes: number; started_at: string }[];
        return list.find((c) => c.size_bytes > 6000);
      },
      60_000,
      250,
    );
  });

  after(async () => {
    await hub?.close();
    await stallHub?.close();
    await cutting?.close();
    await stall?.close();
    await device?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a pull cut more often than one attempt resumes is tried again by the queue from its offset, byte-identical at the end', async () => {
    cutting.cutsLeft = REQUESTS_PER_ATTEMPT; // the whole first attempt is cut: the queue's second attempt resumes
    const posted = await api<{ transfers: Transfer[] }>(hub.url, '/fleet/transfers', { json: { device: DEVICE, chunks: [chunk.name] } });
    assert.equal(posted.status, 202, posted.text);
    const [queued] = posted.body.transfers;
    assert.equal(queued.origin, 'api');
    const end = await settled(hub, queued.id, 'the cut pull finished');
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.equal(cutting.cutsMade, REQUESTS_PER_ATTEMPT);
    assert.equal(end.attempts, 2, 'the first attempt failed on its cuts, the second finished');
    assert.ok(end.resumed_from !== null && end.resumed_from > 0, JSON.stringify(end));
    // The second attempt asked for the rest from the offset it had, under the file's ETag.
    const ranges = cutting.ranges();
    assert.equal(ranges[REQUESTS_PER_ATTEMPT], `bytes=${end.resumed_from}-`, ranges.join(' | '));
    assert.match(cutting.heads[REQUESTS_PER_ATTEMPT], /^if-range: "/im);
    assert.equal(end.bytes_done, chunk.size_bytes);
    assert.equal(end.bytes_total, chunk.size_bytes);
    assert.equal(end.source, 'device');
    assert.equal(end.stored, true);
    assert.deepEqual(readFileSync(join(dir, 'hub', 'transfers', `${end.id}.data`)), deviceFile(chunk.name));
    // The listing shows it, with the counts and bounds.
    const list = await api(hub.url, `/fleet/transfers?device=${DEVICE}&state=done`);
    assert.equal(list.status, 200);
    assert.ok((list.body.transfers as Transfer[]).some((t) => t.id === end.id));
    assert.equal(list.body.puller, true);
    assert.equal(list.body.limits.max_attempts, 3);
  });

  it('GET /pull-recording pulls its chunk through the queue', async () => {
    const res = await fetch(`${hub.url}/pull-recording?target=${DEVICE}&which=latest&variant=hevc`);
    assert.equal(res.status, 200, await res.clone().text());
    const name = res.headers.get('x-lookout-chunk');
    await res.arrayBuffer();
    const list = await api(hub.url, `/fleet/transfers?device=${DEVICE}`);
    const mine = (list.body.transfers as Transfer[]).find((t) => t.origin === 'pull-recording' && t.chunk === name);
    assert.ok(mine, JSON.stringify(list.body.transfers));
    assert.equal(mine.state, 'done');
    assert.equal(mine.stored, false, 'the clip build took the pulled file');
  });

  it('an incident pulls the chunk covering it through the queue', async () => {
    const client = await mqttClient(hub.brokerUrl);
    try {
      const at = new Date(Date.parse(chunk.started_at) + 500).toISOString();
      await publish(client, `devices/${DEVICE}/events/incident`, { timestamp: at, type: 'incident', message: 'person in restricted zone' });
      const pulled = await waitFor(
        'the incident pull done',
        async () => {
          const list = (await api(hub.url, `/fleet/transfers?device=${DEVICE}`)).body.transfers as Transfer[];
          return list.find((t) => t.origin === 'incident' && t.state === 'done');
        },
        60_000,
        100,
      );
      assert.equal(pulled.chunk, chunk.name);
      assert.equal(pulled.bytes_done, chunk.size_bytes);
    } finally {
      await endClient(client);
    }
  });

  it('a pull from a device that is down fails after the configured attempts with the reason', async () => {
    const posted = await api<{ transfers: Transfer[] }>(hub.url, '/fleet/transfers', { json: { device: GONE, chunks: [chunk.name] } });
    assert.equal(posted.status, 202, posted.text);
    const end = await settled(hub, posted.body.transfers[0].id, 'the pull from the device that is down given up');
    assert.equal(end.state, 'failed');
    assert.equal(end.attempts, 3);
    assert.equal(end.error?.code, 'recordings_unavailable');
    assert.match(end.error?.message ?? '', /device: /);
    // Finished: it cannot be cancelled; it can be queued again.
    assert.equal((await api(hub.url, `/fleet/transfers/${end.id}`, { method: 'DELETE' })).status, 409);
    const again = await api<Transfer>(hub.url, `/fleet/transfers/${end.id}/retry`, { method: 'POST' });
    assert.equal(again.status, 200, again.text);
    assert.notEqual(again.body.state, 'failed');
  });

  it('refuses what it cannot queue with typed errors', async () => {
    assert.equal((await api(hub.url, '/fleet/transfers', { json: { device: 'nobody-here', chunks: [chunk.name] } })).body.error.code, 'target_unknown');
    const bad = await api(hub.url, '/fleet/transfers', { json: { device: DEVICE, chunks: ['../../etc/passwd'] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'bad_request');
    const missing = await api(hub.url, '/fleet/transfers/t-0000000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'transfers.transfer_not_found');
  });

  it('cancels a running pull; a hub stopped while a pull runs resumes it from its offset when it starts again', async () => {
    const registryFile = join(dir, 'registry-stall.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: DEVICE, ips: ['127.0.0.1'], tool_port: stall.port }] }));
    const start = () => testHub({ dataDir: join(dir, 'stall-hub'), registryFile, toolTimeoutMs: 5000, env: { ...NO_SSH, ...QUEUE_ENV } });
    stall.stallAfter = 2500;
    stallHub = await start();
    const running = async (id: string) =>
      waitFor(
        `${id} running with bytes`,
        async () => {
          const t = await transfer(stallHub!, id);
          return t.state === 'running' && t.bytes_done > 0 ? t : undefined;
        },
        30_000,
        50,
      );

    // Cancel: the running pull stops and its partial file goes.
    const a = (await api<{ transfers: Transfer[] }>(stallHub.url, '/fleet/transfers', { json: { device: DEVICE, chunks: [chunk.name] } })).body.transfers[0];
    const seen = await running(a.id);
    assert.ok(seen.bytes_total === chunk.size_bytes, JSON.stringify(seen));
    const cancelled = await api<Transfer>(stallHub.url, `/fleet/transfers/${a.id}`, { method: 'DELETE' });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.state, 'cancelled');
    await waitFor('the cancelled pull’s partial file removed', () => !existsSync(join(dir, 'stall-hub', 'transfers', `${a.id}.part`)));

    // Restart: stopped while running, resumed from what it had.
    const b = (await api<{ transfers: Transfer[] }>(stallHub.url, '/fleet/transfers', { json: { device: DEVICE, chunks: [chunk.name] } })).body.transfers[0];
    const before = await running(b.id);
    await stallHub.close();
    stallHub = undefined;
    const had = readFileSync(join(dir, 'stall-hub', 'transfers', `${b.id}.part`)).length;
    assert.ok(had >= before.bytes_done && had > 0 && had < chunk.size_bytes, `${had} bytes kept of ${chunk.size_bytes}`);
    stall.stallAfter = Infinity;
    const requestsBefore = stall.heads.length;
    stallHub = await start();
    const end = await settled(stallHub, b.id, 'the pull resumed after the restart');
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.equal(end.attempts, 2);
    assert.equal(end.resumed_from, had);
    assert.equal(stall.ranges()[requestsBefore], `bytes=${had}-`, stall.heads.slice(requestsBefore).join(' | '));
    assert.deepEqual(readFileSync(join(dir, 'stall-hub', 'transfers', `${b.id}.data`)), deviceFile(chunk.name));
  });
});
