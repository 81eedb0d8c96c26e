/**
 * A replica acknowledges a device message to the broker only once it is in the shared Redis stream:
 * with Redis holding writes (CLIENT PAUSE WRITE: the connection stays up, the XADD waits), the
 * replica takes messages and is SIGKILLed; every one of them must still be in its broker session,
 * handed again to the next connection under its client id. A replica that acknowledged a message
 * before its write answered (at take, or at the write's send) would have lost it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { connect, type MqttClient } from 'mqtt';
import { hubBusClientId } from '../../../hub/src/hub-bus-client-id.js';
import { startHubReplica, writeReplicaPluginSet, type HubReplica } from '../../support/hub-replica.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { api, endClient, mqttClient, msg, publish, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const PREFIX = 'replicas-ack:';
const MESSAGES = 20;

/** The replica's first ingest connection's client id, as start-hub derives it from its data dir. */
function ingestClientId(dataDir: string): string {
  const hubId = `lookout-hub-${hostname()}-${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 8)}`;
  return `${hubBusClientId(TEST_FLEET_SECRET, hubId)}-ingest-0`;
}

describe('hub replica acknowledgements', () => {
  let broker: Mosquitto;
  let redis: RedisServer;
  let admin: Redis;
  let replica: HubReplica | undefined;
  const clients: MqttClient[] = [];

  before(async () => {
    [broker, redis] = await Promise.all([startMosquitto({ maxInflightMessages: 100 }), startRedis()]);
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });

  after(async () => {
    await admin?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    for (const c of clients) c.end(true);
    if (replica && replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
    admin?.disconnect();
    await broker?.stop();
    await redis?.stop();
  });

  it('a message taken while its stream write waits is not acknowledged: SIGKILLed then, the broker still holds every one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-replicas-ack-'));
    const dataDir = join(dir, 'a');
    replica = await startHubReplica({
      name: 'a',
      brokerUrl: broker.url,
      stateUrl: redis.url,
      statePrefix: PREFIX,
      mqttGroup: 'replicas-ack',
      dataDir,
      pluginSet: writeReplicaPluginSet(dir, 'replicas-ack'),
      fleetSecret: TEST_FLEET_SECRET,
    });
    const device = await mqttClient(broker.url, { clientId: 'ack-cam' });
    clients.push(device);
    await publish(device, 'devices/ack-cam/hello', msg.hello('ack-cam', ['127.0.0.1'], 20_000), { retain: true });
    await waitFor('the replica to list the device', async () => ((await api(replica!.url, '/fleet/mqtt/latest')).body as { count: number }).count === 1);

    // Writes wait from here (reads, the replica's XREAD among them, go on): the replica's XADD is held, its connection up.
    const blockedBefore = Number(/blocked_clients:(\d+)/.exec(await admin.info('clients'))?.[1] ?? 0);
    await admin.call('CLIENT', 'PAUSE', '120000', 'WRITE');
    for (let seq = 1; seq <= MESSAGES; seq++) await publish(device, 'devices/ack-cam/telemetry', { ...msg.telemetry(), seq });
    // The replica has taken messages and its stream write is waiting in Redis.
    await waitFor(
      'the replica to take a message and write it',
      async () => Number(/blocked_clients:(\d+)/.exec(await admin.info('clients'))?.[1] ?? 0) > blockedBefore,
    );

    const exited = new Promise((r) => replica!.child.once('exit', r));
    replica.child.kill('SIGKILL');
    await exited;

    // The replica's session, taken by a client of our own: what it had not acknowledged is handed over again.
    const seen = new Set<number>();
    const session = connect(broker.url, {
      clientId: ingestClientId(dataDir),
      protocolVersion: 5,
      clean: false,
      reconnectPeriod: 0,
      properties: { sessionExpiryInterval: 60 },
    });
    clients.push(session);
    session.on('message', (topic, payload) => {
      if (topic !== 'devices/ack-cam/telemetry') return;
      const { seq } = JSON.parse(payload.toString()) as { seq?: number };
      if (typeof seq === 'number') seen.add(seq);
    });
    await waitFor('every message taken by the killed replica handed over again', () => seen.size === MESSAGES, 15_000).catch(() => undefined);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: MESSAGES }, (_, i) => i + 1),
      'messages acknowledged to the broker before they were in the stream are lost with the replica',
    );
    await endClient(session);
  });
});
