/**
 * TLS end to end beyond loopback (issue 32, "Done means"), inside a network namespace this test makes
 * (test/support/netns.ts: `unshare -n` as root, a veth pair lk0/lk1 with 10.201.0.1/24 and
 * 10.201.0.2/24), so nothing reaches the machine's own network. The hub listens on 10.201.0.1, a real
 * `lookout-edge` (simulated camera, encoder, recorder) serves its tools on 10.201.0.2; certificates
 * come from `lookout certs`' own code (a fleet CA, the hub's server certificate naming 10.201.0.1,
 * cam-1's naming 10.201.0.2):
 * - without a certificate the hub refuses to listen beyond loopback (config_invalid, tls_required);
 * - with one, plain HTTP to its port gets no answer, plain MQTT on 10.201.0.1:1883 is refused (plain
 *   MQTT listens on 127.0.0.1 only) and MQTT over TLS on 8883 takes a client that verifies the fleet CA;
 * - the device on mqtts:// to the embedded broker: its hello and telemetry reach the hub, a tool call
 *   through the hub reaches it over https pinned to its certificate, and a clip of its recording
 *   plays through the hub;
 * - the same device against mosquitto configured by `lookout broker-acl --conf` (TLS listeners on
 *   10.201.0.1) and a `lookout-hub` process on `mqtts://`, which trusts the fleet CA of its data dir
 *   for an external broker (no flag, no NODE_EXTRA_CA_CERTS): hello arrives, and a tool call goes through.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { busPassword, HUB_BUS_USER } from '../../../lib/auth/bus-acl.js';
import { deviceBusCredentials } from '../../../lib/auth/device-bus-credentials.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import type { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { deviceTlsPaths, hubServerTlsPaths } from '../../../lib/tls/tls-paths.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../../hub/src/state/memory-state-store.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { assertOwnNetns, INSIDE_NETNS, runFileInNetns } from '../../support/netns.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { terminate } from '../../support/server-process.js';
import { TEST_FLEET_SECRET, testHub, waitFor } from '../../support/hub-helpers.js';

const HUB_ADDRESS = '10.201.0.1';
const DEVICE_ADDRESS = '10.201.0.2';
const NETWORK = '10.201.0.0/24';
const DEVICE = 'cam-1';
const TOKEN = 'tls-end-to-end-hub-token';
/** mosquitto's listeners (part 3): not the embedded broker's 8883, which part 1's hub holds meanwhile. */
const MOSQUITTO_DEVICE_PORT = 9883;
const MOSQUITTO_ADMIN_PORT = 9884;

const NAMESPACE_SETUP = [
  'set -e',
  'ip link set lo up',
  'ip link add lk0 type veth peer name lk1',
  `ip addr add ${HUB_ADDRESS}/24 dev lk0`,
  `ip addr add ${DEVICE_ADDRESS}/24 dev lk1`,
  'ip link set lk0 up',
  'ip link set lk1 up',
  // Both addresses are this namespace's own, so the kernel would pick the destination itself as the
  // source of a connection between them: the hub would see the device connect from 10.201.0.1 (and
  // register it there). With each address's local route preferring the other as source, traffic
  // between them looks as it would between two machines: the device's from 10.201.0.2, the hub's
  // from 10.201.0.1.
  `ip route replace local ${HUB_ADDRESS} dev lk0 table local proto kernel scope host src ${DEVICE_ADDRESS}`,
  `ip route replace local ${DEVICE_ADDRESS} dev lk1 table local proto kernel scope host src ${HUB_ADDRESS}`,
].join('; ');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: any;
}

/** A request over https that trusts the fleet CA only (the hub's certificate must chain to it and name the address). */
function httpsCall(ca: string, method: string, url: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        ca,
        headers: { authorization: `Bearer ${TOKEN}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
        timeout: 20_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', reject);
        res.once('end', () => {
          const buf = Buffer.concat(chunks);
          let json: unknown;
          if ((res.headers['content-type'] ?? '').includes('json') && buf.length > 0) json = JSON.parse(buf.toString());
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, json });
        });
      },
    );
    req.once('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within 20 s`)));
    req.once('error', reject);
    req.end(payload);
  });
}

/** How a plain TCP connection to host:port ends: 'connected' or the socket error's code. */
function tcpOutcome(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** The hub's cached topics of one device, over https. */
async function deviceTopics(ca: string, hubUrl: string, id: string): Promise<Record<string, unknown>> {
  const r = await httpsCall(ca, 'GET', `${hubUrl}/fleet/mqtt/latest?device=${id}`);
  const devices = (r.json?.devices ?? {}) as Record<string, { topics?: Record<string, unknown> }>;
  return devices[id]?.topics ?? {};
}

/** ffprobe's codec of an mp4 (read from a file: from a pipe it stops at a faststart mp4's moov atom). */
function codecOf(dir: string, mp4: Buffer): string {
  const file = join(dir, `clip-${Date.now()}.mp4`);
  writeFileSync(file, mp4);
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'json', file]).toString();
  return (JSON.parse(out) as { streams: { codec_name: string }[] }).streams[0].codec_name;
}

