import assert from 'node:assert/strict';
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import type { HelloMessage } from '../../../../../core/src/contracts/hello-message.js';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { HubDeviceRegistry } from '../../../../../hub/plugins/registry/src/device-registry.js';
import { readRegistryFile } from '../../../../../hub/plugins/registry/src/registry-file.js';
import { DeviceNetworks } from '../../../../../lib/net/device-networks.js';
import { api, msg, testHub, waitFor } from '../../../../support/hub-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hub-registry-'));
let n = 0;
function file(content: unknown): string {
  const path = join(dir, `registry-${++n}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function registry(path: string, networks = ['127.0.0.0/8'], online: string[] = []) {
  const events: string[] = [];
  const r = new HubDeviceRegistry({
    path,
    required: true,
    networks: DeviceNetworks.parse(networks),
    busId: 'bus-x',
    lanIp: '10.1.1.1',
    isOnline: (id) => online.includes(id),
    onEvent: (e) => events.push(e.message),
  });
  return { r, events };
}

const hello = (id: string, ips: string[], port: number, labels?: string[]) => msg.hello(id, ips, port, labels) as HelloMessage;
const code = (c: string) => (err: unknown) => err instanceof LookoutError && err.code === c;

describe('registry file', () => {
  it('reads the documented format with defaults', () => {
    const f = readRegistryFile(
      file({ bus_id: 'fleet-1', vms_lan_ip: '192.168.1.2', devices: [{ device_id: 'cam-1', ips: ['10.0.0.5'], labels: ['canary'] }] }),
      true,
    );
    assert.equal(f.bus_id, 'fleet-1');
    assert.deepEqual(f.devices[0], { device_id: 'cam-1', ips: ['10.0.0.5'], labels: ['canary'], roles: [] });
  });

  it('names what is wrong: unknown key, bad address, duplicate, not JSON, missing', () => {
    assert.throws(
      () => readRegistryFile(file({ devices: [{ device_id: 'a', ipz: [] }] }), true),
      (e: LookoutError) => e.code === 'config_invalid' && /devices\.0\.ipz/.test(e.message),
    );
    assert.throws(
      () => readRegistryFile(file({ devices: [{ device_id: 'a', ips: ['300.1.1.1'] }] }), true),
      (e: LookoutError) => /devices\.0\.ips\.0/.test(e.message),
    );
    assert.throws(
      () => readRegistryFile(file({ devices: [{ device_id: 'a' }, { device_id: 'a' }] }), true),
      (e: LookoutError) => /twice/.test(e.message),
    );
    assert.throws(
      () => readRegistryFile(file('{ nope'), true),
      (e: LookoutError) => /not JSON/.test(e.message),
    );
    // fetch refuses such a URL, and the failure would carry the password into answers and the ring.
    assert.throws(
      () => readRegistryFile(file({ devices: [{ device_id: 'a', tool_url: 'http://admin:s3cr3t@10.0.0.5:8765/mcp' }] }), true),
      (e: LookoutError) =>
        e.code === 'config_invalid' && /devices\.0\.tool_url: .*credentials/.test(e.message) && !JSON.stringify(e.toBody()).includes('s3cr3t'),
    );
    assert.throws(() => readRegistryFile(join(dir, 'absent.json'), true), code('config_invalid'));
    assert.deepEqual(readRegistryFile(join(dir, 'absent.json'), false), { devices: [] });
  });
});

describe('device registry', () => {
  it('contacts a hello-only device only at an address inside the device networks', () => {
    const { r, events } = registry(file({}), ['127.0.0.0/8']);
    r.hello(hello('inside', ['192.0.2.9', '127.0.0.1'], 9001), 1);
    r.hello(hello('outside', ['198.51.100.7'], 9002), 2);
    assert.equal(r.get('inside')!.toolUrl, 'http://127.0.0.1:9001/mcp');
    assert.equal(r.get('outside')!.toolUrl, null);
    assert.match(r.get('outside')!.unreachableReason!, /device networks/);
    assert.throws(() => r.resolve('outside'), code('target_not_allowed'));
    assert.ok(events.some((e) => /outside.*not trusted/.test(e)));
  });

  it('a live stream the hello names among its TLS surfaces is read over https, pinned to the announced fingerprint', () => {
    const { r } = registry(file({}), ['127.0.0.0/8']);
    const fp = 'AB:'.repeat(31) + 'AB';
    r.hello({ ...hello('live-tls', ['127.0.0.1'], 9011), tls: ['live'], cert_fingerprint: fp }, 1);
    r.hello({ ...hello('plain', ['127.0.0.1'], 9012) }, 2);
    const d = r.get('live-tls')!;
    assert.equal(d.liveTls, true);
    assert.equal(d.tlsFingerprint, fp);
    // Its tool server is still plain: only the live stream said TLS.
    assert.equal(d.toolUrl, 'http://127.0.0.1:9011/mcp');
    assert.equal(r.get('plain')!.liveTls, undefined);
    assert.equal(r.get('plain')!.tlsFingerprint, undefined);
  });

  it('contacts a device the file names at the file\u2019s address, whatever its hello says', () => {
    const { r } = registry(file({ devices: [{ device_id: 'named', ips: ['10.9.9.9'], labels: ['canary'], tool_port: 8800 }] }), ['127.0.0.0/8']);
    assert.equal(r.get('named')!.toolUrl, 'http://10.9.9.9:8800/mcp');
    r.hello(hello('named', ['127.0.0.1'], 9003, ['dock']), 3);
    const d = r.get('named')!;
    assert.equal(d.toolUrl, 'http://10.9.9.9:8800/mcp');
    assert.equal(d.source, 'file+hello');
    assert.deepEqual(d.labels, ['canary', 'dock']);
    // An address:port target names the port the hub contacts, not the one the hello announced.
    assert.equal(r.resolve('10.9.9.9:8800').deviceId, 'named');
    assert.throws(() => r.resolve('10.9.9.9:9003'), code('target_unknown'));
  });

  it('uses the hello address of a named device the file gives no address for only inside the device networks, and a tool_url as is', () => {
    const { r } = registry(file({ devices: [{ device_id: 'n1' }, { device_id: 'n2', tool_url: 'http://cam-n2.local:8765/mcp' }] }), ['10.0.0.0/8']);
    assert.equal(r.get('n1')!.toolUrl, null);
    // The address comes from the hello, which any bus client can publish: the file vouches for the
    // device, not for wherever a hello says it is.
    r.hello(hello('n1', ['172.16.0.4'], 9100), 1);
    assert.equal(r.get('n1')!.toolUrl, null);
    assert.match(r.get('n1')!.unreachableReason!, /device networks \(10\.0\.0\.0\/8\)/);
    assert.throws(() => r.resolve('n1'), code('target_not_allowed'));
    r.hello(hello('n1', ['172.16.0.4', '10.3.0.4'], 9100), 2);
    assert.equal(r.get('n1')!.toolUrl, 'http://10.3.0.4:9100/mcp');
    assert.equal(r.get('n2')!.toolUrl, 'http://cam-n2.local:8765/mcp');
  });

  it('resolves a target by id, address, address:port and label; unknown is target_unknown', () => {
    const { r } = registry(file({}), ['127.0.0.0/8'], ['b']);
    r.hello(hello('a', ['127.0.0.1'], 9001, ['canary']), 10);
    r.hello(hello('b', ['127.0.0.1'], 9002, ['canary']), 5);
    r.hello(hello('c', ['127.0.0.3'], 9003, ['yard']), 1);
    assert.equal(r.resolve('a').deviceId, 'a');
    assert.equal(r.resolve('127.0.0.3').deviceId, 'c');
    assert.equal(r.resolve('127.0.0.1:9002').deviceId, 'b');
    assert.throws(
      () => r.resolve('127.0.0.1'),
      (e: LookoutError) => e.code === 'bad_request' && /shared by a, b/.test(e.message),
    );
    // Both announce the label in their hello, which is a device's own word: the first to claim it keeps it.
    assert.equal(r.resolve('canary').deviceId, 'a');
    assert.equal(r.resolve('yard').deviceId, 'c');
    assert.throws(() => r.resolve('nobody'), code('target_unknown'));
    assert.throws(() => r.resolve('10.0.0.1'), code('target_unknown'));
  });

  it('a label the registry file gives wins over the same label a hostile hello announces', () => {
    const { r } = registry(file({ devices: [{ device_id: 'cam-1', ips: ['127.0.0.1'], labels: ['canary'] }] }), ['127.0.0.0/8'], ['cam-1', 'evil-1']);
    r.hello(hello('cam-1', ['127.0.0.1'], 9001, ['canary']), 5);
    r.hello(hello('evil-1', ['127.0.0.2'], 9002, ['canary']), 50);
    assert.equal(r.resolve('canary').deviceId, 'cam-1');
  });

  it('a label only hellos announce stays with the first device that claimed it: a second device’s hello is refused it, said and counted', () => {
    const { r, events } = registry(file({}), ['127.0.0.0/8'], ['evil-1']);
    r.hello(hello('cam-1', ['127.0.0.11'], 9001, ['lobby', 'cam-1-only']), 5);
    r.hello(hello('evil-1', ['127.0.0.9'], 9, ['lobby', 'evil-own']), 50);
    assert.equal(r.resolve('lobby').deviceId, 'cam-1', 'online or newer, the second device does not take it');
    assert.deepEqual(r.get('evil-1')?.labels, ['evil-own']);
    assert.deepEqual(r.get('evil-1')?.refusedLabels, ['lobby']);
    assert.equal(r.labels.refused, 1);
    assert.ok(
      events.some((e) => /hello from evil-1 claims the label lobby, held by cam-1: refused/.test(e)),
      events.join('\n'),
    );
    // Its next hello (a reconnect) is refused alike; the first device's own hellos keep it.
    r.hello(hello('evil-1', ['127.0.0.9'], 9, ['lobby']), 60);
    r.hello(hello('cam-1', ['127.0.0.11'], 9001, ['lobby']), 70);
    assert.equal(r.resolve('lobby').deviceId, 'cam-1');
    assert.equal(r.labels.refused, 2);
  });

  it('the operator releases a label, or gives it to a device whose hello announces it; the registry file’s labels need no claim', () => {
    const path = file({});
    const { r } = registry(path, ['127.0.0.0/8']);
    r.hello(hello('evil-1', ['127.0.0.9'], 9, ['lobby']), 5);
    r.hello(hello('cam-1', ['127.0.0.11'], 9001, ['lobby']), 50);
    assert.equal(r.resolve('lobby').deviceId, 'evil-1', 'the hostile device came first');
    assert.throws(() => r.assignLabel('lobby', 'cam-2', 60), code('bad_request'));
    assert.equal(r.assignLabel('lobby', 'cam-1', 60), 'evil-1');
    assert.equal(r.resolve('lobby').deviceId, 'cam-1');
    assert.equal(r.releaseLabel('lobby'), 'cam-1');
    assert.throws(() => r.resolve('lobby'), code('target_unknown'), 'free: nobody holds it until a hello claims it');
    r.hello(hello('evil-1', ['127.0.0.9'], 9, ['lobby']), 70);
    assert.equal(r.resolve('lobby').deviceId, 'evil-1', 'free, the next hello claims it');
    // The registry file gives it: the file's device holds it, no hello does.
    writeFileSync(path, JSON.stringify({ devices: [{ device_id: 'cam-1', labels: ['lobby'] }] }));
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    assert.equal(r.resolve('lobby').deviceId, 'cam-1');
    assert.deepEqual(r.get('evil-1')?.labels, []);
  });

  it('label holders survive a restart (saved with the hellos); a state saved before them binds them again, oldest hello first', () => {
    const { r } = registry(file({}), ['127.0.0.0/8']);
    r.hello(hello('cam-1', ['127.0.0.11'], 9001, ['lobby']), 5);
    r.hello(hello('evil-1', ['127.0.0.9'], 9, ['lobby']), 50);
    const { r: again } = registry(file({}), ['127.0.0.0/8']);
    again.restore(r.savedHellos(), r.labels.bindings());
    assert.equal(again.resolve('lobby').deviceId, 'cam-1');
    const { r: old } = registry(file({}), ['127.0.0.0/8']);
    old.restore(r.savedHellos());
    assert.equal(old.resolve('lobby').deviceId, 'cam-1', 'the older hello binds first');
  });

  it('a hello’s tool address is the address its bus connection came from, when the hub knows it', () => {
    const from = new Map([['cam-1', '127.0.0.5']]);
    const r = new HubDeviceRegistry({
      path: file({}),
      required: true,
      networks: DeviceNetworks.parse(['127.0.0.0/8']),
      busId: 'bus-x',
      lanIp: '10.1.1.1',
      isOnline: () => true,
      connectedFrom: (id) => from.get(id),
      onEvent: () => undefined,
    });
    r.hello(hello('cam-1', ['127.0.0.9'], 9001), 1);
    assert.equal(r.get('cam-1')?.toolUrl, 'http://127.0.0.5:9001/mcp', 'not the 127.0.0.9 it announced');
    assert.equal(r.get('cam-1')?.connectedFrom, '127.0.0.5');
    assert.throws(() => r.resolve('127.0.0.9:9001'), code('target_unknown'), 'its announced address names nothing');
    assert.equal(r.resolve('127.0.0.5:9001').deviceId, 'cam-1');
    from.delete('cam-1');
    r.hello(hello('cam-1', ['127.0.0.9'], 9001), 4);
    assert.equal(r.get('cam-1')?.toolUrl, 'http://127.0.0.5:9001/mcp', 'its retained hello heard again while it is away keeps where it connected from');
    from.set('cam-far', '::ffff:192.0.2.7');
    r.hello(hello('cam-far', ['127.0.0.1'], 9), 2);
    assert.equal(r.get('cam-far')?.toolUrl, null, 'connected from outside the device networks: its loopback claim is not believed');
    assert.match(r.get('cam-far')?.unreachableReason ?? '', /its bus connection comes from 192\.0\.2\.7, outside the device networks/);
    r.hello(hello('cam-ext', ['127.0.0.3'], 9003), 3);
    assert.equal(
      r.get('cam-ext')?.toolUrl,
      'http://127.0.0.3:9003/mcp',
      'the hub cannot tell (external broker): the hello’s address inside the device networks',
    );
  });

  it('picks up an edited file and keeps the last good one when an edit is broken', async () => {
    const path = file({ devices: [{ device_id: 'x1', ips: ['127.0.0.5'] }] });
    const { r, events } = registry(path);
    assert.deepEqual(
      r.list().map((d) => d.deviceId),
      ['x1'],
    );
    writeFileSync(path, JSON.stringify({ devices: [{ device_id: 'x2', ips: ['127.0.0.6'] }] }));
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    await new Promise((res) => setTimeout(res, 1100));
    assert.deepEqual(
      r.list().map((d) => d.deviceId),
      ['x2'],
    );
    writeFileSync(path, '{ broken');
    utimesSync(path, new Date(), new Date(Date.now() + 10_000));
    await new Promise((res) => setTimeout(res, 1100));
    assert.deepEqual(
      r.list().map((d) => d.deviceId),
      ['x2'],
    );
    assert.ok(events.some((e) => /not reloaded/.test(e)));
  });
});

describe('GET /fleet/registry', () => {
  it('shows registry, vms_lan_ip, shadows and path, merged from the file and hello', async () => {
    const path = file({
      bus_id: 'fleet-7',
      vms_lan_ip: '192.168.7.1',
      devices: [{ device_id: 'cam-file', ips: ['10.7.0.2'], labels: ['canary'], roles: ['camera'] }],
    });
    const bus = new MemoryBus();
    const hub = await testHub({ bus, registryFile: path, deviceNetworks: ['127.0.0.0/8'] });
    try {
      await bus.publish('devices/cam-hello/hello', JSON.stringify(msg.hello('cam-hello', ['127.0.0.1'], 9555, ['dock'])));
      await bus.publish('devices/cam-far/hello', JSON.stringify(msg.hello('cam-far', ['203.0.113.4'], 9556)));
      const r = (await api(hub.url, '/fleet/registry')).body;
      assert.equal(r.registry.bus_id, 'fleet-7');
      assert.deepEqual(
        r.registry.devices.map((d: { device_id: string }) => d.device_id),
        ['cam-far', 'cam-file', 'cam-hello'],
      );
      assert.equal(r.vms_lan_ip, '192.168.7.1');
      assert.equal(r.path, path);
      const byId = Object.fromEntries(r.shadows.map((s: { device_id: string }) => [s.device_id, s]));
      for (const s of r.shadows) for (const k of ['device_id', 'ips', 'labels', 'roles', 'bus_id']) assert.ok(k in s, k);
      assert.equal(byId['cam-file'].reachable, true);
      assert.equal(byId['cam-file'].source, 'file');
      assert.equal(byId['cam-hello'].tool_url, 'http://127.0.0.1:9555/mcp');
      assert.equal(byId['cam-far'].reachable, false);
      const canary = (await api(hub.url, '/fleet/registry?label=canary')).body;
      assert.deepEqual(
        canary.shadows.map((s: { device_id: string }) => s.device_id),
        ['cam-file'],
      );
      const far = await api(hub.url, '/tools/call?target=cam-far', { json: { tool: 'get_system_health', arguments: {} } });
      assert.equal(far.status, 403);
      assert.equal(far.body.error.code, 'target_not_allowed');
    } finally {
      await hub.close();
      await bus.close();
    }
  });

  it('takes a hello (or status, health) only from its own device\u2019s topic', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, deviceNetworks: ['127.0.0.0/8'] });
    try {
      await bus.publish('devices/cam-v/hello', JSON.stringify(msg.hello('cam-v', ['127.0.0.1'], 9555, ['canary'])));
      // Another bus client speaks for cam-v: its hello would move cam-v's tool calls elsewhere.
      await bus.publish('devices/intruder/hello', JSON.stringify(msg.hello('cam-v', ['127.0.0.9'], 9999, ['canary'])));
      await bus.publish('devices/intruder/status', JSON.stringify(msg.status('cam-v', 'offline')));
      const shadows = (await api(hub.url, '/fleet/registry')).body.shadows;
      assert.deepEqual(
        shadows.map((s: { device_id: string }) => s.device_id),
        ['cam-v'],
      );
      assert.equal(shadows[0].tool_url, 'http://127.0.0.1:9555/mcp');
      const c = (await api(hub.url, '/fleet/mqtt/config')).body.ingest;
      assert.equal(c.invalid, 2);
      const refused = (await api(hub.url, '/debug/events?kind=ingest_invalid&device=intruder')).body.events;
      assert.equal(refused.length, 2);
      assert.match(refused[0].message, /^schema: device_id: "cam-v" is not .*intruder/);
    } finally {
      await hub.close();
      await bus.close();
    }
  });

  it('refuses to start when the named registry file is broken', async () => {
    await assert.rejects(testHub({ bus: new MemoryBus(), registryFile: file({ devices: 'none' }) }), code('config_invalid'));
  });
});

describe('a fleet saying hello at once', () => {
  it('records the first devices registered by hello one by one, and the rest in one ring record a second that names them', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, deviceNetworks: ['127.0.0.0/8'] });
    try {
      const ids = Array.from({ length: 200 }, (_, i) => `cam-f${String(i).padStart(3, '0')}`);
      for (const id of ids) await bus.publish(`devices/${id}/hello`, JSON.stringify(msg.hello(id, ['127.0.0.1'], 9555, [id])));
      // A record per device pushed the hub's failures out of the ring (2 000 records) when a thousand connected.
      const events = await waitFor('every device recorded', async () => {
        const all = (await api(hub.url, '/debug/events?kind=registry&limit=1000')).body.events as { device_id?: string; details?: { count?: number } }[];
        const told = all.reduce((n, e) => n + (e.device_id ? 1 : (e.details?.count ?? 0)), 0);
        return told === ids.length ? all : undefined;
      });
      assert.ok(events.length <= 30, `${events.length} ring records for ${ids.length} hellos`);
      const folded = events.filter((e) => !e.device_id);
      assert.ok(folded.length >= 1);
      assert.match(JSON.stringify(folded[0]), /more device\(s\) registered by hello within 1000 ms: cam-f/);
    } finally {
      await hub.close();
      await bus.close();
    }
  });
});

describe('device networks', () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses', () => {
    const n = DeviceNetworks.parse('127.0.0.0/8, 10.20.0.0/16,fd00::/8');
    assert.ok(n.contains('127.9.9.9'));
    assert.ok(n.contains('10.20.255.1'));
    assert.ok(!n.contains('10.21.0.1'));
    assert.ok(n.contains('fd00::2'));
    assert.ok(!n.contains('fe80::1'));
    assert.ok(n.contains('::ffff:127.0.0.1'));
    assert.ok(!n.contains('not-an-ip'));
    assert.ok(DeviceNetworks.parse('192.0.2.7').contains('192.0.2.7'));
    for (const bad of ['10.0.0.0/40', 'abc/8', '10.0.0.0/x', 'fd00::/129']) assert.throws(() => DeviceNetworks.parse(bad), code('config_invalid'), bad);
  });
});
