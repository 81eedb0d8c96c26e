/**
 * Two `lookout-hub` replicas (real processes) on mosquitto and redis-server behind a real nginx
 * running the shipped deploy/replicas/nginx.conf (only its upstream servers and listen line
 * replaced): the file passes `nginx -t`; nginx spreads reads over both replicas and passes the event
 * stream through; one replica SIGKILLed while devices publish and clients poll through nginx: every
 * request started after the kill succeeds (nginx retries it on the survivor), and the devices'
 * latest sequence numbers keep advancing through nginx up to each one's last accepted message.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { DEFAULT_INGEST_CONNECTIONS } from '../../../hub/src/state/ingest-relay.js';
import { startHubReplica, stopReplicas, writeReplicaPluginSet, type HubReplica } from '../../support/hub-replica.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { checkShippedConfig, startNginx, type Nginx } from '../../support/nginx.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { api, endClient, mqttClient, msg, publish, sleep, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

/** A few devices at ten numbered messages a second each, and two polling clients: light on 2 shared cores. */
const DEVICES = 4;
const PUBLISH_EVERY_MS = 100;
const POLLERS = 2;
const PREFIX = 'replicas-lb-test:';

interface Outcome {
  route: string;
  /** Whether the request started after the killed replica had exited. */
  afterKill: boolean;
  status: number | string;
}

