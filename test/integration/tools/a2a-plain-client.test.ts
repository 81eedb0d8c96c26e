/**
 * A client built from the README alone (a2a-plain-client.ts: node:crypto and fetch) against a real
 * hub with its embedded broker: the README's worked examples, a forwarded peer_hello, each refusal
 * with its own code, and targets the hub must not contact. The device's sidecar is the test double
 * of a2a-helpers.ts (a device process with the real sidecar is a2a-device.test.ts).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { signA2a } from '../../../lib/auth/a2a-signature.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { a2aTestHub, startTestSidecar, type TestSidecar } from '../../support/a2a-helpers.js';
import { a2aKeyFromFleetSecret, canonicalQuery, send, signPeerQuery } from '../../support/a2a-plain-client.js';
import { api, endClient, mqttClient, msg, publish, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

/** The README's worked examples: key, timestamp, nonce, request and the signature they give. */
const EXAMPLE_KEY = 'example-a2a-key-do-not-use';
const EXAMPLES = [
  {
    params: [
      ['target', 'cam-1'],
      ['q', 'peer_hello'],
    ] as [string, string][],
    body: '',
    nonce: 'example-nonce-0001',
    canonical:
      'LOOKOUT-A2A-HMAC-SHA256\nPOST\n/a2a/query\nq=peer_hello&target=cam-1\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n1764000000\nexample-nonce-0001',
    signature: 'v1=ca7a474056239bfe666aeca442f404cfedd1fa4b7a482d11c651aae408f094e9',
  },
  {
    params: [
      ['target', 'cam-1'],
      ['q', 'peer_hello'],
      ['trace', "run 7/a*b'"],
    ] as [string, string][],
    body: '{"hello":"peer"}',
    nonce: 'example-nonce-0002',
    canonical:
      'LOOKOUT-A2A-HMAC-SHA256\nPOST\n/a2a/query\nq=peer_hello&target=cam-1&trace=run%207%2Fa%2Ab%27\n31280d1860d05a67ddae6fb5883f83950690205f67a6ebd6f785ee96304fa8c0\n1764000000\nexample-nonce-0002',
    signature: 'v1=24f4f357fde0d4c0b2a406b294c8ee000bf3cd08f1702cccf41aef4b040573e9',
  },
];

