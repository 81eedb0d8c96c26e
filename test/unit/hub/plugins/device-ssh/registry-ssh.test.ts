/** The registry file's SSH fields and RegisteredDevice.ssh (what device-ssh connects to). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import type { HelloMessage } from '../../../../../core/src/contracts/hello-message.js';
import { DeviceNetworks } from '../../../../../lib/net/device-networks.js';
import { HubDeviceRegistry } from '../../../../../hub/plugins/registry/src/device-registry.js';
import { readRegistryFile } from '../../../../../hub/plugins/registry/src/registry-file.js';
import { api, msg, testHub } from '../../../../support/hub-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'registry-ssh-'));
let n = 0;
function file(content: unknown): string {
  const path = join(dir, `registry-${++n}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}
function registry(path: string) {
  return new HubDeviceRegistry({
    path,
    required: true,
    networks: DeviceNetworks.parse(['127.0.0.0/8', '10.9.0.0/16']),
    busId: 'bus',
    lanIp: '10.1.1.1',
    isOnline: () => false,
    onEvent: () => undefined,
  });
}
const hello = (id: string, ips: string[]) => msg.hello(id, ips, 8765) as HelloMessage;

describe('registry file SSH fields', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults: the address the tool server is reached at, port 22, root, /data/recordings', () => {
    const r = registry(file({ devices: [{ device_id: 'cam-1', ips: ['10.0.0.5', '10.0.0.6'] }] }));
    assert.deepEqual(r.get('cam-1')!.ssh, { host: '10.0.0.5', port: 22, user: 'root', recordingsRoot: '/data/recordings', hostFromFile: true });
  });

  it('the file sets host, port, user and recordings root', () => {
    const r = registry(
      file({
        devices: [
          { device_id: 'cam-1', ips: ['10.0.0.5'], ssh_host: 'cam-1.lan', ssh_port: 2222, ssh_user: 'lookout', recordings_root: '/data/ext-recordings' },
          { device_id: 'cam-2', tool_url: 'http://[fd00::7]:9000/mcp' },
          { device_id: 'cam-3', ssh_host: '10.0.0.9' },
        ],
      }),
    );
    assert.deepEqual(r.get('cam-1')!.ssh, {
      host: 'cam-1.lan',
      port: 2222,
      user: 'lookout',
      recordingsRoot: '/data/ext-recordings',
      hostFromFile: true,
    });
    assert.equal(r.get('cam-2')!.ssh!.host, 'fd00::7', 'a tool_url alone: its host');
    assert.equal(r.get('cam-3')!.ssh!.host, '10.0.0.9', 'no address but an SSH host');
    assert.equal(r.get('cam-3')!.toolUrl, null);
    for (const id of ['cam-2', 'cam-3']) assert.equal(r.get(id)!.ssh!.hostFromFile, true, id);
  });

  it('a hello-only device: SSH at its address inside the device networks, none outside', () => {
    const r = registry(file({ devices: [] }));
    r.hello(hello('cam-h', ['192.168.1.4', '10.9.0.4']), Date.now());
    r.hello(hello('cam-out', ['192.168.1.5']), Date.now());
    assert.deepEqual(r.get('cam-h')!.ssh, { host: '10.9.0.4', port: 22, user: 'root', recordingsRoot: '/data/recordings', hostFromFile: false });
    assert.equal(r.get('cam-out')!.ssh, null);
  });

  it('says whether the SSH host is the file\u2019s word or a hello\u2019s (only the file\u2019s may be pinned on first use)', () => {
    const r = registry(
      file({
        devices: [
          { device_id: 'named-no-address', ssh_port: 2200 },
          { device_id: 'named-ips', ips: ['10.9.0.7'] },
          { device_id: 'named-ssh-host', ssh_host: '10.9.0.8' },
        ],
      }),
    );
    for (const id of ['named-no-address', 'named-ips', 'named-ssh-host', 'hello-only']) r.hello(hello(id, ['10.9.0.20']), Date.now());
    // Named in the file, but the address is the hello's: any bus client could have announced it.
    assert.deepEqual(r.get('named-no-address')!.ssh, { host: '10.9.0.20', port: 2200, user: 'root', recordingsRoot: '/data/recordings', hostFromFile: false });
    assert.equal(r.get('hello-only')!.ssh!.hostFromFile, false);
    assert.deepEqual(
      [r.get('named-ips')!.ssh!.host, r.get('named-ips')!.ssh!.hostFromFile],
      ['10.9.0.7', true],
      'the file\u2019s ips win over the hello\u2019s',
    );
    assert.deepEqual([r.get('named-ssh-host')!.ssh!.host, r.get('named-ssh-host')!.ssh!.hostFromFile], ['10.9.0.8', true]);
  });

  it('refuses bad SSH fields, naming them', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ recordings_root: 'data/recordings' }, /recordings_root/],
      [{ recordings_root: '/data/../etc' }, /recordings_root/],
      [{ ssh_port: 0 }, /ssh_port/],
      [{ ssh_user: 'root; reboot' }, /ssh_user/],
      [{ ssh_host: '-oProxyCommand=x' }, /ssh_host/],
      [{ ssh_password: 'x' }, /ssh_password/],
    ];
    for (const [fields, re] of bad) {
      assert.throws(
        () => readRegistryFile(file({ devices: [{ device_id: 'cam-1', ...fields }] }), true),
        (err: unknown) => err instanceof LookoutError && err.code === 'config_invalid' && re.test(err.message),
        JSON.stringify(fields),
      );
    }
  });

  it('GET /fleet/registry shows where each device is reached over SSH', async () => {
    const hub = await testHub({ registryFile: file({ devices: [{ device_id: 'cam-1', ips: ['127.0.0.1'], ssh_port: 2200, recordings_root: '/srv/rec' }] }) });
    try {
      const r = await api(hub.url, '/fleet/registry');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.shadows[0].ssh, { host: '127.0.0.1', port: 2200, user: 'root', recordings_root: '/srv/rec' });
    } finally {
      await hub.close();
    }
  });
});
