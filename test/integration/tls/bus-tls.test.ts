/**
 * The bus over TLS: the hub's embedded broker listening MQTT over TLS with the fleet CA's hub server
 * certificate (plain MQTT kept on loopback), devices on `mqtts://` verifying the fleet CA, a broker
 * certificate of another CA refused with a typed error, the TLS listener's bounds, and mosquitto
 * with what `lookout broker-acl --conf` writes for TLS. Real sockets on 127.0.0.1, real mosquitto,
 * certificates from `lookout certs`' own code.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { busPassword, HUB_BUS_USER } from '../../../lib/auth/bus-acl.js';
import { deviceBusCredentials } from '../../../lib/auth/device-bus-credentials.js';
import type { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { hubServerTlsPaths } from '../../../lib/tls/tls-paths.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../../hub/src/state/memory-state-store.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../support/fleet-certs.js';
import { freePort } from '../../support/free-port.js';
import { startMosquitto } from '../../support/mosquitto.js';
import { startDeviceProcess } from '../../support/device-process.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { api, msg, TEST_FLEET_SECRET, testHub, waitFor } from '../../support/hub-helpers.js';

const run = promisify(execFile);

/** A device's fleet certificate and key, as MqttBus TLS settings beside the CA it trusts. */
function clientCertificate(certs: TestFleetCerts, id: string) {
  const d = certs.device(id);
  return { cert: readFileSync(d.certPath), key: readFileSync(d.keyPath) };
}
const TOKEN = 'bus-tls-test-token';

/** Resolves with how long the server took to close a TCP connection that never starts a handshake. */
function silentSocketClosedAfter(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = tcpConnect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(Date.now() - started));
    setTimeout(() => reject(new Error('the silent socket was not closed within 20 s')), 20_000).unref();
  });
}

