/**
 * Per-device identity on the bus, against the hub's embedded broker (its default) and against a real
 * mosquitto configured with what `lookout broker-acl` writes: a device's credentials cannot publish
 * under another device's topics, read another's cmd, or overwrite another device's retained status.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { MqttClient } from 'mqtt';
import { HUB_BUS_USER, OPERATOR_BUS_USER, busPassword } from '../../../lib/auth/bus-acl.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { freePort } from '../../support/free-port.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { api, callTool, endClient, mqttClient, msg, publish, sleep, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const run = promisify(execFile);
const lookout = join(packageRoot(), 'bin', 'lookout.js');
const creds = (user: string) => ({ username: user, password: busPassword(TEST_FLEET_SECRET, user), clientId: user });

/** Messages a client receives on `filter` while `during` runs, plus a grace period. */
async function received(client: MqttClient, filter: string, during: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  client.on('message', (topic, payload) => seen.push(`${topic} ${payload.toString()}`));
  await new Promise<void>((resolve) => client.subscribe(filter, { qos: 1 }, () => resolve()));
  await during();
  await sleep(300);
  return seen;
}

/** The subscription's granted QoS, or 128 when the broker refused it (MQTT.js reports that as an error). */
function grantedQos(client: MqttClient, filter: string): Promise<number> {
  return new Promise((resolve) => client.subscribe(filter, { qos: 1 }, (err, granted) => resolve(err ? 128 : (granted?.[0]?.qos ?? -1))));
}

/** Publishes and waits a moment: a refused publish disconnects (embedded) or is dropped (mosquitto). */
async function tryPublish(client: MqttClient, topic: string, payload: unknown, retain = false): Promise<void> {
  await Promise.race([publish(client, topic, payload, { retain }).catch(() => undefined), sleep(500)]);
}

/** A broker under test: where devices connect, and where the hub and operator tools do (the same URL on the embedded broker). */
interface BrokerUnderTest {
  url: string;
  adminUrl: string;
  close(): Promise<void>;
}

const isAdmin = (username: string | undefined) => username === HUB_BUS_USER || username === OPERATOR_BUS_USER;

