/**
 * `lookout-hub` as a process: the JSON ready line and the banner, a token that guards the routes
 * and the embedded broker (a real device connects with it, a client without it is refused), a
 * clean stop on SIGTERM, and the refusal to listen beyond loopback without a token.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, mqttClient, waitFor } from '../../support/hub-helpers.js';

const TOKEN = 'cli-test-token-8f3a';
const bin = join(packageRoot(), 'bin', 'lookout-hub.js');
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function runHub(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, LOOKOUT_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

describe('lookout-hub process', () => {
  const devices: DeviceProcess[] = [];
  after(async () => {
    await Promise.all(devices.map((d) => d.stop()));
    for (const c of children) c.kill('SIGKILL');
  });

  it('starts with a token, guards routes and broker, serves a real device, stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-cli-'));
    const hub = runHub(['--port', '0', '--host', '127.0.0.1', '--broker-port', '0', '--data-dir', dataDir, '--json'], { LOOKOUT_HUB_TOKEN: TOKEN });
    const ready = await waitFor(
      'the ready line',
      () => {
        const line = hub
          .stdout()
          .split('\n')
          .find((l) => l.startsWith('{'));
        return line ? (JSON.parse(line) as { url: string; broker_url: string; token_required: boolean }) : undefined;
      },
      15_000,
    );
    assert.equal(ready.token_required, true);
    assert.doesNotMatch(hub.stdout() + hub.stderr(), new RegExp(TOKEN), 'the token is never printed');

    assert.equal((await api(ready.url, '/health')).status, 200);
    assert.equal((await api(ready.url, '/fleet/mqtt/latest')).status, 401);
    assert.equal((await api(ready.url, '/fleet/mqtt/latest', { token: TOKEN })).status, 200);

    await assert.rejects(mqttClient(ready.broker_url), /Not authorized|Bad username or password|connack/i);
    await assert.rejects(mqttClient(ready.broker_url, { username: 'x', password: 'wrong-password' }));
    await assert.rejects(mqttClient(ready.broker_url, { username: 'cli-cam', password: TOKEN, clientId: 'cli-cam' }), 'the HTTP token is no bus password');

    // The README's way: the hub created its fleet secret; the operator derives the device's credentials.
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(packageRoot(), 'bin', 'lookout.js'),
      'device-credentials',
      'cli-cam',
      '--hub-data-dir',
      dataDir,
      '--json',
    ]);
    const credentials = JSON.parse(stdout) as Record<string, string>;
    assert.equal((statSync(join(dataDir, 'fleet-secret')).mode & 0o777).toString(8), '600');
    const device = await startDeviceProcess({
      deviceId: 'cli-cam',
      image: 'camera',
      layer: 'layer1',
      mqtt: ready.broker_url,
      // The shipped image records and serves video: a small stream keeps this test light.
      env: {
        LOOKOUT_MQTT_USERNAME: credentials.LOOKOUT_MQTT_USERNAME,
        LOOKOUT_MQTT_PASSWORD: credentials.LOOKOUT_MQTT_PASSWORD,
        ENCODE_RESOLUTION: '320x240',
        ENCODE_FPS: '5',
      },
    });
    devices.push(device);
    await waitFor('the device in the cache', async () => (await api(ready.url, '/fleet/mqtt/latest', { token: TOKEN })).body.devices['cli-cam']?.payload);
    // Its hello may arrive after its first telemetry: tool calls need the registry entry.
    await waitFor(
      'the device in the registry',
      async () => (await api(ready.url, '/fleet/registry?device=cli-cam', { token: TOKEN })).body.shadows[0]?.reachable,
    );
    const call = await api(ready.url, '/tools/call?target=cli-cam', { token: TOKEN, json: { tool: 'get_firmware_status', arguments: {} } });
    assert.equal(call.status, 200);
    assert.equal(call.body.status, 'ok');

    hub.child.kill('SIGTERM');
    assert.equal(await hub.exited, 0, hub.stderr());
  });

  it('prints the URLs at start without --json', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-cli-'));
    const hub = runHub(['--port', '0', '--broker-port', '0', '--data-dir', dataDir]);
    // The banner may come in several chunks: its last line is the access line.
    const banner = await waitFor('the whole banner', () => (/access\s+.*\n/.test(hub.stdout()) ? hub.stdout() : undefined), 15_000);
    assert.equal(hub.child.exitCode, null, hub.stderr());
    for (const path of ['/health', '/fleet/mqtt/latest', '/fleet/registry', '/fleet/health', '/tools/call', '/debug/events', '/openapi.json'])
      assert.match(banner, new RegExp(path.replace(/\//g, '\\/')));
    assert.match(banner, /broker\s+mqtt:\/\/127\.0\.0\.1:\d+ \(embedded\)/);
    assert.match(banner, /127\.0\.0\.1 only/);
    hub.child.kill('SIGINT');
    assert.equal(await hub.exited, 0, hub.stderr());
  });

  it('refuses to listen beyond loopback without a token (exit 1) and a bad flag (exit 2)', async () => {
    const open = runHub(['--port', '0', '--broker-port', '0', '--host', '0.0.0.0']);
    assert.equal(await open.exited, 1);
    assert.match(open.stderr(), /--token/);
    const bad = runHub(['--port', 'eighty']);
    assert.equal(await bad.exited, 2);
    assert.match(bad.stderr(), /--port/);
  });
});