if (!INSIDE_NETNS) {
  runFileInNetns(import.meta.url, 'TLS end to end: hub, device, embedded broker and mosquitto on a veth pair (10.201.0.0/24)', {
    setup: NAMESPACE_SETUP,
    env: { LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
    timeoutMs: 150_000,
  });
} else {
  const image = join(packageRoot(), 'test', 'fixtures', 'images', 'recording-camera.json');
  /** cam-1 as a process: mqtts to `mqtt`, its tool server on the private address (HTTPS there by default). */
  const startCam = (scratch: ScratchDir, mqtt: string): Promise<DeviceProcess> =>
    startDeviceProcess({
      deviceId: DEVICE,
      image,
      layer: 'layer0',
      mqtt,
      dataDir: join(scratch.dir, DEVICE),
      extraArgs: ['--tool-host', DEVICE_ADDRESS],
      readyTimeoutMs: 30_000,
      env: {
        LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET,
        LOOKOUT_MQTT_USERNAME: DEVICE,
        LOOKOUT_MQTT_PASSWORD: deviceBusCredentials(TEST_FLEET_SECRET, DEVICE).password,
        // The provisioned certificate is the one to serve: one that is missing is a test mistake.
        IDENTITY_CERT_GENERATE: '0',
        ENCODE_RESOLUTION: '320x240',
        ENCODE_FPS: '5',
        ENCODE_GOP: '5',
        CHUNK_SECONDS: '2',
      },
    });

  describe('TLS end to end beyond loopback', () => {
    let scratch: ScratchDir;
    let ca: string;
    let caPath: string;
    const hubDir = () => join(scratch.dir, 'hub');

    before(async () => {
      // Nothing below may listen on or send to the machine's own network.
      assertOwnNetns();
      scratch = await scratchDir('lookout-tls-e2e-');
      const report = await provisionFleetCertificates({
        caDir: join(scratch.dir, 'ca'),
        devices: [{ deviceId: DEVICE, dataRoot: join(scratch.dir, DEVICE), ips: [DEVICE_ADDRESS] }],
        hubDataDir: hubDir(),
        hubSans: [HUB_ADDRESS],
      });
      caPath = report.ca.certPath;
      ca = readFileSync(caPath, 'utf8');
    });
    after(async () => {
      await scratch?.cleanup();
    });

    it('a hub on 10.201.0.1 without a certificate refuses to start: config_invalid, tls_required', async () => {
      await assert.rejects(
        testHub({ host: HUB_ADDRESS, token: TOKEN, anonymousBroker: false, dataDir: join(scratch.dir, 'no-certs'), stateStore: new MemoryStateStore() }),
        (err: LookoutError) => {
          assert.equal(err.code, 'config_invalid', err.message);
          assert.equal((err.details as { reason?: string }).reason, 'tls_required');
          return true;
        },
      );
      assert.equal(await tcpOutcome(HUB_ADDRESS, 1883), 'ECONNREFUSED', 'nothing was left listening');
    });

    describe('the hub with its embedded broker, and a device on mqtts://', () => {
      let hub: RunningHub;
      let device: DeviceProcess;

      before(async () => {
        hub = await testHub({
          host: HUB_ADDRESS,
          token: TOKEN,
          anonymousBroker: false,
          brokerPort: 1883,
          brokerTlsPort: 8883,
          dataDir: hubDir(),
          stateStore: new MemoryStateStore(),
          deviceNetworks: [NETWORK],
          toolTimeoutMs: 10_000,
          env: {
            // Playback from the device's own tool server: no SSH credential of the test run's environment.
            DEVICE_PASSWORD: undefined,
            LOOKOUT_SSH_KEY_FILE: undefined,
            LOOKOUT_MEDIA_LOCAL_RECORDINGS: undefined,
            LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '10000',
            LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0',
          },
        });
      });
      after(async () => {
        await device?.stop();
        await hub?.close();
      });

      it('serves HTTPS only on 10.201.0.1: plain HTTP to its port gets no answer, https trusting the fleet CA does', async () => {
        assert.equal(hub.url, `https://${HUB_ADDRESS}:${hub.port}`);
        await assert.rejects(fetch(`http://${HUB_ADDRESS}:${hub.port}/health`, { signal: AbortSignal.timeout(10_000) }));
        const health = await httpsCall(ca, 'GET', `${hub.url}/health`);
        assert.equal(health.status, 200, health.body.toString());
      });

      it('refuses plain MQTT on 10.201.0.1:1883 (plain listens on 127.0.0.1 only) and takes MQTT over TLS on 8883', async () => {
        assert.deepEqual({ plain: hub.brokerListeners?.plain, tls: hub.brokerListeners?.tls?.port }, { plain: { host: '127.0.0.1', port: 1883 }, tls: 8883 });
        assert.equal(await tcpOutcome(HUB_ADDRESS, 1883), 'ECONNREFUSED');
        // Plain MQTT to the TLS port: no CONNACK ever (the broker waits for a handshake, then closes).
        await assert.rejects(
          MqttBus.connect({
            url: `mqtt://${HUB_ADDRESS}:8883`,
            clientId: 'cam-probe',
            ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-probe'),
            connectTimeoutMs: 3_000,
          }),
        );
        const bus = await MqttBus.connect({
          url: `mqtts://${HUB_ADDRESS}:8883`,
          clientId: 'cam-probe',
          ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-probe'),
          tls: { ca },
          connectTimeoutMs: 10_000,
        });
        await bus.close();
      });

      it("hears the device's hello and telemetry over TLS, and lists it with an https tool URL on its private address", async () => {
        device = await startCam(scratch, `mqtts://${HUB_ADDRESS}:8883`);
        assert.equal(device.ready.tool_url, `https://${DEVICE_ADDRESS}:${device.ready.ports.tools}/mcp`);
        const topics = await waitFor(
          'cam-1 hello and telemetry in the hub cache',
          async () => {
            const t = await deviceTopics(ca, hub.url, DEVICE);
            return t.hello && t.telemetry ? t : undefined;
          },
          30_000,
          200,
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${device.logs().slice(-3000)}`);
        });
        assert.ok(topics.hello);
        const registry = await httpsCall(ca, 'GET', `${hub.url}/fleet/registry`);
        const shadow = (registry.json.shadows as { device_id: string; tool_url: string | null }[]).find((s) => s.device_id === DEVICE);
        assert.equal(shadow?.tool_url, `https://${DEVICE_ADDRESS}:${device.ready.ports.tools}/mcp`, registry.body.toString());
      });

      it('forwards a tool call to the device over https, pinned to the certificate it announced', async () => {
        const r = await httpsCall(ca, 'POST', `${hub.url}/tools/call?target=${DEVICE}`, { tool: 'get_device_identity', arguments: {} });
        assert.equal(r.status, 200, r.body.toString());
        assert.equal(r.json.result.device_id, DEVICE);
        // The fingerprint the device announced is its provisioned certificate's, which the hub pinned.
        const announced = new X509Certificate(readFileSync(deviceTlsPaths(join(scratch.dir, DEVICE)).certPath)).fingerprint256;
        assert.equal(r.json.result.cert_fingerprint, announced);
      });

      it("plays a clip of the device's recording through the hub, fetched from the device over https", async () => {
        const chunks = await waitFor(
          'two complete chunks on the device',
          async () => {
            const r = await httpsCall(ca, 'POST', `${hub.url}/tools/call?target=${DEVICE}`, { tool: 'list_recording_chunks', arguments: { limit: 10 } });
            const list = (r.json?.result?.chunks ?? []) as { name: string }[];
            return list.length >= 2 ? list.map((c) => c.name) : undefined;
          },
          40_000,
          500,
        );
        const name = chunks[chunks.length - 1].replace('.h265', '.mp4');
        const clip = await httpsCall(ca, 'GET', `${hub.url}/media/clips/${DEVICE}/${name}`);
        assert.equal(clip.status, 200, clip.body.toString().slice(0, 500));
        assert.equal(clip.headers['content-type'], 'video/mp4');
        assert.equal(codecOf(scratch.dir, clip.body), 'h264');
      });
    });

    describe('mosquitto with the TLS listeners of `lookout broker-acl --conf`, a lookout-hub process and the device on mqtts://', () => {
      let mosquitto: Mosquitto;
      let hubProcess: ChildProcess | undefined;
      let hubUrl: string;
      const hubLog: string[] = [];
      let device: DeviceProcess | undefined;

      before(async () => {
        const dir = join(scratch.dir, 'mosquitto-conf');
        const file = (n: string) => join(dir, n);
        mkdirSync(dir, { recursive: true });
        const server = hubServerTlsPaths(hubDir());
        await promisify(execFile)(
          process.execPath,
          [
            join(packageRoot(), 'bin', 'lookout.js'),
            'broker-acl',
            ...['--out', file('acl'), '--password-file', file('passwd'), '--admin-password-file', file('passwd-admin'), '--conf', file('lookout.conf')],
            ...['--devices', DEVICE, '--bind', HUB_ADDRESS, '--certfile', server.certPath, '--keyfile', server.keyPath, '--cafile', caPath],
          ],
          { env: { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET } },
        );
        const snippet = readFileSync(file('lookout.conf'), 'utf8');
        assert.match(snippet, new RegExp(`^listener 8883 ${HUB_ADDRESS.replace(/\./g, '\\.')}$`, 'm'));
        mosquitto = await startMosquitto({
          listeners: (port) => [
            ...snippet
              .replace(/^listener 8883 /m, `listener ${MOSQUITTO_DEVICE_PORT} `)
              .replace(/^listener 8884 /m, `listener ${MOSQUITTO_ADMIN_PORT} `)
              .split('\n'),
            // What the helper waits on to know mosquitto is up: loopback, and it takes no one.
            `listener ${port} 127.0.0.1`,
            'allow_anonymous false',
          ],
        });

        // The hub as an operator runs it: its token and broker password in the environment; the
        // broker's certificate verified against the fleet CA `lookout certs --hub-data` put in its data dir.
        const hubData = join(scratch.dir, 'hub-process');
        await provisionFleetCertificates({ caDir: join(scratch.dir, 'ca'), hubDataDir: hubData, hubSans: [HUB_ADDRESS] });
        const child = spawn(
          process.execPath,
          [
            join(packageRoot(), 'bin', 'lookout-hub.js'),
            ...['--host', HUB_ADDRESS, '--port', '0', '--data-dir', hubData, '--device-networks', NETWORK],
            ...['--json', '--log-level', 'warn'],
          ],
          {
            env: {
              ...process.env,
              LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET,
              LOOKOUT_HUB_TOKEN: TOKEN,
              LOOKOUT_HUB_MQTT: `mqtts://${HUB_BUS_USER}:${busPassword(TEST_FLEET_SECRET, HUB_BUS_USER)}@${HUB_ADDRESS}:${MOSQUITTO_ADMIN_PORT}`,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        hubProcess = child;
        child.stderr?.on('data', (c: Buffer) => void hubLog.push(c.toString()));
        const line = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`lookout-hub printed no ready line within 30 s:\n${hubLog.join('')}`)), 30_000);
          createInterface({ input: child.stdout }).once('line', (l) => {
            clearTimeout(timer);
            resolve(l);
          });
          child.once('exit', (code) => reject(new Error(`lookout-hub exited (${code}) before it was ready:\n${hubLog.join('')}\n${mosquitto.logs()}`)));
        });
        hubUrl = (JSON.parse(line) as { url: string }).url;
      });
      after(async () => {
        await device?.stop();
        if (hubProcess) await terminate(hubProcess, 5_000);
        await mosquitto?.stop();
      });

      it('listens MQTT over TLS on 10.201.0.1 only: plain MQTT there is refused', async () => {
        assert.match(hubUrl, new RegExp(`^https://${HUB_ADDRESS.replace(/\./g, '\\.')}:\\d+$`));
        assert.equal(await tcpOutcome(HUB_ADDRESS, 1883), 'ECONNREFUSED');
        assert.equal(await tcpOutcome(HUB_ADDRESS, MOSQUITTO_DEVICE_PORT), 'connected');
      });

      it("hears the device's hello through mosquitto over TLS, and calls a tool on it over https", async () => {
        device = await startCam(scratch, `mqtts://${HUB_ADDRESS}:${MOSQUITTO_DEVICE_PORT}`);
        await waitFor('cam-1 hello in the hub cache, through mosquitto', async () => (await deviceTopics(ca, hubUrl, DEVICE)).hello, 30_000, 200).catch(
          (err: Error) => {
            throw new Error(
              `${err.message}\ndevice:\n${device!.logs().slice(-2000)}\nhub:\n${hubLog.join('').slice(-2000)}\nmosquitto:\n${mosquitto.logs().slice(-2000)}`,
            );
          },
        );
        const r = await waitFor(
          'a tool call through the hub process',
          async () => {
            const a = await httpsCall(ca, 'POST', `${hubUrl}/tools/call?target=${DEVICE}`, { tool: 'get_device_identity', arguments: {} });
            return a.status === 200 ? a : undefined;
          },
          15_000,
          250,
        );
        assert.equal(r.json.result.device_id, DEVICE);
        const registry = await httpsCall(ca, 'GET', `${hubUrl}/fleet/registry`);
        const shadow = (registry.json.shadows as { device_id: string; tool_url: string | null }[]).find((s) => s.device_id === DEVICE);
        assert.equal(shadow?.tool_url, `https://${DEVICE_ADDRESS}:${device.ready.ports.tools}/mcp`, registry.body.toString());
      });
    });
  });
}
