/**
 * The ops-debug routes with real parts: a real hub (embedded broker), a real device process that
 * says hello, a real sshd standing in for the device's SSH, real `tar`. Secrets are planted in the
 * hub's settings, a device log line, a ring event and a hub log line, and looked for everywhere.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { definePlugin, packageRoot } from '../../../core/src/index.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { LogRing } from '../../../core/src/log/log-ring.js';
import { DEBUG_RING } from '../../../hub/plugins/debug-ring/src/service.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { deviceToolToken } from '../../../lib/auth/index.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { api, TEST_FLEET_SECRET, testHub, waitFor } from '../../support/hub-helpers.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';

const DEVICE_PASSWORD = 'planted-device-password-51c9e';
const HUB_TOKEN = 'planted-hub-token-0b7e2d4a';
const MQTT_PASSWORD = 'planted-mqtt-password-93aa1';
/** Another plugin's secret, known to this one only as a secret-named variable of the process. */
const DESCRIBER_KEY = 'planted-describer-key-7f3c1';

/** Processes whose command line names `path` (a tail left running on the "device"). */
function processesNaming(path: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path)) n++;
    } catch {
      // Gone meanwhile.
    }
  }
  return n;
}

describe('ops-debug: host manifest, log tails and the debug export', () => {
  let sshd: Sshd;
  let scratch: ScratchDir;
  let hub: RunningHub;
  let device: DeviceProcess;
  let logs: string;
  let logFile: string;
  let secrets: string[];

  before(async () => {
    sshd = await startSshd();
    scratch = await scratchDir('ops-debug-');
    // Each device's logs in a folder of its own ({device} in LOOKOUT_DEVICE_LOGS_DIR, as the demo fleet's).
    logs = join(scratch.dir, 'devices', 'cam-logs', 'logs');
    mkdirSync(logs, { recursive: true });
    logFile = join(logs, 'lookout-edge.log');
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    const registryFile = join(scratch.dir, 'registry.json');
    writeFileSync(
      registryFile,
      JSON.stringify({
        devices: [
          { device_id: 'cam-logs', ips: ['127.0.0.1'], ssh_port: sshd.port },
          { device_id: 'cam-dead', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: await freePort() },
          // A legal topic level that would name the folder above the devices' own.
          { device_id: '..', ips: ['127.0.0.1'], ssh_port: sshd.port },
        ],
      }),
    );
    // A plugin that leaks on purpose: a ring event and a free-text log line carrying secrets.
    const leaky = definePlugin({
      name: 'test-leaky',
      version: '1.0.0',
      core: '^1',
      description: 'plants secrets in the ring and the log',
      requires: [DEBUG_RING],
      start(ctx) {
        ctx.services.get(DEBUG_RING).record({ kind: 'hub', message: `connecting with ${DEVICE_PASSWORD}`, details: { note: TEST_FLEET_SECRET } });
        ctx.log.warn(`the fleet secret is ${TEST_FLEET_SECRET}, the token ${HUB_TOKEN} and the key ${DESCRIBER_KEY}`);
      },
    });
    const ring = new LogRing({ maxLines: 5000 });
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: scratch.dir,
      registryFile,
      plugins: [...set.plugins, leaky],
      essential: set.essential,
      logger: createLogger({ level: 'debug', destination: new Writable({ write: (_c, _e, cb) => cb() }), ring }),
      logRing: ring,
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '1000',
        LOOKOUT_DEVICE_LOGS_DIR: join(scratch.dir, 'devices', '{device}', 'logs'),
        DEVICE_PASSWORD,
        LOOKOUT_HUB_TOKEN: HUB_TOKEN,
        LOOKOUT_MQTT_PASSWORD: MQTT_PASSWORD,
      },
    });
    const image = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');
    device = await startDeviceProcess({ deviceId: 'cam-logs', mqtt: hub.brokerUrl, image, layer: 'layer0' });
    // The hub process's environment (what the export's config lists), planted after the device took its own.
    for (const [k, v] of Object.entries({
      DEVICE_PASSWORD,
      LOOKOUT_HUB_TOKEN: HUB_TOKEN,
      LOOKOUT_MQTT_PASSWORD: MQTT_PASSWORD,
      LOOKOUT_SVC_AGENT_DESCRIBER_API_KEY: DESCRIBER_KEY,
    }))
      process.env[k] = v;
    // The device's own log as it would be on its overlay, and a line where it printed a password.
    writeFileSync(logFile, `${device.logs()}{"level":40,"msg":"login with ${DEVICE_PASSWORD}"}\n{"level":30,"msg":"last line"}\n`);
    secrets = [
      TEST_FLEET_SECRET,
      DEVICE_PASSWORD,
      HUB_TOKEN,
      MQTT_PASSWORD,
      DESCRIBER_KEY,
      deviceToolToken(TEST_FLEET_SECRET, 'cam-logs'),
      hub.deviceCredentials('cam-logs').password,
    ];
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    await sshd?.stop();
    await scratch?.cleanup();
  });

  const noSecret = (text: string, where: string) => {
    for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}…) in ${where}`);
  };

  it('GET /fleet/host-manifest: hub version, plugins with state, ports, broker, state back-end, the device its hello announced; no secret', async () => {
    const m = await waitFor('the device with its versions', async () => {
      const a = await api(hub.url, '/fleet/host-manifest');
      assert.equal(a.status, 200, a.text);
      return a.body.devices.find((d: { device_id: string; versions: unknown }) => d.device_id === 'cam-logs' && d.versions) ? a : undefined;
    });
    const body = m.body;
    assert.match(body.hub.version, /^\d+\.\d+\.\d+/);
    assert.equal(body.ports.http, hub.port);
    assert.equal(body.ports.broker, hub.brokerPort);
    assert.equal(body.broker.embedded, true);
    assert.equal(body.state.backend, 'memory');
    assert.deepEqual(
      body.plugins.filter((p: { name: string }) => p.name === 'ops-debug').map((p: { state: string }) => p.state),
      ['ok'],
    );
    const cam = body.devices.find((d: { device_id: string }) => d.device_id === 'cam-logs');
    assert.equal(cam.layer, 'layer0');
    assert.ok(cam.versions.runtime && cam.versions.node, JSON.stringify(cam.versions));
    assert.ok(cam.plugins.length > 0 && cam.plugins.every((p: { version: string; state: string }) => p.version && p.state));
    noSecret(m.text, 'the host manifest');
  });

  it('GET /debug/log/tail: bounded, by level and component, secrets out', async () => {
    const warn = await api(hub.url, '/debug/log/tail?level=warn&component=test-leaky');
    assert.equal(warn.status, 200, warn.text);
    assert.equal(warn.body.lines.length, 1);
    assert.match(warn.body.lines[0].record.msg, /the fleet secret is \[redacted\]/);
    noSecret(warn.text, 'the hub log tail');
    const three = await api(hub.url, '/debug/log/tail?lines=3');
    assert.equal(three.body.lines.length, 3);
    assert.ok(three.body.matched > 3);
    assert.equal((await api(hub.url, '/debug/log/tail?level=loud')).status, 400);
  });

  it('GET /debug/shadow/:device/logs: the last lines over SSH, secrets out; typed 404s and an unreachable device', async () => {
    const tail = await api(hub.url, '/debug/shadow/cam-logs/logs?lines=2');
    assert.equal(tail.status, 200, tail.text);
    assert.deepEqual(tail.body.lines, ['{"level":40,"msg":"login with [redacted]"}', '{"level":30,"msg":"last line"}']);
    const bytes = await api(hub.url, '/debug/shadow/cam-logs/logs?lines=1000&max_bytes=100');
    assert.ok(bytes.body.bytes <= 100);
    assert.equal((await api(hub.url, '/debug/shadow/cam-nope/logs')).body.error.code, 'target_unknown');
    const missing = await api(hub.url, '/debug/shadow/cam-logs/logs?file=other.log');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'log_not_found');
    assert.equal((await api(hub.url, '/debug/shadow/cam-logs/logs?file=..%2Fetc')).status, 400);
    const dead = await api(hub.url, '/debug/shadow/cam-dead/logs');
    assert.equal(dead.status, 502, dead.text);
    assert.match(dead.body.error.code, /^ssh_/);
  });

  it('follow=true: SSE of new lines; a client that leaves closes the tail on the device', async () => {
    const controller = new AbortController();
    const res = await fetch(`${hub.url}/debug/shadow/cam-logs/logs?follow=true&lines=1`, { signal: controller.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (want: string) => {
      while (!text.includes(want)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${want}: ${text}`);
        text += Buffer.from(value).toString('utf8');
      }
    };
    await readUntil('last line');
    appendFileSync(logFile, `{"msg":"appended ${DEVICE_PASSWORD}"}\n`);
    await readUntil('appended');
    assert.match(text, /event: line\ndata: \{"seq":2,"line":"\{\\"msg\\":\\"appended \[redacted\]\\"\}"\}/);
    noSecret(text, 'the followed log');
    assert.ok(processesNaming(logFile) + processesNaming('lookout-edge.log') > 0, 'a tail runs while followed');
    controller.abort();
    await waitFor('no tail left on the device', () => processesNaming('lookout-edge.log') === 0, 10_000);
  });

  it('GET /debug/export: a tar.gz (real tar) of ring, config, manifest, hub and device logs with no secret in any file', async () => {
    const res = await fetch(`${hub.url}/debug/export?device=cam-logs,cam-dead&lines=500`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/gzip');
    const archive = join(scratch.dir, 'export.tar.gz');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
    const out = join(scratch.dir, 'export');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archive, '-C', out]);
    const [folder] = readdirSync(out);
    const files: string[] = [];
    const walk = (dir: string, rel = ''): void => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full, `${rel}${name}/`);
        else files.push(`${rel}${name}`);
      }
    };
    walk(join(out, folder));
    assert.deepEqual(files.sort(), [
      'debug-ring.json',
      'devices/cam-dead/error.json',
      'devices/cam-logs/lookout-edge.log',
      'host-manifest.json',
      'hub-config.json',
      'hub.log',
    ]);
    const read = (f: string) => readFileSync(join(out, folder, f), 'utf8');
    for (const f of files) noSecret(read(f), f);
    assert.match(read('devices/cam-logs/lookout-edge.log'), /login with \[redacted\]/);
    assert.match(read('debug-ring.json'), /connecting with \[redacted\]/);
    assert.match(read('hub.log'), /the fleet secret is \[redacted\]/);
    const config = JSON.parse(read('hub-config.json'));
    assert.equal(config.environment.DEVICE_PASSWORD, '[redacted]');
    assert.equal(config.environment.LOOKOUT_HUB_TOKEN, '[redacted]');
    assert.equal((await api(hub.url, '/debug/export?device=cam-nope')).status, 404);
    const above = await api(hub.url, '/debug/export?device=..');
    assert.equal(above.status, 400, above.text);
    assert.equal(above.body.error.code, 'argument_invalid');
  });
});
