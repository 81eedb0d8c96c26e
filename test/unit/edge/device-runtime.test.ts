import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { HelloMessageSchema } from '../../../core/src/contracts/hello-message.js';
import { HealthMessageSchema } from '../../../core/src/contracts/health-message.js';
import { StatusMessageSchema } from '../../../core/src/contracts/status-message.js';
import { ResponseMessageSchema } from '../../../core/src/contracts/responses-message.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { startDevice, type DeviceHandle } from '../../../edge/src/device-runtime.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startToolServer } from '../../../edge/src/tool-server.js';
import { BASE_TOOLS, baseImage } from '../../support/device-image.js';
import { freePort } from '../../support/free-port.js';

const logger = createLogger({ level: 'silent' });

function messages(bus: MemoryBus, topic: string): unknown[] {
  return bus.published.filter((m) => m.topic === topic).map((m) => JSON.parse(m.payload.toString()));
}

async function until<T>(fn: () => T | undefined, what: string, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('device runtime on the in-process bus', () => {
  let dataDir: string;
  let bus: MemoryBus;
  let device: DeviceHandle;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lookout-device-'));
    bus = new MemoryBus();
    device = await startDevice({
      deviceId: 'cam-unit',
      image: baseImage(),
      layer: 'layer0',
      source: 'sim',
      dataDir,
      bus,
      toolPort: 0,
      role: 'front-door',
      logger,
      env: { HEALTH_INTERVAL_MS: '100', STATUS_INTERVAL_MS: '100', PATH: '/usr/bin' },
    });
  });
  after(async () => {
    await device.stop();
    await bus.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts every base plugin at layer0 and serves their tools', () => {
    assert.deepEqual(
      device.plugins().map((p) => [p.name, p.state]),
      [
        ['die-temp', 'ok'],
        ['identity', 'ok'],
        ['system-health', 'ok'],
        ['status', 'ok'],
        ['firmware', 'ok'],
        ['camera-profile', 'ok'],
      ],
    );
    assert.deepEqual(
      device.tools
        .list()
        .map((t) => t.decl.name)
        .sort(),
      BASE_TOOLS,
    );
    assert.ok(device.ports.tools > 0);
    assert.equal(device.toolUrl, `http://127.0.0.1:${device.ports.tools}/mcp`);
  });

  it('announces hello, online status and health, each valid against its contract', async () => {
    const hello = HelloMessageSchema.parse(await until(() => messages(bus, 'devices/cam-unit/hello')[0], 'hello'));
    assert.equal(hello.device_id, 'cam-unit');
    assert.deepEqual(hello.labels, ['front-door']);
    assert.deepEqual(hello.roles, ['camera']);
    assert.equal(hello.ports.tools, device.ports.tools);
    assert.ok(hello.ips.includes('127.0.0.1'));
    assert.equal(hello.layer, 'layer0');
    assert.equal(hello.image, 'base');
    assert.equal(hello.versions.plugins?.identity, '1.0.0');
    const status = StatusMessageSchema.parse(await until(() => messages(bus, 'devices/cam-unit/status')[0], 'status'));
    assert.equal(status.state, 'online');
    assert.equal(status.thermal_state, 'NORMAL');
    assert.ok(Math.abs(status.die_temp_c! - 48) <= 1);
    assert.equal(bus.published.find((m) => m.topic === 'devices/cam-unit/status')!.options.retain, true);
    const health = HealthMessageSchema.parse(await until(() => messages(bus, 'devices/cam-unit/health')[0], 'health'));
    assert.equal(health.role, 'front-door');
    assert.equal(health.cert_fingerprint_present, true);
    assert.match(health.serial, /^SIM-[0-9A-F]{12}$/);
    assert.equal(health.storage.path, join(dataDir, 'data', 'recordings'));
  });

  it('publishes health and status again on their intervals', async () => {
    await until(() => (messages(bus, 'devices/cam-unit/health').length >= 3 ? true : undefined), 'three health messages');
    await until(() => (messages(bus, 'devices/cam-unit/status').length >= 3 ? true : undefined), 'three status messages');
  });

  it('generates the device certificate with a private key of mode 0600', async () => {
    const certPath = join(dataDir, 'data', 'config', 'shadow_peer.crt');
    const keyPath = join(dataDir, 'data', 'config', 'shadow_peer.key');
    const cert = new X509Certificate(await readFile(certPath));
    const identity = (await device.tools.call('get_device_identity', {})) as { cert_fingerprint: string; listen_ports: Record<string, number>; serial: string };
    assert.equal(identity.cert_fingerprint, cert.fingerprint256);
    assert.match(identity.cert_fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.deepEqual(identity.listen_ports, { tools: device.ports.tools });
    assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
  });

  it('answers a tool command on the bus with a response', async () => {
    await bus.publish('devices/cam-unit/cmd/tool', JSON.stringify({ tool: 'get_firmware_status', arguments: {}, request_id: 'r-1' }));
    const reply = ResponseMessageSchema.parse(
      await until(() => messages(bus, 'devices/cam-unit/responses').find((m) => (m as { request_id?: string }).request_id === 'r-1'), 'reply r-1'),
    );
    assert.equal(reply.ok, true);
    assert.equal((reply as unknown as { result: { layer: string } }).result.layer, 'layer0');
  });

  it('counts and logs garbage on cmd topics and keeps working', async () => {
    const before = device.commands().invalid;
    await bus.publish('devices/cam-unit/cmd/tool', Buffer.from([0xff, 0x00, 0x13]));
    await bus.publish('devices/cam-unit/cmd/tool', '[1,2]');
    await bus.publish('devices/cam-unit/cmd/tool', JSON.stringify({ tool: 42 }));
    await bus.publish('devices/cam-unit/cmd/reboot-now', JSON.stringify({ request_id: 'r-x' }));
    await bus.publish('devices/cam-unit/cmd/tool', 'x'.repeat(70_000));
    assert.equal(device.commands().invalid, before + 5);
    const unknown = await until(
      () => messages(bus, 'devices/cam-unit/responses').find((m) => (m as { request_id?: string }).request_id === 'r-x'),
      'error reply',
    );
    assert.equal((unknown as { ok: boolean }).ok, false);
    const refusal = (unknown as { error: { code: string; message: string } }).error;
    assert.equal(refusal.code, 'command_invalid');
    assert.match(refusal.message, /unknown command "reboot-now"/);
    await bus.publish('devices/cam-unit/cmd/tool', JSON.stringify({ tool: 'no_such_tool', request_id: 'r-2' }));
    const failed = await until(() => messages(bus, 'devices/cam-unit/responses').find((m) => (m as { request_id?: string }).request_id === 'r-2'), 'reply r-2');
    assert.equal((failed as { error: { code: string } }).error.code, 'tool_unknown');
    await bus.publish('devices/cam-unit/cmd/ping', JSON.stringify({ request_id: 'p-1' }));
    await until(() => messages(bus, 'devices/cam-unit/responses').find((m) => (m as { request_id?: string }).request_id === 'p-1'), 'pong');
  });

  it('never executes a retained command', async () => {
    const ran = device.commands().handled;
    const fresh = new MemoryBus();
    await fresh.publish('devices/cam-r/cmd/tool', JSON.stringify({ tool: 'get_firmware_status' }), { retain: true });
    const other = await startDevice({ deviceId: 'cam-r', image: baseImage(), source: 'sim', layer: 'layer0', dataDir, bus: fresh, toolServer: false, logger });
    try {
      assert.equal(other.commands().ignoredRetained, 1);
      assert.equal(other.commands().handled, 0);
    } finally {
      await other.stop();
      await fresh.close();
    }
    assert.equal(device.commands().handled, ran);
  });
});

