import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { meshTimings, PeerMeshConfigSchema } from '../../../../plugins/peer-mesh/src/config.js';
import { loadMeshKey } from '../../../../plugins/peer-mesh/src/mesh-key.js';
import { mountFor, overlayMount, parseMountLine } from '../../../../plugins/peer-mesh/src/overlay-mount.js';
import { MeshNetworks } from '../../../../plugins/peer-mesh/src/mesh-networks.js';
import { helloAddress, parseMeshPeers } from '../../../../plugins/peer-mesh/src/peer-address.js';

const LAN = new MeshNetworks(['127.0.0.0/8', '192.168.1.0/24']);

test('a peer from its hello is reached on loopback beside us, else off loopback', () => {
  const hello = ['127.0.0.3', '127.0.0.1', '192.168.1.20', 'fd00::1'];
  assert.equal(helloAddress(hello, '127.0.0.2', LAN), '127.0.0.3');
  assert.equal(helloAddress(hello, '192.168.1.21', LAN), '192.168.1.20');
  assert.equal(helloAddress(['127.0.0.1'], '192.168.1.21', LAN), null, 'a remote device cannot reach its loopback');
  assert.equal(helloAddress(['127.0.0.1'], '0.0.0.0', LAN), '127.0.0.1');
  assert.equal(helloAddress(['fd00::1'], '127.0.0.2', LAN), null);
});

test('a hello address that is multicast, broadcast, unspecified or outside the mesh networks is never used', () => {
  for (const ip of ['224.0.0.251', '239.255.255.250', '255.255.255.255', '0.0.0.0', '192.168.1.255', '192.168.1.0', '10.9.9.9', '8.8.8.8']) {
    assert.equal(helloAddress([ip], '0.0.0.0', LAN), null, ip);
    assert.equal(helloAddress([ip], '192.168.1.21', LAN), null, ip);
  }
  assert.equal(helloAddress(['224.0.0.1', '10.9.9.9', '192.168.1.20'], '192.168.1.21', LAN), '192.168.1.20', 'the first usable one');
  assert.equal(helloAddress(['127.255.255.255', '127.0.0.3'], '127.0.0.2', LAN), '127.0.0.3', "loopback's broadcast address is skipped");
  const wide = new MeshNetworks(['0.0.0.0/0']);
  for (const ip of ['224.0.0.251', '255.255.255.255', '0.0.0.0', '240.0.0.1']) assert.equal(wide.admits(ip), false, `${ip} even inside 0.0.0.0/0`);
  assert.equal(wide.admits('8.8.8.8'), true);
  assert.equal(wide.admits('::ffff:192.168.1.20'), true, 'an IPv4-mapped address is its IPv4 address');
  assert.equal(new MeshNetworks(['ff00::/8', '::/0']).admits('ff02::1'), false, 'IPv6 multicast neither');
});

/** The OS's interface list is the edge of the world here: a test double of what os.networkInterfaces() returns. */
const iface = (address: string, cidr: string, internal = false) => ({ address, cidr, internal, netmask: '', mac: '', family: 'IPv4' as const });
const INTERFACES = {
  lo: [iface('127.0.0.1', '127.0.0.1/8', true)],
  eth0: [iface('192.168.1.21', '192.168.1.21/24')],
  wlan0: [iface('10.20.30.40', '10.20.30.40/16')],
};

test('MESH_NETWORKS unset: loopback plus the listen address’s network, or every interface’s when listening on all; set: exactly those', () => {
  assert.deepEqual(MeshNetworks.resolve(undefined, '127.0.0.2', INTERFACES).cidrs, ['127.0.0.0/8']);
  assert.deepEqual(MeshNetworks.resolve(undefined, '192.168.1.21', INTERFACES).cidrs, ['127.0.0.0/8', '192.168.1.0/24']);
  assert.deepEqual(MeshNetworks.resolve(undefined, '0.0.0.0', INTERFACES).cidrs, ['127.0.0.0/8', '192.168.1.0/24', '10.20.0.0/16']);
  assert.deepEqual(MeshNetworks.resolve(undefined, '192.168.7.7', INTERFACES).cidrs, ['127.0.0.0/8'], 'an address no interface holds adds nothing');
  const configured = MeshNetworks.resolve(' 10.0.0.0/8 ,172.16.0.0/12', '192.168.1.21', INTERFACES);
  assert.deepEqual(configured.cidrs, ['10.0.0.0/8', '172.16.0.0/12']);
  assert.equal(configured.admits('127.0.0.3'), false, 'set, it replaces the default (loopback included)');
  for (const bad of ['nope', '10.0.0.0/33', '10.0.0/8', '', ' , ']) assert.equal(PeerMeshConfigSchema.safeParse({ MESH_NETWORKS: bad }).success, false, bad);
  assert.equal(PeerMeshConfigSchema.parse({ MESH_NETWORKS: '10.0.0.0/8,fd00::/8' }).MESH_NETWORKS, '10.0.0.0/8,fd00::/8');
});

test('MESH_PEERS is id@ipv4:port entries; a bad one fails the config naming the key', () => {
  assert.deepEqual(parseMeshPeers(' cam-2@127.0.0.3:11555, cam-3@10.0.0.4:1 ,'), [
    { deviceId: 'cam-2', host: '127.0.0.3', port: 11555 },
    { deviceId: 'cam-3', host: '10.0.0.4', port: 1 },
  ]);
  assert.deepEqual(parseMeshPeers(undefined), []);
  for (const bad of [
    'cam-2@127.0.0.3',
    'cam-2@host.example:1',
    'cam-2@127.0.0.3:0',
    'cam-2@127.0.0.3:70000',
    'a/b@127.0.0.3:1',
    '@127.0.0.3:1',
    'cam@999.0.0.1:1',
  ]) {
    assert.throws(() => parseMeshPeers(bad), /is not id@ipv4:port/, bad);
    assert.equal(PeerMeshConfigSchema.safeParse({ MESH_PEERS: bad }).success, false, bad);
  }
  for (const bad of ['cam@224.0.0.251:1', 'cam@255.255.255.255:1', 'cam@0.0.0.0:1']) {
    assert.throws(() => parseMeshPeers(bad), /is not a unicast address/, bad);
    assert.equal(PeerMeshConfigSchema.safeParse({ MESH_PEERS: bad }).success, false, bad);
  }
});