function identitySuite(name: string, setup: () => Promise<BrokerUnderTest>) {
  describe(`bus identity on ${name}`, () => {
    let broker: BrokerUnderTest;
    const clients: MqttClient[] = [];
    const open = async (options: Parameters<typeof mqttClient>[1]) => {
      const c = await mqttClient(isAdmin(options?.username) ? broker.adminUrl : broker.url, options);
      clients.push(c);
      return c;
    };
    before(async () => {
      broker = await setup();
    });
    after(async () => {
      for (const c of clients) c.end(true);
      await broker.close();
    });

    it('refuses anonymous clients, wrong passwords, another device’s password and another device’s client id', async () => {
      await assert.rejects(mqttClient(broker.url, { clientId: 'cam-1' }));
      await assert.rejects(mqttClient(broker.url, { ...creds('cam-1'), password: 'not-the-password' }));
      await assert.rejects(mqttClient(broker.url, { username: 'cam-1', password: busPassword(TEST_FLEET_SECRET, 'cam-2'), clientId: 'cam-1' }));
      if (name === 'the embedded broker') await assert.rejects(mqttClient(broker.url, { ...creds('cam-1'), clientId: 'cam-2' }));
      if (broker.adminUrl !== broker.url) {
        // mosquitto: a device cannot log in where client ids are free, nor the hub where they are bound to the user.
        await assert.rejects(mqttClient(broker.adminUrl, { ...creds('cam-1'), clientId: 'cam-2' }));
        await assert.rejects(mqttClient(broker.url, creds(HUB_BUS_USER)));
      }
    });

    it("a device using another device's client id does not end that device's session", async () => {
      const victim = await open({
        ...creds('cam-5'),
        will: { topic: 'devices/cam-5/status', payload: Buffer.from('{"state":"offline"}'), qos: 1, retain: true },
      });
      let kicked = false;
      victim.on('close', () => (kicked = true));
      // Refused by the embedded broker; mosquitto (use_username_as_clientid) makes it cam-1's own session.
      await mqttClient(broker.url, { ...creds('cam-1'), clientId: 'cam-5' }).then(
        (c) => clients.push(c),
        () => undefined,
      );
      await sleep(500);
      assert.equal(kicked, false);
      assert.equal(victim.connected, true);
    });

    it('two operator tools and two hubs connect at once, each with its own client id, and all keep their sessions', async () => {
      const tools = [
        await open({ ...creds(OPERATOR_BUS_USER), clientId: 'lookout-tap-a' }),
        await open({ ...creds(OPERATOR_BUS_USER), clientId: 'lookout-tap-b' }),
        await open({ ...creds(HUB_BUS_USER), clientId: 'lookout-hub-one' }),
        await open({ ...creds(HUB_BUS_USER), clientId: 'lookout-hub-two' }),
      ];
      const closed = new Set<number>();
      tools.forEach((c, i) => c.on('close', () => closed.add(i)));
      const heard = tools.map(() => [] as string[]);
      await Promise.all(
        tools.map(
          (c, i) =>
            new Promise<void>((resolve) => {
              c.on('message', (topic) => heard[i].push(topic));
              c.subscribe('devices/cam-1/cmd/#', { qos: 1 }, () => resolve());
            }),
        ),
      );
      await publish(tools[0], 'devices/cam-1/cmd/ping', {});
      await waitFor('every tool and hub heard the command', () => heard.every((h) => h.includes('devices/cam-1/cmd/ping')));
      await sleep(300);
      assert.deepEqual([...closed], []);
      assert.ok(tools.every((c) => c.connected));
    });

    // On mosquitto only: the CLI's starts are slow on a loaded machine, and the embedded broker takes the same derived passwords.
    if (name !== 'the embedded broker')
      it('hands out the hub’s, the operator’s and a device’s bus passwords through `lookout bus-credentials --reveal`, and only then', async () => {
        const env = { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET };
        const cli = (...args: string[]) => run(process.execPath, [lookout, 'bus-credentials', ...args], { env });
        // One CLI start each, side by side: the CLI's start dominates this test.
        const [hidden, operator, device, hubUrl, reserved] = await Promise.all([
          cli('hub'),
          cli('operator', '--reveal', '--json'),
          cli('cam-2', '--reveal'),
          cli('hub', '--reveal', '--url', broker.adminUrl),
          cli('lookout-tap-1', '--reveal').then(
            () => 'issued',
            (err: Error) => err.message,
          ),
        ]);
        assert.equal(hidden.stdout, `LOOKOUT_MQTT_USERNAME=${HUB_BUS_USER}\n`);
        assert.ok(!`${hidden.stdout}${hidden.stderr}`.includes(busPassword(TEST_FLEET_SECRET, HUB_BUS_USER)));
        assert.match(hidden.stderr, /--reveal prints it/);
        assert.match(reserved, /device_id_reserved/);
        const op = JSON.parse(operator.stdout) as { username: string; password: string };
        assert.equal(op.username, OPERATOR_BUS_USER);
        await endClient(await open({ ...op, clientId: 'lookout-tap-cli' }));
        const env2 = Object.fromEntries(
          device.stdout
            .trim()
            .split('\n')
            .map((l) => l.split('=') as [string, string]),
        );
        await endClient(await open({ username: env2.LOOKOUT_MQTT_USERNAME, password: env2.LOOKOUT_MQTT_PASSWORD, clientId: 'cam-2' }));
        const url = new URL(hubUrl.stdout.trim());
        assert.equal(url.username, HUB_BUS_USER);
        await endClient(await open({ username: url.username, password: decodeURIComponent(url.password), clientId: 'lookout-hub-cli' }));
      });

    it("a device cannot overwrite another device's retained status, nor publish under its topics", async () => {
      const cam2 = await open(creds('cam-2'));
      await publish(cam2, 'devices/cam-2/status', msg.status('cam-2', 'online'), { retain: true });
      const hub = await open(creds(HUB_BUS_USER));
      const seen = await received(hub, 'devices/#', async () => {
        const cam1 = await open(creds('cam-1'));
        await publish(cam1, 'devices/cam-1/status', msg.status('cam-1', 'online'), { retain: true });
        await tryPublish(cam1, 'devices/cam-2/status', msg.status('cam-2', 'offline'), true);
        const again = await open(creds('cam-1'));
        await tryPublish(again, 'devices/cam-2/hello', msg.hello('cam-2', ['127.0.0.1'], 9));
        await tryPublish(again, 'shadow/cam-2/telemetry', msg.telemetry());
        // A made-up topic under its own prefix would be a broker-side store no cache bound covers.
        const fourth = await open(creds('cam-1'));
        await tryPublish(fourth, 'devices/cam-1/junk/r1', 'x'.repeat(1000), true);
      });
      assert.ok(
        seen.some((m) => m.startsWith('devices/cam-1/status ')),
        seen.join('\n'),
      );
      assert.deepEqual(
        seen.filter((m) => m.includes('"offline"') || m.startsWith('devices/cam-2/hello') || m.startsWith('devices/cam-1/junk')),
        [],
      );
      // A fresh subscriber gets cam-2's retained status as cam-2 left it.
      const late = await open(creds(OPERATOR_BUS_USER));
      const retained = await received(late, 'devices/cam-2/status', async () => undefined);
      assert.equal(retained.length, 1);
      assert.match(retained[0], /"online"/);
    });

    it("a device reads its own cmd topics and not another's", async () => {
      const cam1 = await open(creds('cam-1'));
      assert.equal(await grantedQos(cam1, 'devices/cam-1/cmd/#'), 1);
      // The embedded broker refuses the subscription; mosquitto grants it and delivers nothing it may not read.
      const refused = name === 'the embedded broker' ? 128 : 1;
      assert.equal(await grantedQos(cam1, 'devices/cam-2/cmd/#'), refused);
      assert.equal(await grantedQos(cam1, 'devices/+/cmd/#'), refused);
      const operator = await open(creds(OPERATOR_BUS_USER));
      const seen = await received(cam1, 'devices/cam-1/cmd/#', async () => {
        await publish(operator, 'devices/cam-2/cmd/tool', { tool: 'get_firmware_status', arguments: {} });
        await publish(operator, 'devices/cam-1/cmd/ping', {});
      });
      assert.deepEqual(
        seen.map((m) => m.split(' ')[0]),
        ['devices/cam-1/cmd/ping'],
      );
    });

    it("a device reads every device's hello (the peer directory) and nothing else of theirs", async () => {
      const cam1 = await open(creds('cam-1'));
      const cam2 = await open(creds('cam-2'));
      assert.equal(await grantedQos(cam1, 'devices/+/hello'), 1);
      const seen = await received(cam1, 'devices/+/hello', async () => {
        await publish(cam2, 'devices/cam-2/hello', { device_id: 'cam-2' });
      });
      assert.deepEqual(
        seen.map((m) => m.split(' ')[0]),
        ['devices/cam-2/hello'],
      );
      const refused = name === 'the embedded broker' ? 128 : 1;
      assert.equal(await grantedQos(cam1, 'devices/+/status'), refused);
    });
  });
}