describe('device runtime stop and errors', () => {
  it('publishes a retained offline status on a graceful stop', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'lookout-device-'));
    const bus = new MemoryBus();
    try {
      const device = await startDevice({ deviceId: 'cam-stop', image: baseImage(), source: 'sim', layer: 'layer0', dataDir, bus, toolPort: 0, logger });
      await device.stop();
      await device.stop();
      const last = bus.published.filter((m) => m.topic === 'devices/cam-stop/status').at(-1)!;
      assert.equal(last.options.retain, true);
      const status = StatusMessageSchema.parse(JSON.parse(last.payload.toString()));
      assert.equal(status.state, 'offline');
    } finally {
      await bus.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('warns on layer env keys no plugin declares, with the nearest declared key', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'lookout-device-'));
    const envFile = join(dataDir, 'custom.env');
    await writeFile(envFile, 'EDGE_V3_LAYER=layer1_rfdetr\nHEALTH_INTERVAL_M=500\nSOMETHING_ELSE=1\nSTATUS_INTERVAL_MS=200\n');
    const bus = new MemoryBus();
    const lines: string[] = [];
    const sink = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(l) } });
    try {
      const device = await startDevice({
        deviceId: 'cam-env',
        image: baseImage(),
        source: 'sim',
        layerEnvPath: envFile,
        dataDir,
        bus,
        toolServer: false,
        logger: sink,
      });
      await device.stop();
      assert.equal(device.layer, 'layer1');
      assert.equal(device.envSource, envFile);
      assert.deepEqual(device.unknownKeys, [{ key: 'HEALTH_INTERVAL_M', hint: 'HEALTH_INTERVAL_MS' }, { key: 'SOMETHING_ELSE' }]);
      assert.ok(lines.some((l) => l.includes('did you mean HEALTH_INTERVAL_MS?')));
    } finally {
      await bus.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses an invalid device id and an unknown layer with typed errors', async () => {
    const bus = new MemoryBus();
    await assert.rejects(startDevice({ deviceId: 'a/b', image: baseImage(), dataDir: tmpdir(), bus, toolServer: false, logger }), { code: 'config_invalid' });
    await assert.rejects(startDevice({ deviceId: 'ok', image: baseImage(), layer: 'layer9', dataDir: tmpdir(), bus, toolServer: false, logger }), {
      code: 'layer_unknown',
    });
    await bus.close();
  });

  it('stops with a config error naming the key when an essential plugin has a bad value, and releases the tool port', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'lookout-device-'));
    const bus = new MemoryBus();
    try {
      await assert.rejects(
        startDevice({
          deviceId: 'cam-bad',
          image: { ...baseImage(), essential: ['system-health'] },
          source: 'sim',
          layer: 'layer0',
          dataDir,
          bus,
          toolPort: port,
          logger,
          env: { STORAGE_WARN_PCT: '99', STORAGE_CRITICAL_PCT: '90' },
        }),
        (err: Error & { code: string }) => {
          assert.equal(err.code, 'config_invalid');
          assert.match(err.message, /STORAGE_WARN_PCT/);
          return true;
        },
      );
      const again = await startToolServer({ tools: new ToolRegistry(), logger, port });
      await again.close();
      // Not essential: the device runs without it and says why.
      const degraded = await startDevice({
        deviceId: 'cam-bad',
        image: baseImage(),
        source: 'sim',
        layer: 'layer0',
        dataDir,
        bus,
        toolPort: port,
        logger,
        env: { STORAGE_WARN_PCT: '99', STORAGE_CRITICAL_PCT: '90' },
      });
      try {
        const health = degraded.plugins().find((p) => p.name === 'system-health')!;
        assert.deepEqual([health.state, health.code], ['failed', 'config_invalid']);
        assert.match(health.message!, /STORAGE_WARN_PCT/);
      } finally {
        await degraded.stop();
      }
    } finally {
      await bus.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
