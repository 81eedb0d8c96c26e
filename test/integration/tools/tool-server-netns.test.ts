/**
 * A device whose tool server listens beyond loopback, tested inside a network namespace this test
 * makes (`unshare -n`, as root): loopback up and a veth pair with 10.200.0.1/24 and 10.200.0.2/24,
 * so nothing touches the machine's own network. The test file runs itself again inside the
 * namespace (LOOKOUT_NETNS_INSIDE=1), where a hub and real `lookout-edge` processes run:
 * - a call without the device's token is 401 before any tool runs, and so is a wrong token;
 * - the hub, holding the fleet secret, calls the device with the token it derives;
 * - on a device listening on every address, a local agent on 127.0.0.1 still needs no token;
 * - `--tool-host` beyond loopback without a credential refuses to start, and no secret appears in
 *   argv, the logs or an answer.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deviceToolToken } from '../../../lib/auth/tool-token.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { runEdgeOnce, startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { callTool, testHub } from '../../support/hub-helpers.js';

const SECRET = 'netns-test-fleet-secret-4f0a9c2e';
const DEVICE_ADDRESS = '10.200.0.1';
const NAMESPACE_SETUP = [
  'set -e',
  'ip link set lo up',
  // veth rather than dummy: it needs no module beyond what `ip netns` tests already use.
  'ip link add lk0 type veth peer name lk1',
  `ip addr add ${DEVICE_ADDRESS}/24 dev lk0`,
  'ip addr add 10.200.0.2/24 dev lk1',
  'ip link set lk0 up',
  'ip link set lk1 up',
].join('; ');

if (process.env.LOOKOUT_NETNS_INSIDE !== '1') {
  describe('device tool server beyond loopback (in a network namespace of its own)', () => {
    it('passes every check inside `unshare -n` with a veth pair on 10.200.0.0/24', async () => {
      const self = fileURLToPath(import.meta.url);
      const script = `${NAMESPACE_SETUP}; exec "${process.execPath}" --test --test-reporter=spec "${self}"`;
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        // NODE_TEST_CONTEXT would make the inner runner think it is nested in this one and run nothing.
        const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
        const child = spawn('unshare', ['--net', '--', 'sh', '-c', script], {
          env: { ...env, LOOKOUT_NETNS_INSIDE: '1', LOOKOUT_FLEET_SECRET: SECRET },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c: Buffer) => (output += c.toString()));
        child.stderr.on('data', (c: Buffer) => (output += c.toString()));
        child.once('error', reject);
        child.once('exit', (c) => resolve({ code: c, output }));
      });
      assert.equal(code, 0, `inside the namespace (unshare needs root and util-linux; ip needs iproute2):\n${output.slice(-8000)}`);
      assert.match(output, /^\S+ pass [1-9]/m, output.slice(-4000));
      assert.match(output, /^\S+ fail 0$/m);
      assert.match(output, /^\S+ skipped 0$/m);
    });
  });
} else {
  const image = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');
  const rpc = (method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) });
  const post = async (url: string, body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };

  describe('inside the namespace', () => {
    let hub: RunningHub;
    let device: DeviceProcess;
    let dir: string;
    const token = deviceToolToken(SECRET, 'cam-ns');

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'netns-'));
      // The device connects to a broker before it is ready: the hub (and its broker) first.
      const registryFile = join(dir, 'registry.json');
      writeFileSync(registryFile, JSON.stringify({ devices: [] }));
      hub = await testHub({ dataDir: dir, registryFile, toolTimeoutMs: 5000, env: { LOOKOUT_FLEET_SECRET: SECRET } });
      device = await startDeviceProcess({
        deviceId: 'cam-ns',
        image,
        layer: 'layer0',
        mqtt: hub.brokerUrl,
        extraArgs: ['--tool-host', DEVICE_ADDRESS, '--insecure-tool-http'],
      });
      writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-ns', ips: [DEVICE_ADDRESS], tool_port: device.ready.ports.tools }] }));
    });
    after(async () => {
      await device?.stop();
      await hub?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('listens on the private address, not on loopback', () => {
      assert.equal(device.ready.tool_url, `http://${DEVICE_ADDRESS}:${device.ready.ports.tools}/mcp`);
    });

    it('answers 401 without the token, before any tool runs', async () => {
      const url = device.ready.tool_url!;
      const list = await post(url, rpc('tools/list'));
      assert.equal(list.status, 401);
      assert.equal((JSON.parse(list.text) as { error: { code: string } }).error.code, 'unauthorized');
      assert.match(list.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.doesNotMatch(list.text, /get_camera_profile/);
      const set = await post(url, rpc('tools/call', { name: 'set_camera_profile', arguments: { fps: 5 } }));
      assert.equal(set.status, 401);
      for (const wrong of [deviceToolToken(SECRET, 'cam-other'), deviceToolToken('another-fleet-secret-123456', 'cam-ns'), `${token}x`]) {
        const r = await post(url, rpc('tools/call', { name: 'set_camera_profile', arguments: { fps: 6 } }), { authorization: `Bearer ${wrong}` });
        assert.equal(r.status, 401);
      }
      const profile = await post(url, rpc('tools/call', { name: 'get_camera_profile', arguments: {} }), { authorization: `Bearer ${token}` });
      assert.equal(profile.status, 200, profile.text);
      const fps = (JSON.parse(profile.text) as { result: { structuredContent: { profile: { fps: number } } } }).result.structuredContent.profile.fps;
      assert.notEqual(fps, 5);
      assert.notEqual(fps, 6);
    });

    it('serves an MCP client that presents the device token', async () => {
      const client = new Client({ name: 'netns-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(device.ready.tool_url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'set_camera_profile'));
      } finally {
        await client.close();
      }
    });

    it('serves the hub, which derives the device token from its fleet secret', async () => {
      const identity = await callTool(hub.url, 'cam-ns', 'get_device_identity');
      assert.equal(identity.status, 200, identity.text);
      assert.equal(identity.body.result.device_id, 'cam-ns');
      const set = await callTool(hub.url, 'cam-ns', 'set_camera_profile', { fps: 12 });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.result.profile.fps, 12);
      assert.doesNotMatch(identity.text + set.text, new RegExp(token));
    });

    it('keeps the token and the fleet secret out of argv and the logs', () => {
      const argv = readFileSync(`/proc/${device.child.pid}/cmdline`, 'utf8');
      for (const secret of [SECRET, token]) {
        assert.ok(!argv.includes(secret), 'not in argv');
        assert.ok(!device.logs().includes(secret), 'not in the logs');
      }
    });

    it('on every address: a local agent on 127.0.0.1 needs no token, a caller on the private address does', async () => {
      const wide = await startDeviceProcess({
        deviceId: 'cam-wide',
        image,
        layer: 'layer0',
        mqtt: hub.brokerUrl,
        extraArgs: ['--tool-host', '0.0.0.0', '--insecure-tool-http'],
      });
      try {
        const port = wide.ready.ports.tools;
        assert.equal((await post(`http://127.0.0.1:${port}/mcp`, rpc('tools/list'))).status, 200);
        assert.equal((await post(`http://${DEVICE_ADDRESS}:${port}/mcp`, rpc('tools/list'))).status, 401);
        const withToken = await post(`http://${DEVICE_ADDRESS}:${port}/mcp`, rpc('tools/list'), {
          authorization: `Bearer ${deviceToolToken(SECRET, 'cam-wide')}`,
        });
        assert.equal(withToken.status, 200);
      } finally {
        await wide.stop();
      }
    });

    it('refuses to start with --tool-host beyond loopback and no credential (exit 2), naming what to set', async () => {
      const data = mkdtempSync(join(tmpdir(), 'netns-bare-'));
      try {
        const args = ['--device-id', 'cam-bare', '--source', 'sim', '--layer', 'layer0', '--data-dir', data, '--mqtt', hub.brokerUrl];
        const r = await runEdgeOnce([...args, '--tool-host', DEVICE_ADDRESS, '--tool-port', '0'], { LOOKOUT_FLEET_SECRET: '', LOOKOUT_TOOL_TOKEN: '' });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /--tool-host 10\.200\.0\.1: beyond loopback the tool server requires a credential; set LOOKOUT_FLEET_SECRET/);
        assert.equal(r.stdout.includes('"event":"ready"'), false);
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    });
  });
}