identitySuite('the embedded broker', async () => {
  const hub = await testHub({ anonymousBroker: false });
  return { url: hub.brokerUrl, adminUrl: hub.brokerUrl, close: () => hub.close() };
});

identitySuite('mosquitto with the listeners, ACL and passwords of `lookout broker-acl`', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lookout-acl-'));
  const env = { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET };
  const file = (name: string) => join(dir, name);
  await run(
    process.execPath,
    [
      lookout,
      'broker-acl',
      ...['--out', file('acl'), '--password-file', file('passwd'), '--admin-password-file', file('passwd-admin'), '--conf', file('lookout.conf')],
      ...['--devices', 'cam-1,cam-2,cam-5'],
    ],
    { env },
  );
  const snippet = readFileSync(file('lookout.conf'), 'utf8');
  // The snippet as written, its default ports swapped for free ones.
  const adminPort = await freePort();
  const mosquitto: Mosquitto = await startMosquitto({
    listeners: (port) =>
      snippet
        .replace(/^listener 1883 /m, `listener ${port} `)
        .replace(/^listener 1884 /m, `listener ${adminPort} `)
        .split('\n'),
  });
  return {
    url: mosquitto.url,
    adminUrl: `mqtt://127.0.0.1:${adminPort}`,
    close: async () => {
      await mosquitto.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('a hub with per-device identity', () => {
  let hub: RunningHub;
  before(async () => {
    hub = await testHub({ anonymousBroker: false });
  });
  after(async () => {
    await hub.close();
  });

  it('hears a device that authenticates as itself, and no forged hello reaches its registry', async () => {
    const cam = await mqttClient(hub.brokerUrl, creds('cam-9'));
    await publish(cam, 'devices/cam-9/hello', msg.hello('cam-9', ['127.0.0.1'], 9));
    await publish(cam, 'devices/cam-9/status', msg.status('cam-9'), { retain: true });
    await waitFor('cam-9 in the cache', async () => (await api(hub.url, '/fleet/mqtt/latest')).body.devices['cam-9']);
    await tryPublish(cam, 'devices/cam-7/hello', msg.hello('cam-7', ['127.0.0.1'], 9));
    const answer = await callTool(hub.url, 'cam-7', 'get_firmware_status');
    assert.equal(answer.status, 404, answer.text);
    cam.end(true); // the broker dropped it for the forged hello
  });

  it('hands out device credentials through `lookout device-credentials`, refusing the reserved names', async () => {
    const env = { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET };
    const { stdout } = await run(process.execPath, [lookout, 'device-credentials', 'cam-4', '--json'], { env });
    const given = JSON.parse(stdout) as { LOOKOUT_MQTT_USERNAME: string; LOOKOUT_MQTT_PASSWORD: string };
    const cam = await mqttClient(hub.brokerUrl, { username: given.LOOKOUT_MQTT_USERNAME, password: given.LOOKOUT_MQTT_PASSWORD, clientId: 'cam-4' });
    await endClient(cam);
    await assert.rejects(run(process.execPath, [lookout, 'device-credentials', HUB_BUS_USER], { env }), /cannot be a device's bus identity/);
  });

  it("refuses the hub's and the operator's ids as a device identity, when issued and at the broker", async () => {
    // What the hub's client id used to be, from its host name and data dir: anyone could compute it.
    const predictable = `lookout-hub-${hostname()}-${createHash('sha256').update(resolve('/tmp/lookout-hub-tests-nonexistent')).digest('hex').slice(0, 8)}`;
    const env = { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET };
    for (const id of [predictable, 'lookout-operator-1', 'Lookout-Tap-1']) {
      await assert.rejects(run(process.execPath, [lookout, 'device-credentials', id], { env }), /device_id_reserved/);
      assert.throws(() => hub.deviceCredentials(id), { code: 'device_id_reserved' });
    }
    // Credentials derived by hand from the fleet secret (or issued before) are refused by the broker.
    await assert.rejects(mqttClient(hub.brokerUrl, creds(predictable)), /Bad username or password|Not authorized/i);
    // Nor may the operator take a client id of the hub's.
    await assert.rejects(mqttClient(hub.brokerUrl, { ...creds(OPERATOR_BUS_USER), clientId: predictable }), /Not authorized/i);
    assert.equal((await api(hub.url, '/health')).body.bus_connected, true);
  });
});