describe('the bus over TLS', () => {
  let scratch: ScratchDir;
  let fleet: TestFleetCerts;
  let foreign: TestFleetCerts;
  let hubDir: string;
  let foreignHubDir: string;

  before(async () => {
    scratch = await scratchDir('lookout-bus-tls-');
    hubDir = join(scratch.dir, 'hub');
    foreignHubDir = join(scratch.dir, 'foreign-hub');
    fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      hubDataDir: hubDir,
      devices: [
        { id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1') },
        { id: 'cam-2', dataRoot: join(scratch.dir, 'cam-2') },
      ],
    });
    foreign = await provisionTestFleetCerts(join(scratch.dir, 'foreign-ca'), {
      hubDataDir: foreignHubDir,
      devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'foreign-cam-1') }],
    });
  });
  after(async () => {
    await scratch?.cleanup();
  });

  describe('a hub whose broker host is beyond loopback', () => {
    let hub: RunningHub;
    before(async () => {
      hub = await testHub({
        anonymousBroker: false,
        token: TOKEN,
        host: '127.0.0.1',
        brokerHost: '0.0.0.0',
        brokerTlsPort: 0,
        dataDir: hubDir,
        stateStore: new MemoryStateStore(),
      });
    });
    after(async () => {
      await hub?.close();
    });

    it('listens MQTT over TLS there and plain MQTT on 127.0.0.1 only', () => {
      assert.deepEqual(
        { plain: hub.brokerListeners?.plain.host, tls: hub.brokerListeners?.tls?.host },
        { plain: '127.0.0.1', tls: '0.0.0.0' },
        'the plain listener must stay on loopback when the broker host is 0.0.0.0',
      );
    });

    it('hears a device on mqtts:// that verifies the fleet CA: its hello and telemetry arrive', async () => {
      const tls = hub.brokerListeners!.tls!;
      const bus = await MqttBus.connect({
        url: `mqtts://127.0.0.1:${tls.port}`,
        clientId: 'cam-1',
        ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1'),
        tls: { ca: fleet.caCertPem },
        connectTimeoutMs: 10_000,
      });
      try {
        await bus.publish('devices/cam-1/hello', JSON.stringify(msg.hello('cam-1', ['127.0.0.1'], 9)));
        await bus.publish('devices/cam-1/status', JSON.stringify(msg.status('cam-1')), { retain: true });
        await bus.publish('devices/cam-1/telemetry', JSON.stringify(msg.telemetry(51.5)));
        const device = await waitFor('cam-1 telemetry in the hub cache', async () => {
          const devices = (await api(hub.url, '/fleet/mqtt/latest?device=cam-1', { token: TOKEN })).body.devices as
            Record<string, { topics?: Record<string, unknown> }> | undefined;
          return devices?.['cam-1']?.topics?.telemetry ? devices['cam-1'] : undefined;
        });
        assert.ok(device.topics?.hello, `the hello arrived too: ${JSON.stringify(Object.keys(device.topics ?? {}))}`);
      } finally {
        await bus.close();
      }
    });
    it('hears a lookout-edge on --mqtt mqtts:// that verifies the fleet CA provisioned under its data root', async () => {
      const device = await startDeviceProcess({
        deviceId: 'cam-2',
        mqtt: hub.brokerListeners!.tls!.url,
        dataDir: join(scratch.dir, 'cam-2'),
        env: { LOOKOUT_MQTT_USERNAME: 'cam-2', LOOKOUT_MQTT_PASSWORD: deviceBusCredentials(TEST_FLEET_SECRET, 'cam-2').password },
      });
      try {
        await waitFor(
          'cam-2 hello in the hub cache',
          async () => {
            const devices = (await api(hub.url, '/fleet/mqtt/latest?device=cam-2', { token: TOKEN })).body.devices as
              Record<string, { topics?: Record<string, unknown> }> | undefined;
            return devices?.['cam-2']?.topics?.hello;
          },
          30_000,
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${device.logs().slice(-3000)}`);
        });
      } finally {
        await device.stop();
      }
    });
    it('takes a device by its fleet certificate instead of a password, under the same ACL and client id rule', async () => {
      const url = hub.brokerListeners!.tls!.url;
      const tls = { ca: fleet.caCertPem, ...clientCertificate(fleet, 'cam-1') };
      const bus = await MqttBus.connect({ url, clientId: 'cam-1', tls, connectTimeoutMs: 10_000 });
      try {
        await bus.publish('devices/cam-1/hello', JSON.stringify(msg.hello('cam-1', ['127.0.0.1'], 9)));
        await bus.publish('devices/cam-1/events', JSON.stringify({ timestamp: new Date().toISOString(), type: 'by_certificate' }));
        await waitFor('the event in the hub cache', async () => {
          const devices = (await api(hub.url, '/fleet/mqtt/latest?device=cam-1', { token: TOKEN })).body.devices as
            Record<string, { topics?: Record<string, unknown> }> | undefined;
          return devices?.['cam-1']?.topics?.events;
        });
      } finally {
        await bus.close();
      }
      const refused = (options: Partial<Parameters<typeof MqttBus.connect>[0]>) =>
        assert.rejects(MqttBus.connect({ url, clientId: 'cam-1', tls, connectTimeoutMs: 10_000, ...options }), (err: LookoutError) => {
          assert.equal(err.code, 'bus_auth_refused', err.message);
          return true;
        });
      // cam-1's certificate is not cam-2's, and it does not make another user name's password its own.
      await refused({ clientId: 'cam-2' });
      await refused({ clientId: 'cam-2', ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-2') });
      // A certificate of another CA is refused, even beside the right password.
      await refused({ tls: { ca: fleet.caCertPem, ...clientCertificate(foreign, 'cam-1') }, ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1') });
    });
  });

  it('refuses to start beyond loopback without a certificate unless --insecure-mqtt says plain is meant', async () => {
    const empty = join(scratch.dir, 'no-certs');
    const options = { anonymousBroker: false, token: TOKEN, host: '127.0.0.1', brokerHost: '0.0.0.0', dataDir: empty, stateStore: new MemoryStateStore() };
    await assert.rejects(testHub(options), (err: LookoutError) => {
      assert.equal(err.code, 'config_invalid');
      assert.equal((err.details as { reason?: string }).reason, 'tls_required');
      return true;
    });
    const lines: { msg: string }[] = [];
    const { createLogger } = await import('../../../core/src/log/logger.js');
    const logger = createLogger({ level: 'warn', destination: { write: (s: string) => void lines.push(JSON.parse(s) as { msg: string }) } });
    const hub = await testHub({ ...options, insecureMqtt: true, logger });
    try {
      assert.equal(hub.brokerListeners?.plain.host, '0.0.0.0');
      assert.equal(hub.brokerListeners?.tls, undefined);
      assert.ok(
        lines.some((l) => l.msg.startsWith('--insecure-mqtt')),
        `warned at start: ${JSON.stringify(lines.map((l) => l.msg))}`,
      );
    } finally {
      await hub.close();
    }
  });

  describe('an embedded broker serving a certificate of another CA', () => {
    let broker: EmbeddedBroker;
    before(async () => {
      const paths = hubServerTlsPaths(foreignHubDir);
      broker = await EmbeddedBroker.start({
        port: 0,
        auth: { fleetSecret: TEST_FLEET_SECRET },
        tls: { port: 0, certPath: paths.certPath, keyPath: paths.keyPath, watchFiles: false, reloadOnSighup: false },
      });
    });
    after(async () => {
      await broker?.close();
    });

    it('is refused by a device that verifies the fleet CA, with bus_unreachable and a tls reason', async () => {
      const started = Date.now();
      await assert.rejects(
        MqttBus.connect({
          url: broker.tls!.url,
          clientId: 'cam-1',
          ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1'),
          tls: { ca: fleet.caCertPem },
          connectTimeoutMs: 30_000,
        }),
        (err: LookoutError) => {
          assert.equal(err.code, 'bus_unreachable');
          assert.equal((err.details as { reason?: string }).reason, 'tls');
          assert.match(String((err.details as { tls_code?: string }).tls_code), /CERT|SIGNATURE|ISSUER/);
          return true;
        },
      );
      // At the first failed handshake, not after the 30 s of trying.
      assert.ok(Date.now() - started < 20_000, 'failed at once');
    });

    it('keeps trying a device that waits for ever, logging the TLS failure as an error once', async () => {
      const logged: { level: string; obj: Record<string, unknown> }[] = [];
      const sink = (level: string) => (obj: Record<string, unknown>) => void logged.push({ level, obj });
      const bus = MqttBus.create({
        url: broker.tls!.url,
        clientId: 'cam-1',
        ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1'),
        tls: { ca: fleet.caCertPem },
        connectTimeoutMs: Infinity,
        reconnect: { initialMs: 50, maxMs: 100 },
        logger: { debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') },
      });
      const started = bus.start().catch(() => undefined);
      try {
        await waitFor('three TLS failures', () => logged.filter((l) => l.obj.reason === 'tls').length >= 3);
        const errors = logged.filter((l) => l.obj.reason === 'tls' && l.level === 'error');
        assert.equal(errors.length, 1, 'one error line, the retries at debug');
        assert.equal(bus.stats().tlsFailure?.code, errors[0].obj.tls_code);
      } finally {
        await bus.close();
        await started;
      }
    });

    it('refuses TLS settings with a plain mqtt:// url', () => {
      assert.throws(
        () => MqttBus.create({ url: broker.url, clientId: 'cam-1', tls: { ca: fleet.caCertPem } }),
        (err: LookoutError) => err.code === 'config_invalid',
      );
    });
  });

  it('serves a certificate swapped on disk to new connections, without a restart', async () => {
    const dir = join(scratch.dir, 'reload-hub');
    await provisionTestFleetCerts(fleet.caDir, { hubDataDir: dir });
    const paths = hubServerTlsPaths(dir);
    const broker = await EmbeddedBroker.start({
      port: 0,
      tls: { port: 0, certPath: paths.certPath, keyPath: paths.keyPath, reloadDebounceMs: 50, reloadOnSighup: false },
    });
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const s = tlsConnect({ port: broker.tls!.port, host: '127.0.0.1', ca: fleet.caCertPem }, () => {
          resolve(s.getPeerCertificate().fingerprint256);
          s.destroy();
        });
        s.once('error', reject);
      });
    try {
      const first = await served();
      assert.equal(first, broker.tls!.fingerprint());
      await provisionFleetCertificates({ caDir: fleet.caDir, hubDataDir: dir, force: true });
      const renewed = new X509Certificate(readFileSync(paths.certPath)).fingerprint256;
      assert.notEqual(renewed, first);
      await waitFor('the renewed certificate served', async () => (await served()) === renewed);
    } finally {
      await broker.close();
    }
  });

  describe('the TLS listener keeps the broker’s bounds', () => {
    let broker: EmbeddedBroker;
    before(async () => {
      const paths = hubServerTlsPaths(hubDir);
      broker = await EmbeddedBroker.start({
        port: 0,
        auth: { fleetSecret: TEST_FLEET_SECRET },
        maxConnections: 50,
        maxConnectionsPerAddress: 3,
        tls: { port: 0, certPath: paths.certPath, keyPath: paths.keyPath, handshakeTimeoutMs: 300, watchFiles: false, reloadOnSighup: false },
      });
    });
    after(async () => {
      await broker?.close();
    });

    it('closes a socket that never completes a handshake at the deadline', async () => {
      const tookMs = await silentSocketClosedAfter(broker.tls!.port);
      assert.ok(tookMs >= 250, `closed after ${tookMs} ms, not before the deadline`);
    });

    it('counts TLS and plain connections from one address together against the per-address cap', async () => {
      // Three TLS connections whose handshakes finished: the broker holds (and has counted) each.
      const open = await Promise.all(
        [1, 2, 3].map(
          () =>
            new Promise<TLSSocket>((resolve, reject) => {
              const s = tlsConnect({ port: broker.tls!.port, host: '127.0.0.1', ca: fleet.caCertPem }, () => resolve(s));
              s.once('error', reject);
            }),
        ),
      );
      try {
        // A fourth, on the plain listener, is over the cap of 3: closed at once, not at the 10 s CONNECT deadline.
        const fourth = await silentSocketClosedAfter(broker.port);
        assert.ok(fourth < 5_000, `the fourth connection was closed after ${fourth} ms`);
      } finally {
        for (const s of open) s.destroy();
      }
    });
  });

  it('mosquitto with `lookout broker-acl --conf --require-certificate` takes a device by its fleet certificate and refuses another CA’s', async () => {
    const dir = join(scratch.dir, 'mosquitto-certs');
    const file = (name: string) => join(dir, name);
    const server = hubServerTlsPaths(hubDir);
    await run('mkdir', ['-p', dir]);
    await run(
      process.execPath,
      [
        join(packageRoot(), 'bin', 'lookout.js'),
        'broker-acl',
        ...['--out', file('acl'), '--password-file', file('passwd'), '--admin-password-file', file('passwd-admin'), '--conf', file('lookout.conf')],
        ...['--devices', 'cam-1', '--bind', '127.0.0.1', '--certfile', server.certPath, '--keyfile', server.keyPath, '--cafile', fleet.caCertPath],
        '--require-certificate',
      ],
      { env: { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET } },
    );
    const snippet = readFileSync(file('lookout.conf'), 'utf8');
    const adminPort = await freePort();
    const mosquitto = await startMosquitto({
      listeners: (port) =>
        snippet
          .replace(/^listener 8883 /m, `listener ${port} `)
          .replace(/^listener 8884 /m, `listener ${adminPort} `)
          .split('\n'),
    });
    let hubSide: MqttBus | undefined;
    let device: MqttBus | undefined;
    try {
      hubSide = await MqttBus.connect({
        url: `mqtts://127.0.0.1:${adminPort}`,
        clientId: `${HUB_BUS_USER}-tls-test`,
        username: HUB_BUS_USER,
        password: busPassword(TEST_FLEET_SECRET, HUB_BUS_USER),
        tls: { ca: fleet.caCertPem },
      });
      const heard: string[] = [];
      await hubSide.subscribe('devices/+/telemetry', (topic) => void heard.push(topic));
      device = await MqttBus.connect({
        url: `mqtts://127.0.0.1:${mosquitto.port}`,
        clientId: 'cam-1',
        tls: { ca: fleet.caCertPem, ...clientCertificate(fleet, 'cam-1') },
      });
      await device.publish('devices/cam-1/telemetry', JSON.stringify(msg.telemetry()));
      await waitFor('the telemetry at the hub side', () => heard.includes('devices/cam-1/telemetry'));
      await assert.rejects(
        MqttBus.connect({
          url: `mqtts://127.0.0.1:${mosquitto.port}`,
          clientId: 'cam-1',
          tls: { ca: fleet.caCertPem, ...clientCertificate(foreign, 'cam-1') },
          connectTimeoutMs: 10_000,
        }),
        (err: LookoutError) => {
          assert.equal(err.code, 'bus_unreachable', err.message);
          assert.equal((err.details as { reason?: string }).reason, 'tls', err.message);
          return true;
        },
      );
    } finally {
      await device?.close();
      await hubSide?.close();
      await mosquitto.stop();
    }
  });

  it('mosquitto with the TLS listeners of `lookout broker-acl --conf` takes a device on mqtts:// that verifies the fleet CA', async () => {
    const dir = join(scratch.dir, 'mosquitto');
    const file = (name: string) => join(dir, name);
    const server = hubServerTlsPaths(hubDir);
    const env = { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET };
    await run('mkdir', ['-p', dir]);
    await run(
      process.execPath,
      [
        join(packageRoot(), 'bin', 'lookout.js'),
        'broker-acl',
        ...['--out', file('acl'), '--password-file', file('passwd'), '--admin-password-file', file('passwd-admin'), '--conf', file('lookout.conf')],
        ...['--devices', 'cam-1', '--bind', '127.0.0.1', '--certfile', server.certPath, '--keyfile', server.keyPath, '--cafile', fleet.caCertPath],
      ],
      { env },
    );
    const snippet = readFileSync(file('lookout.conf'), 'utf8');
    assert.match(snippet, /^cafile /m);
    const adminPort = await freePort();
    const mosquitto = await startMosquitto({
      listeners: (port) =>
        snippet
          .replace(/^listener 8883 /m, `listener ${port} `)
          .replace(/^listener 8884 /m, `listener ${adminPort} `)
          .split('\n'),
    });
    const tls = { ca: fleet.caCertPem };
    let hubSide: MqttBus | undefined;
    let device: MqttBus | undefined;
    try {
      hubSide = await MqttBus.connect({
        url: `mqtts://127.0.0.1:${adminPort}`,
        clientId: `${HUB_BUS_USER}-tls-test`,
        username: HUB_BUS_USER,
        password: busPassword(TEST_FLEET_SECRET, HUB_BUS_USER),
        tls,
      });
      const heard: string[] = [];
      await hubSide.subscribe('devices/+/telemetry', (topic) => void heard.push(topic));
      device = await MqttBus.connect({
        url: `mqtts://127.0.0.1:${mosquitto.port}`,
        clientId: 'cam-1',
        ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1'),
        tls,
      });
      await device.publish('devices/cam-1/telemetry', JSON.stringify(msg.telemetry()));
      await waitFor('the telemetry at the hub side', () => heard.includes('devices/cam-1/telemetry'));
      // The same listener refuses a device that trusts only another CA.
      await assert.rejects(
        MqttBus.connect({
          url: `mqtts://127.0.0.1:${mosquitto.port}`,
          clientId: 'cam-1',
          ...deviceBusCredentials(TEST_FLEET_SECRET, 'cam-1'),
          tls: { ca: foreign.caCertPem },
        }),
        (err: LookoutError) => err.code === 'bus_unreachable' && (err.details as { reason?: string }).reason === 'tls',
      );
    } finally {
      await device?.close();
      await hubSide?.close();
      await mosquitto.stop();
    }
  });
});