test('timings: suspect defaults to 3 heartbeats, down to 5 and never below suspect, drop to 30 and never below down; a short key is refused', () => {
  const parse = (env: Record<string, string>) => meshTimings(PeerMeshConfigSchema.parse(env));
  assert.deepEqual(parse({}), { heartbeatMs: 2000, suspectMs: 6000, downMs: 10_000, dropMs: 60_000, windowMs: 30_000 });
  assert.deepEqual(parse({ MESH_HEARTBEAT_MS: '200', MESH_SUSPECT_MS: '5000' }), {
    heartbeatMs: 200,
    suspectMs: 5000,
    downMs: 5000,
    dropMs: 6000,
    windowMs: 30_000,
  });
  assert.equal(parse({ MESH_DOWN_MS: '9000', MESH_DROP_MS: '1000' }).dropMs, 9000, 'never below the down time');
  assert.equal(PeerMeshConfigSchema.safeParse({ MESH_KEY: 'too-short' }).success, false);
});

test('the mesh key: MESH_KEY first, else the key file; a missing, short or open file says why, never the key', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mesh-key-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'mesh.key');
  const missing = await loadMeshKey(undefined, file);
  assert.equal(missing.key, null);
  assert.match(missing.problem!, /MESH_KEY is unset and .*mesh\.key does not exist/);
  assert.deepEqual(await loadMeshKey('configured-mesh-key-0001', file), { key: Buffer.from('configured-mesh-key-0001'), source: 'MESH_KEY', problem: null });
  await writeFile(file, 'short\n', { mode: 0o600 });
  assert.match((await loadMeshKey(undefined, file)).problem!, /fewer than 16 characters/);
  await writeFile(file, 'file-mesh-key-0123456789\n');
  await chmod(file, 0o600);
  assert.deepEqual(await loadMeshKey(undefined, file), { key: Buffer.from('file-mesh-key-0123456789'), source: 'file', problem: null });
  await chmod(file, 0o644);
  const open = await loadMeshKey(undefined, file);
  assert.ok(open.key);
  assert.match(open.problem!, /readable by group or others/);
  assert.doesNotMatch(open.problem!, /file-mesh-key/);
});

const MOUNTINFO = [
  '1 0 0:30 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w',
  '2 1 0:31 / /data rw,noatime shared:1 master:2 - ext4 /dev/mmcblk0p3 rw',
  '3 1 0:32 / /rom ro,relatime - squashfs /dev/root ro',
  '4 1 0:33 / /media/my\\040disk rw - ext4 /dev/sda1 rw',
  '5 2 0:34 / /data/ro-part rw - ext4 /dev/sdb1 ro,errors=remount-ro',
  '6 1 0:35 / /data2 rw - tmpfs tmpfs rw',
  '7 6 0:36 / /data2 ro - tmpfs tmpfs ro',
  'garbage line',
].join('\n');

test('mountinfo: the longest mount point above a path, the top of a stack, escapes undone, read-only from either option set', () => {
  assert.deepEqual(parseMountLine('2 1 0:31 / /data rw,noatime shared:1 master:2 - ext4 /dev/mmcblk0p3 rw'), {
    mountPoint: '/data',
    fsType: 'ext4',
    readOnly: false,
  });
  assert.equal(parseMountLine('garbage line'), null);
  assert.equal(mountFor('/data/config', MOUNTINFO)?.mountPoint, '/data');
  assert.equal(mountFor('/database', MOUNTINFO)?.mountPoint, '/', '/data is not above /database');
  assert.deepEqual(mountFor('/media/my disk/x', MOUNTINFO), { mountPoint: '/media/my disk', fsType: 'ext4', readOnly: false });
  assert.equal(mountFor('/rom/etc', MOUNTINFO)?.readOnly, true);
  assert.equal(mountFor('/data/ro-part', MOUNTINFO)?.readOnly, true, 'the superblock is read-only');
  assert.equal(mountFor('/data2/x', MOUNTINFO)?.readOnly, true, 'the last mount on a point is the one seen');
});

test('overlay_mount is the writable mount holding the data root (resolved on disk); null when read-only or mountinfo is unreadable', async (t) => {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'mountinfo-')));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'rw', 'data'), { recursive: true });
  await mkdir(join(dir, 'ro', 'data'), { recursive: true });
  await symlink(join(dir, 'rw', 'data'), join(dir, 'link'));
  const file = join(dir, 'mountinfo');
  await writeFile(file, [MOUNTINFO, `8 1 0:40 / ${dir}/rw rw - ext4 /dev/sdc1 rw`, `9 1 0:41 / ${dir}/ro ro - ext4 /dev/sdd1 ro`].join('\n'));
  assert.equal(await overlayMount(join(dir, 'rw', 'data', 'not', 'created', 'yet'), file), `${dir}/rw`, 'the nearest existing directory decides');
  assert.equal(await overlayMount(join(dir, 'link'), file), `${dir}/rw`, 'symlinks resolved');
  assert.equal(await overlayMount(join(dir, 'ro', 'data'), file), null);
  assert.equal(await overlayMount(join(dir, 'rw'), join(dir, 'absent')), null);
});
