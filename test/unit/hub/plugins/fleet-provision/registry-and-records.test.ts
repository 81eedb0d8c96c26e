import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readRegistryFile } from '../../../../../hub/plugins/registry/src/registry-file.js';
import { RegistryFileEditor } from '../../../../../hub/plugins/fleet-provision/src/registry-entry.js';
import { MAX_RECORDS, ProvisionRecords } from '../../../../../hub/plugins/fleet-provision/src/provision-records.js';
import type { ProvisionRecord } from '../../../../../hub/plugins/fleet-provision/src/provision-schemas.js';

describe('the registry file as provisioning edits it', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-provision-registry-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the file, adds an entry the registry reads, keeps the operator’s keys and changes nothing when called again', async () => {
    const path = join(dir, 'registry.json');
    const editor = new RegistryFileEditor(path);
    assert.equal(await editor.ensure({ deviceId: 'cam-1', host: '10.0.0.5', port: 22, user: 'root', root: '/' }), true);
    assert.deepEqual(
      readRegistryFile(path, true).devices.map((d) => [d.device_id, d.ips]),
      [['cam-1', ['10.0.0.5']]],
    );
    const edited = JSON.parse(await readFile(path, 'utf8'));
    edited.bus_id = 'fleet-a';
    edited.devices[0].labels = ['canary'];
    edited.devices.push({ device_id: 'cam-2' });
    await writeFile(path, JSON.stringify(edited));
    assert.equal(await editor.ensure({ deviceId: 'cam-1', host: '10.0.0.5', port: 22, user: 'root', root: '/' }), false);
    assert.equal(await editor.ensure({ deviceId: 'cam-1', host: 'cam-1.lan', port: 2222, user: 'root', root: '/' }), true);
    const file = readRegistryFile(path, true);
    assert.equal(file.bus_id, 'fleet-a');
    const cam1 = file.devices.find((d) => d.device_id === 'cam-1')!;
    assert.deepEqual([cam1.ips, cam1.ssh_host, cam1.ssh_port, cam1.labels], [[], 'cam-1.lan', 2222, ['canary']]);
    assert.equal(await editor.remove('cam-1'), true);
    assert.equal(await editor.remove('cam-1'), false);
    assert.deepEqual(
      readRegistryFile(path, true).devices.map((d) => d.device_id),
      ['cam-2'],
    );
  });
});

describe('provisioning records', () => {
  it('keeps at most MAX_RECORDS, the least recently updated going first', () => {
    let changes = 0;
    const records = new ProvisionRecords(() => changes++);
    const record = (id: string): ProvisionRecord => ({
      device_id: id,
      host: '127.0.0.1',
      port: 22,
      user: 'root',
      layer: 'layer2',
      root: '/',
      mqtt_url: 'mqtt://127.0.0.1:1883',
      state: 'failed',
      steps: [],
      pushed_at: null,
      grade: null,
      updated_at: new Date(0).toISOString(),
    });
    for (let i = 0; i < MAX_RECORDS + 10; i++) {
      records.put(record(`cam-${i}`));
      if (i === MAX_RECORDS - 1) records.put(record('cam-0'));
    }
    assert.equal(records.list().length, MAX_RECORDS);
    assert.ok(records.get('cam-0'), 'updated again, so kept');
    assert.equal(records.get('cam-1'), undefined);
    assert.equal(changes, MAX_RECORDS + 11);
  });
});
