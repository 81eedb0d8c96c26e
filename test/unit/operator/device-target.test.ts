import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openSession, resolveTarget, type SshValues } from '../../../operator/src/remote/device-target.js';
import { scratchDir } from '../../support/scratch-dir.js';

const base: SshValues = { root: '/', 'hub-data-dir': '.lookout-dev/hub', 'connect-timeout-ms': '1000', 'timeout-ms': '1000' };

describe('lookout: which device a command reaches', () => {
  it('a registry id: ssh_host, else its first ip; ssh_port and ssh_user, else 22 and root', async () => {
    const { dir, cleanup } = await scratchDir('device-target-');
    try {
      const registry = join(dir, 'registry.json');
      writeFileSync(
        registry,
        JSON.stringify({
          devices: [
            { device_id: 'cam-1', ips: ['10.0.0.21'], ssh_host: 'cam-1.lan', ssh_port: 2222, ssh_user: 'admin' },
            { device_id: 'cam-2', ips: ['10.0.0.22'] },
            { device_id: 'cam-3', ips: [] },
          ],
        }),
      );
      const values = { ...base, registry };
      assert.deepEqual(resolveTarget('cam-1', values), { deviceId: 'cam-1', host: 'cam-1.lan', port: 2222, user: 'admin', hostFromFile: true });
      assert.deepEqual(resolveTarget('cam-2', values), { deviceId: 'cam-2', host: '10.0.0.22', port: 22, user: 'root', hostFromFile: true });
      assert.throws(() => resolveTarget('cam-3', values), /cam-3 has no ssh_host or ips/);
      // Not in the registry: read as an address.
      assert.equal(resolveTarget('10.0.0.99', values).host, '10.0.0.99');
    } finally {
      await cleanup();
    }
  });

  it('an address: [user@]host[:port], IPv6 in brackets; the id from --device-id, else the host', () => {
    assert.deepEqual(resolveTarget('10.0.0.5', base), { deviceId: '10.0.0.5', host: '10.0.0.5', port: 22, user: 'root', hostFromFile: true });
    assert.deepEqual(resolveTarget('op@cam.lan:2200', { ...base, 'device-id': 'cam-9' }), {
      deviceId: 'cam-9',
      host: 'cam.lan',
      port: 2200,
      user: 'op',
      hostFromFile: true,
    });
    assert.equal(resolveTarget('[::1]:2222', base).host, '::1');
    assert.throws(
      () => resolveTarget('not an address!', base),
      (err: Error & { code?: string }) => err.code === 'target_unknown',
    );
  });

  it('refuses a relative --root and a missing credential before connecting', () => {
    assert.throws(() => openSession('10.0.0.5', { ...base, root: 'device' }), /--root is a path on the device and must be absolute/);
    const saved = { password: process.env.DEVICE_PASSWORD, key: process.env.LOOKOUT_SSH_KEY_FILE };
    delete process.env.DEVICE_PASSWORD;
    delete process.env.LOOKOUT_SSH_KEY_FILE;
    try {
      assert.throws(
        () => openSession('10.0.0.5', base),
        (err: Error & { code?: string }) => err.code === 'ssh_not_configured',
      );
    } finally {
      if (saved.password !== undefined) process.env.DEVICE_PASSWORD = saved.password;
      if (saved.key !== undefined) process.env.LOOKOUT_SSH_KEY_FILE = saved.key;
    }
  });
});
