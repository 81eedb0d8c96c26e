/**
 * SessionAdoption.onWill on a real mosquitto and redis-server: a lane's will (its connection ended
 * without a DISCONNECT) has its session taken over at once, its queued messages with it, while its
 * heartbeat still names the process the will came from; never a session a restarted process holds,
 * one already ended, one without a heartbeat, one of this process, nor a connection taken over before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IPublishPacket } from 'mqtt-packet';
import { createLogger } from '../../../core/src/log/logger.js';
import { SharedSubscriber } from '../../../lib/mqtt/shared-subscriber.js';
import { RedisConnection } from '../../../hub/src/state/redis-connection.js';
import { SessionAdoption, writeHeartbeat } from '../../../hub/src/state/session-adoption.js';
import { endClient, mqttClient, publish, sleep, waitFor } from '../../support/hub-helpers.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

const logger = createLogger({ level: 'silent' });
/** Long enough that no heartbeat of this test expires: a session taken over here was taken on its will. */
const HEARTBEAT_MS = 60_000;
/** The other processes' lanes of these tests, each subscribed in its own shared group to its own topic. */
const LANES = ['dead-0', 'restarted-0', 'ended-0', 'silent-0', 'busy-0'];
const laneFilter = (lane: string) => `$share/${lane}/q/${lane}`;

describe('SessionAdoption on a lane will (mosquitto, redis-server)', () => {
  let broker: Mosquitto;
  let server: RedisServer;
  let redis: RedisConnection;
  let adoption: SessionAdoption;
  const taken: string[] = [];

  before(async () => {
    [broker, server] = await Promise.all([startMosquitto({ maxQueuedMessages: 1000 }), startRedis()]);
    redis = new RedisConnection({ url: server.url, prefix: 'will-test:', logger, maxBackoffMs: 100 });
    await redis.ready();
    // This replica's lane; not started: no heartbeat rounds, only the wills act.
    adoption = new SessionAdoption({
      redis,
      clientId: 'me-0',
      replicaId: 'process-me',
      mqttUrl: broker.url,
      receiveMaximum: 100,
      logger,
      sessionFilters: () => LANES.map(laneFilter),
      take: (packet: IPublishPacket) => {
        taken.push(packet.payload.toString());
        return Promise.resolve();
      },
    });
  });

  after(async () => {
    await adoption.close(false);
    await redis.close();
    await Promise.all([broker.stop(), server.stop()]);
  });

  /** A lane of another process, subscribed to the group and gone (its session kept): what is published next queues for it. */
  const goneLane = async (lane: string, process: string, queued: string[]): Promise<void> => {
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: lane,
      sessionExpirySec: 3600,
      receiveMaximum: 100,
      logger,
      onMessage: () => Promise.resolve(),
    });
    await sub.start();
    await sub.subscribe({ filter: laneFilter(lane), id: 1 });
    await sub.close();
    await writeHeartbeat(redis, lane, process, HEARTBEAT_MS);
    const device = await mqttClient(broker.url, { clientId: `pub-${lane}` });
    for (const body of queued) await publish(device, `q/${lane}`, body);
    await endClient(device);
  };
  const claimed = async (lane: string) => (await redis.client.exists(redis.key('adopt', lane))) === 1;

  it('takes a dead lane’s session over at once, with what was queued for it, while its heartbeat still lives', async () => {
    await goneLane('dead-0', 'process-dead', ['q1', 'q2', 'q3']);
    await adoption.onWill({ lane: 'dead-0', replica: 'process-dead', connection: 'c-dead-0' });
    await waitFor('the queued messages taken', () => Promise.resolve(['q1', 'q2', 'q3'].every((q) => taken.includes(q))));
    assert.equal(await redis.client.exists(redis.key('replica', 'dead-0')), 1, 'its heartbeat had not expired');
    await waitFor('the session ended', async () => adoption.adopted === 1 && !(await redis.client.sismember(redis.key('replicas'), 'dead-0')));
  });

  it('leaves alone a session a restarted process holds, one already ended, one without a heartbeat, its own, and a connection taken over before', async () => {
    await goneLane('restarted-0', 'process-new', ['r1']);
    await adoption.onWill({ lane: 'restarted-0', replica: 'process-old', connection: 'c-restarted-0' });
    await goneLane('ended-0', 'process-ended', ['e1']);
    await redis.client.srem(redis.key('replicas'), 'ended-0'); // as a replica that took it over and ended it leaves it
    await adoption.onWill({ lane: 'ended-0', replica: 'process-ended', connection: 'c-ended-0' });
    await goneLane('silent-0', 'process-silent', ['s1']);
    await redis.client.del(redis.key('replica', 'silent-0')); // the heartbeat round's to take over
    await adoption.onWill({ lane: 'silent-0', replica: 'process-silent', connection: 'c-silent-0' });
    await adoption.onWill({ lane: 'me-0', replica: 'process-me', connection: 'c-me-0' });
    // dead-0's process beats again (it was alive after all: only its connection dropped); the same connection's will again is not acted on twice.
    await writeHeartbeat(redis, 'dead-0', 'process-dead', HEARTBEAT_MS);
    await adoption.onWill({ lane: 'dead-0', replica: 'process-dead', connection: 'c-dead-0' });
    await sleep(300);
    for (const lane of ['restarted-0', 'ended-0', 'silent-0', 'me-0', 'dead-0']) assert.equal(await claimed(lane), false, lane);
    assert.ok(!['r1', 'e1', 's1'].some((m) => taken.includes(m)), 'what is queued for them stays there');
    assert.equal(adoption.adopted, 1);
    // A later connection of that process that dies: taken over again.
    await adoption.onWill({ lane: 'dead-0', replica: 'process-dead', connection: 'c-dead-0-later' });
    await waitFor('the later connection’s session taken over and ended', () => Promise.resolve(adoption.adopted === 2));
  });

  it('a session taken over under a steady load still drains and ends: its subscriptions are ended first', async () => {
    await goneLane('busy-0', 'process-busy', ['b1']);
    const device = await mqttClient(broker.url, { clientId: 'pub-busy-steady' });
    let publishing = true;
    const load = (async () => {
      for (let n = 0; publishing; n++) {
        await publish(device, 'q/busy-0', `steady-${n}`);
        await sleep(20);
      }
    })();
    try {
      await adoption.onWill({ lane: 'busy-0', replica: 'process-busy', connection: 'c-busy-0' });
      // Before: the broker kept routing the group's share to it, it never went a second without a message.
      await waitFor('the session drained and ended while the load goes on', () => Promise.resolve(adoption.adopted === 3), 10_000);
      assert.ok(taken.includes('b1'), 'what was queued for it was taken');
    } finally {
      publishing = false;
      await load;
      await endClient(device);
    }
  });
});