describe('an A2A client from the README, with node:crypto and fetch only', () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  let sidecar: TestSidecar;
  let bus: MqttClient;
  let bystander: Server;
  let bystanderConnections = 0;
  const key = a2aKeyFromFleetSecret(TEST_FLEET_SECRET);

  before(async () => {
    scratch = await scratchDir('lookout-a2a-plain-');
    const fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1'), ips: ['127.0.0.1'] }],
      hubDataDir: join(scratch.dir, 'hub'),
    });
    sidecar = await startTestSidecar({ deviceId: 'cam-1', ...fleet.device('cam-1') });
    // Something listening where no registered device is: the hub must never dial it.
    bystander = createServer((s) => {
      bystanderConnections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => bystander.listen(0, '127.0.0.9', resolve));
    hub = await a2aTestHub({ dataDir: join(scratch.dir, 'hub') });
    bus = await mqttClient(hub.brokerUrl);
    await publish(bus, 'devices/cam-1/hello', { ...msg.hello('cam-1', ['127.0.0.1'], 9), ports: { tools: 9, sidecar: sidecar.port } });
    await publish(bus, 'devices/cam-far/hello', {
      ...msg.hello('cam-far', ['198.51.100.4'], 9),
      ports: { tools: 9, sidecar: (bystander.address() as { port: number }).port },
    });
    await waitFor('both hellos in the registry', async () => (await api(hub.url, '/fleet/registry')).body.registry.devices.length === 2);
  });
  after(async () => {
    if (bus) await endClient(bus);
    await hub?.close();
    await sidecar?.close();
    await new Promise((resolve) => bystander?.close(resolve));
    await scratch?.cleanup();
  });

  it('imports nothing but node:crypto', async () => {
    const source = await readFile(join(packageRoot(), 'test', 'support', 'a2a-plain-client.ts'), 'utf8');
    const imports = [...source.matchAll(/^\s*import\b[^;]*?from\s+'([^']+)'/gm), ...source.matchAll(/\bimport\(\s*'([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(imports, ['node:crypto']);
  });

  it('gives the README’s worked examples, as the hub’s own signer does', () => {
    for (const ex of EXAMPLES) {
      const signed = signPeerQuery('http://hub', EXAMPLE_KEY, ex.params, { body: Buffer.from(ex.body), at: 1764000000, nonce: ex.nonce });
      assert.equal(signed.canonical, ex.canonical);
      assert.equal(signed.headers['X-Lookout-Signature'], ex.signature);
      const core = signA2a(EXAMPLE_KEY, { method: 'POST', path: '/a2a/query', query: Object.fromEntries(ex.params), body: ex.body }, 1764000000_000, ex.nonce);
      assert.equal(core['X-Lookout-Signature'], ex.signature);
    }
  });

  it('sends a signed peer_hello; the hub forwards it over mTLS and returns the peer’s acknowledgement', async () => {
    const r = await send(
      signPeerQuery(hub.url, key, [
        ['q', 'peer_hello'],
        ['target', 'cam-1'],
      ]),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.q, r.body.ack, r.body.device_id, r.body.caller, r.body.target], ['peer_hello', true, 'cam-1', 'lookout-hub', 'cam-1']);
    // A body and extra parameters are signed as they are sent.
    const withBody = await send(signPeerQuery(hub.url, key, EXAMPLES[1].params, { body: Buffer.from(EXAMPLES[1].body) }));
    assert.equal(withBody.status, 200, JSON.stringify(withBody.body));
  });

  it('each bad signature gets 401 with a code of its own', async () => {
    const params: [string, string][] = [
      ['q', 'peer_hello'],
      ['target', 'cam-1'],
    ];
    const code = async (request: ReturnType<typeof signPeerQuery>) => {
      const r = await send(request);
      return [r.status, r.body.error?.code];
    };
    const missing = signPeerQuery(hub.url, key, params);
    missing.headers = {};
    assert.deepEqual(await code(missing), [401, 'a2a.signature_missing']);

    const malformed = signPeerQuery(hub.url, key, params);
    malformed.headers['X-Lookout-Signature'] = malformed.headers['X-Lookout-Signature'].replace('v1=', 'v2=');
    assert.deepEqual(await code(malformed), [401, 'a2a.signature_malformed']);

    assert.deepEqual(await code(signPeerQuery(hub.url, key, params, { at: Math.floor(Date.now() / 1000) - 3600 })), [401, 'a2a.signature_stale']);

    const once = signPeerQuery(hub.url, key, params);
    assert.deepEqual(await code(once), [200, undefined]);
    assert.deepEqual(await code(once), [401, 'a2a.signature_replayed']);

    assert.deepEqual(await code(signPeerQuery(hub.url, 'not-the-fleet-a2a-key-000', params)), [401, 'a2a.signature_invalid']);
    const tampered = signPeerQuery(hub.url, key, params);
    tampered.url = tampered.url.replace('target=cam-1', 'target=cam-2');
    assert.deepEqual(await code(tampered), [401, 'a2a.signature_invalid']);
  });

  it('an unknown target, an unregistered host and a device outside the device networks: refused, never contacted', async () => {
    const bystanderTarget = `127.0.0.9:${(bystander.address() as { port: number }).port}`;
    const cases: [string, number, string][] = [
      ['cam-404', 404, 'target_unknown'],
      [bystanderTarget, 404, 'target_unknown'],
      ['cam-far', 403, 'target_not_allowed'],
    ];
    for (const [target, status, errorCode] of cases) {
      const r = await send(
        signPeerQuery(hub.url, key, [
          ['q', 'peer_hello'],
          ['target', target],
        ]),
      );
      assert.deepEqual([r.status, r.body.error?.code], [status, errorCode], target);
    }
    assert.equal(bystanderConnections, 0);
    assert.equal(canonicalQuery([['target', bystanderTarget]]), `target=127.0.0.9%3A${bystanderTarget.split(':')[1]}`);
  });
});