describe('hub replicas behind nginx (deploy/replicas/nginx.conf)', () => {
  let broker: Mosquitto;
  let redis: RedisServer;
  let nginx: Nginx;
  const replicas: HubReplica[] = [];
  const devices = new Map<string, MqttClient>();
  /** Per device: the highest sequence number the broker acknowledged (PUBACK). */
  const lastAccepted = new Map<string, number>();
  const ids = Array.from({ length: DEVICES }, (_, i) => `lb-${i}`);
  let seq = 0;
  let dir: string;

  const publishNumbered = async (id: string): Promise<void> => {
    const n = ++seq;
    await publish(devices.get(id)!, `devices/${id}/telemetry`, { ...msg.telemetry(), seq: n });
    lastAccepted.set(id, Math.max(n, lastAccepted.get(id) ?? 0));
  };

  const seqsOf = (body: { devices?: Record<string, { payload: { seq?: number } | null }> }): Record<string, number | undefined> =>
    Object.fromEntries(ids.map((id) => [id, body.devices?.[id]?.payload?.seq]));

  before(async () => {
    [broker, redis] = await Promise.all([startMosquitto(), startRedis()]);
    dir = mkdtempSync(join(tmpdir(), 'hub-replicas-lb-'));
    const pluginSet = writeReplicaPluginSet(dir, 'replicas-lb-test', ['fleet-events']);
    const start = (name: string): Promise<HubReplica> =>
      startHubReplica({
        name,
        brokerUrl: broker.url,
        stateUrl: redis.url,
        statePrefix: PREFIX,
        mqttGroup: 'replicas-lb-test',
        dataDir: join(dir, name),
        pluginSet,
        fleetSecret: TEST_FLEET_SECRET,
      });
    replicas.push(...(await Promise.all([start('a'), start('b')])));
    nginx = await startNginx({ upstreams: replicas.map((r) => r.url) });
    for (const [i, id] of ids.entries()) {
      const c = await mqttClient(broker.url, { clientId: id });
      devices.set(id, c);
      await publish(c, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], 21_000 + i), { retain: true });
      await publish(c, `devices/${id}/status`, msg.status(id), { retain: true });
    }
    // A device is known from its hello on. Two replicas take a device's messages on different broker
    // connections, so its first telemetry could reach the shared stream before its hello and be
    // refused as an unknown device's: as a device that booted, telemetry comes once the fleet knows it.
    await waitFor('both replicas to know every device', async () => {
      const lists = await Promise.all(replicas.map((r) => api(r.url, '/fleet/mqtt/latest')));
      return lists.every((l) => ids.every((id) => (l.body as { devices: Record<string, unknown> }).devices[id] !== undefined));
    });
    for (const id of ids) await publishNumbered(id);
  });

  afterEach((t) => {
    // A failure says what nginx and the replicas logged (warnings and errors only).
    if ((t as { passed?: boolean }).passed === false) {
      console.error(`--- nginx error log ---\n${nginx?.errorLog().slice(-4000)}\n--- nginx access log ---\n${nginx?.accessLog().slice(-60).join('\n')}`);
      for (const r of replicas) console.error(`--- replica ${r.name} stderr ---\n${r.stderr.join('').slice(-4000)}`);
    }
  });

  after(async () => {
    try {
      for (const c of devices.values()) await endClient(c).catch(() => undefined);
      await nginx?.stop();
      await stopReplicas(replicas);
    } finally {
      await broker?.stop();
      await redis?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the shipped nginx.conf, with the replicas as its upstream servers, passes nginx -t', () => {
    const { status, output } = checkShippedConfig(replicas.map((r) => r.url));
    assert.equal(status, 0, output);
    assert.match(output, /syntax is ok/);
    assert.match(output, /test is successful/);
  });

  it('nginx spreads reads over both replicas and passes the event stream through as it comes', async () => {
    await waitFor('every device with its numbered telemetry through nginx', async () => {
      const r = await api(nginx.url, '/fleet/mqtt/latest');
      const seqs = seqsOf(r.body);
      if (r.status !== 200 || !ids.every((id) => seqs[id] === lastAccepted.get(id)))
        throw new Error(`${r.status}, sequence numbers ${JSON.stringify(seqs)}, accepted ${JSON.stringify(Object.fromEntries(lastAccepted))}`);
      return true;
    });
    for (let i = 0; i < 4; i++) assert.equal((await api(nginx.url, '/fleet/health')).status, 200);
    const served = new Set(nginx.accessLog().map((line) => /upstream=(\S+)/.exec(line)?.[1]));
    for (const r of replicas) assert.ok(served.has(new URL(r.url).host), `replica ${r.name} answered some request (upstreams seen: ${[...served].join(' ')})`);

    const abort = new AbortController();
    try {
      const res = await fetch(`${nginx.url}/fleet/events?kind=incident`, { signal: abort.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const readUntil = async (pattern: RegExp): Promise<void> => {
        while (!pattern.test(text)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the event stream ended before ${pattern}: ${text}`);
          text += value;
        }
      };
      // The hub's first frame, before any event: a buffering proxy would hold it back.
      await readUntil(/: connected\n\n/);
      await publish(devices.get(ids[0])!, `devices/${ids[0]}/events/incident`, {
        timestamp: new Date().toISOString(),
        type: 'incident',
        detail: 'through nginx',
      });
      await readUntil(/event: incident\ndata: [^\n]*through nginx/);
      assert.match(text, new RegExp(`"device_id":"${ids[0]}"`));
    } finally {
      abort.abort();
    }
  });

  it('one replica SIGKILLed under load: every request through nginx after it succeeds, and the latest sequence numbers keep advancing', async () => {
    const [killed, survivor] = replicas;
    const outcomes: Outcome[] = [];
    /** Per device: the highest sequence number a successful read through nginx showed after the kill. */
    const seenAfterKill = new Map<string, number>();
    let afterKill = false;
    let publishing = true;
    let polling = true;

    const load = (async () => {
      while (publishing) {
        const started = Date.now();
        await Promise.all(ids.map((id) => publishNumbered(id)));
        await sleep(Math.max(0, PUBLISH_EVERY_MS - (Date.now() - started)));
      }
    })();
    const poll = async (): Promise<void> => {
      while (polling) {
        for (const route of ['/fleet/mqtt/latest', '/fleet/health']) {
          const startedAfterKill = afterKill;
          try {
            const r = await api(nginx.url, route);
            outcomes.push({ route, afterKill: startedAfterKill, status: r.status });
            if (startedAfterKill && r.status === 200 && route === '/fleet/mqtt/latest') {
              for (const [id, n] of Object.entries(seqsOf(r.body))) if (n !== undefined) seenAfterKill.set(id, Math.max(n, seenAfterKill.get(id) ?? 0));
            }
          } catch (err) {
            outcomes.push({ route, afterKill: startedAfterKill, status: String(err) });
          }
        }
        await sleep(25);
      }
    };
    const pollers = Array.from({ length: POLLERS }, () => poll());

    try {
      await waitFor('reads through nginx before the kill', () => outcomes.filter((o) => o.status === 200).length >= 10);
      killed.child.kill('SIGKILL');
      await new Promise((resolve) => killed.child.once('exit', resolve));
      afterKill = true;
      const atKill = new Map(lastAccepted);
      await waitFor('every device’s latest sequence number through nginx to pass the one it had at the kill', () =>
        ids.every((id) => (seenAfterKill.get(id) ?? 0) > atKill.get(id)!),
      );
      publishing = false;
      await load;
      // The survivor takes over the killed replica's broker sessions (4 s without its heartbeat) and what was queued for them.
      const want = new Map(lastAccepted);
      await waitFor('each device’s last accepted message through nginx', () => ids.every((id) => seenAfterKill.get(id) === want.get(id)), 30_000, 100);
      // The survivor took over the killed replica's broker sessions: what was queued for them is in, and it ended them.
      await waitFor(
        'the survivor to have taken over and ended the killed replica’s sessions',
        async () => (await api(nginx.url, '/fleet/mqtt/config')).body.state.details.adopted_sessions === DEFAULT_INGEST_CONNECTIONS,
        30_000,
        100,
      );
    } finally {
      publishing = false;
      polling = false;
      await Promise.all([load, ...pollers]);
    }

    const afterIt = outcomes.filter((o) => o.afterKill);
    assert.ok(afterIt.length >= 10, `requests after the kill: ${afterIt.length}`);
    assert.deepEqual(
      afterIt.filter((o) => o.status !== 200),
      [],
      'every request started after the kill succeeded',
    );
    // nginx's own account: some request went to the dead replica first and was answered by the survivor.
    const [dead, alive] = [killed, survivor].map((r) => new URL(r.url).host);
    const retried = nginx.accessLog().filter((line) => line.includes(`upstream=${dead}, ${alive}`) && / 200 upstream=/.test(line));
    assert.ok(retried.length > 0, `a request retried from ${dead} on ${alive} in nginx's access log:\n${nginx.accessLog().slice(-20).join('\n')}`);
  });
});
