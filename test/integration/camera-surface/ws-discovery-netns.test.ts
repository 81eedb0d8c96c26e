/**
 * WS-Discovery end to end, inside a network namespace this test makes (test/support/netns.ts): the
 * ws-discovery plugin on simulated devices (loopback only) beside a stub ONVIF service, probed by
 * node-onvif-ts and by raw probes from the test. Nothing here can reach the machine's network.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DOMParser, type Element } from '@xmldom/xmldom';
import onvif from 'node-onvif-ts';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { loadPlugins, type LoadedRuntime } from '../../../core/src/plugin/loader.js';
import wsDiscovery from '../../../plugins/ws-discovery/src/index.js';
import { endpointAddress } from '../../../plugins/onvif/src/service.js';
import { NS } from '../../../plugins/onvif/src/soap/namespaces.js';
import { assertOwnNetns, INSIDE_NETNS, runFileInNetns } from '../../support/netns.js';
import { onvifServiceStub } from '../../unit/plugins/ws-discovery/onvif-service-stub.js';
import { waitFor } from '../../support/wait-for.js';

const GROUP = '239.255.255.250';
const PORT = 3702;

interface Device {
  id: string;
  runtime: LoadedRuntime;
  stop(): Promise<void>;
}

// The file's probes all come from 127.0.0.1: only the rate test's device keeps the default source rate.
async function startDevice(id: string, onvifPort: number, env: Record<string, string> = { WS_DISCOVERY_SOURCE_RATE: '1000' }): Promise<Device> {
  const dataDir = await mkdtemp(join(tmpdir(), 'wsd-'));
  const runtime = await loadPlugins({
    plugins: [onvifServiceStub(onvifPort), wsDiscovery],
    runtime: { kind: 'device', id, dataDir, layer: 'layer0', role: 'front_door', device: { source: 'sim', labels: ['front_door'] } },
    bus: new MemoryBus(),
    env,
    logger: createLogger({ level: 'silent' }),
  });
  const state = runtime.plugins.find((p) => p.name === 'ws-discovery')!;
  assert.equal(state.state, 'ok', state.message);
  return {
    id,
    runtime,
    async stop() {
      await runtime.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A UDP socket of the test that collects what arrives: a prober (any port) or a listener on the group. */
class Udp {
  readonly received: { text: string; from: string }[] = [];
  private constructor(readonly socket: Socket) {
    socket.on('message', (msg, rinfo) => this.received.push({ text: msg.toString('utf8'), from: `${rinfo.address}:${rinfo.port}` }));
  }

  static async open(options: { group?: boolean; address?: string } = {}): Promise<Udp> {
    assertOwnNetns();
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(options.group ? PORT : 0, options.address ?? '0.0.0.0', () => resolve());
    });
    socket.setMulticastInterface('127.0.0.1');
    if (options.group) socket.addMembership(GROUP, '127.0.0.1');
    return new Udp(socket);
  }

  send(data: string | Buffer): Promise<void> {
    assertOwnNetns();
    return new Promise((resolve, reject) => this.socket.send(data, PORT, GROUP, (err) => (err ? reject(err) : resolve())));
  }

  /** Parsed messages whose body holds `local` (ProbeMatches, Hello, Bye). */
  messages(local: string): Element[] {
    return this.received
      .map((r) => new DOMParser().parseFromString(r.text, 'text/xml').documentElement!)
      .filter((root) => root.getElementsByTagNameNS(NS.wsd, local).length > 0);
  }

  answersTo(messageId: string): Element[] {
    return this.messages('ProbeMatches').filter((root) => text(root, NS.wsa04, 'RelatesTo') === messageId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

function text(root: Element, ns: string, local: string): string | undefined {
  return root.getElementsByTagNameNS(ns, local)[0]?.textContent?.trim();
}

/** A Probe as clients write it; `types` is the Types element's content, `declarations` its xmlns attributes. */
function probe(messageId: string, types = '', declarations = 'xmlns:dn="http://www.onvif.org/ver10/network/wsdl"', scopes = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<s:Envelope xmlns:s="${NS.env}" xmlns:a="${NS.wsa04}"><s:Header>` +
    `<a:Action s:mustUnderstand="1">http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</a:Action>` +
    `<a:MessageID>${messageId}</a:MessageID>` +
    `<a:ReplyTo><a:Address>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</a:Address></a:ReplyTo>` +
    `<a:To s:mustUnderstand="1">urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To></s:Header>` +
    `<s:Body><Probe xmlns="${NS.wsd}"><Types ${declarations}>${types}</Types>${scopes ? `<Scopes>${scopes}</Scopes>` : ''}</Probe></s:Body></s:Envelope>`
  );
}

const uuid = () => `urn:uuid:${randomUUID()}`;

/**
 * Sends `first`, then a probe every device answers, and waits for that one's answers: a device
 * handles datagrams in order, so by then it has answered `first` if it ever will.
 */
async function probeThenMarker(prober: Udp, first: (string | Buffer)[], devices: number): Promise<void> {
  for (const datagram of first) await prober.send(datagram);
  const marker = uuid();
  await prober.send(probe(marker));
  await waitFor(() => prober.answersTo(marker).length >= devices, `${devices} answer(s) to the marker probe`, 10_000);
}

if (!INSIDE_NETNS) {
  runFileInNetns(import.meta.url, 'WS-Discovery');
} else {
  describe('WS-Discovery inside the namespace', () => {
    let device: Device;

    before(async () => {
      assertOwnNetns();
      device = await startDevice('cam-disc-a', 18080);
    });
    after(async () => {
      await device?.stop();
    });

    it('is found by node-onvif-ts startProbe with its XAddr, name and hardware, and announces its port', async () => {
      assert.equal(device.runtime.ports.ws_discovery, PORT);
      const found = await onvif.startProbe();
      const ours = found.filter((d) => d.urn === endpointAddress('cam-disc-a'));
      assert.equal(ours.length, 1, JSON.stringify(found));
      assert.deepEqual(ours[0].xaddrs, ['http://127.0.0.1:18080/onvif/device_service']);
      assert.equal(ours[0].name, 'cam-disc-a');
      assert.equal(ours[0].hardware, 'Lookout-Sim');
      assert.equal(ours[0].location, 'front_door');
      for (const scope of ['Profile/Streaming', 'Profile/T', 'type/video_encoder']) assert.ok(ours[0].scopes.includes(`onvif://www.onvif.org/${scope}`), scope);
    });

    it('answers a probe with empty Types once, however often it is repeated, with a well-formed ProbeMatch unicast to the sender', async () => {
      const prober = await Udp.open();
      try {
        const id = uuid();
        await probeThenMarker(prober, [probe(id), probe(id), probe(id)], 1);
        const answers = prober.answersTo(id);
        assert.equal(answers.length, 1);
        const root = answers[0];
        assert.equal(root.namespaceURI, NS.env);
        const reply = prober.received.find((r) => r.text.includes(id))!;
        assert.match(reply.from, /^127\.0\.0\.1:3702$/);
        const messageId = text(root, NS.wsa04, 'MessageID')!;
        assert.match(messageId, /^urn:uuid:[0-9a-f-]{36}$/);
        assert.notEqual(messageId, id);
        assert.equal(text(root, NS.wsa04, 'To'), 'http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous');
        assert.equal(text(root, NS.wsa04, 'Action'), 'http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches');
        const seq = root.getElementsByTagNameNS(NS.wsd, 'AppSequence')[0];
        assert.match(seq.getAttribute('InstanceId') ?? '', /^\d+$/);
        assert.match(seq.getAttribute('MessageNumber') ?? '', /^\d+$/);
        assert.equal(root.getElementsByTagNameNS(NS.wsd, 'ProbeMatch').length, 1);
        assert.equal(text(root, NS.wsa04, 'Address'), endpointAddress('cam-disc-a'));
        assert.equal(text(root, NS.wsd, 'MetadataVersion'), '1');
        assert.equal(text(root, NS.wsd, 'XAddrs'), 'http://127.0.0.1:18080/onvif/device_service');
        // Types resolve to the ONVIF namespaces through declarations on the reply itself.
        const types = root.getElementsByTagNameNS(NS.wsd, 'Types')[0];
        assert.deepEqual(
          types.textContent!.split(' ').map((q) => [types.lookupNamespaceURI(q.split(':')[0]), q.split(':')[1]]),
          [
            [NS.dn, 'NetworkVideoTransmitter'],
            [NS.tds, 'Device'],
          ],
        );
      } finally {
        await prober.close();
      }
    });

    it('answers NetworkVideoTransmitter and Device whatever the prefix, and nothing for another type or scope', async () => {
      const prober = await Udp.open();
      try {
        const wanted = {
          nvt: probe(uuid(), 'dn:NetworkVideoTransmitter'),
          device: probe(uuid(), 'zz:Device', `xmlns:zz="${NS.tds}"`),
          defaultNs: probe(uuid(), 'NetworkVideoTransmitter', `xmlns="${NS.dn}"`),
          both: probe(uuid(), 'a:NetworkVideoTransmitter b:Device', `xmlns:a="${NS.dn}" xmlns:b="${NS.tds}"`),
          scope: probe(uuid(), '', '', 'onvif://www.onvif.org/Profile/Streaming onvif://www.onvif.org/name'),
          // Some clients send a prefix they never declare: judged on the local name.
          undeclared: probe(uuid(), 'undeclared:Device', ''),
        };
        const unwanted = {
          display: probe(uuid(), 'dn:NetworkVideoDisplay'),
          otherNs: probe(uuid(), 'x:Device', 'xmlns:x="http://example.com/printers"'),
          mixed: probe(uuid(), 'dn:NetworkVideoTransmitter dn:NetworkVideoDisplay'),
          scope: probe(uuid(), '', '', 'onvif://www.onvif.org/location/garage'),
        };
        await probeThenMarker(prober, [...Object.values(unwanted), ...Object.values(wanted)], 1);
        const idOf = (xml: string) => /<a:MessageID>([^<]+)</.exec(xml)![1];
        for (const [name, xml] of Object.entries(wanted)) assert.equal(prober.answersTo(idOf(xml)).length, 1, `answered: ${name}`);
        for (const [name, xml] of Object.entries(unwanted)) assert.equal(prober.answersTo(idOf(xml)).length, 0, `not answered: ${name}`);
      } finally {
        await prober.close();
      }
    });

    it('ignores malformed and oversized datagrams and stays up', async () => {
      const prober = await Udp.open();
      try {
        const lol = '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>';
        await probeThenMarker(
          prober,
          [
            Buffer.from([0, 1, 2, 0xff, 0xfe]),
            'not xml at all',
            probe(uuid()).slice(0, 200),
            lol + probe(uuid(), '&lol2;'),
            probe('', ''),
            `<x>${'a'.repeat(40_000)}</x>`,
            probe(uuid()).replace('</s:Envelope>', `<!--${'p'.repeat(20_000)}--></s:Envelope>`),
            `<s:Envelope xmlns:s="${NS.env}"><s:Body><s:Probe/></s:Body></s:Envelope>`,
          ],
          1,
        );
        assert.equal(device.runtime.plugins.find((p) => p.name === 'ws-discovery')!.state, 'ok');
        assert.equal(prober.messages('ProbeMatches').length, 1, 'only the marker is answered');
      } finally {
        await prober.close();
      }
    });

    it('announces Hello on start and Bye on stop, on the group', async () => {
      const listener = await Udp.open({ group: true });
      try {
        const other = await startDevice('cam-disc-hello', 18081);
        const address = endpointAddress('cam-disc-hello');
        const hellos = () => listener.messages('Hello').filter((m) => text(m, NS.wsa04, 'Address') === address);
        await waitFor(() => hellos().length === 1, 'Hello', 10_000);
        const hello = hellos()[0];
        assert.equal(text(hello, NS.wsd, 'XAddrs'), 'http://127.0.0.1:18081/onvif/device_service');
        assert.equal(text(hello, NS.wsa04, 'Action'), 'http://schemas.xmlsoap.org/ws/2005/04/discovery/Hello');
        assert.match(text(hello, NS.wsd, 'Scopes') ?? '', /onvif:\/\/www\.onvif\.org\/Profile\/Streaming/);
        await other.stop();
        const byes = () => listener.messages('Bye').filter((m) => text(m, NS.wsa04, 'Address') === address);
        await waitFor(() => byes().length === 1, 'Bye', 10_000);
        const helloSeq = Number(hello.getElementsByTagNameNS(NS.wsd, 'AppSequence')[0].getAttribute('MessageNumber'));
        const byeSeq = Number(byes()[0].getElementsByTagNameNS(NS.wsd, 'AppSequence')[0].getAttribute('MessageNumber'));
        assert.ok(byeSeq > helloSeq, 'MessageNumber rises');
      } finally {
        await listener.close();
      }
    });

    it('reads a bounded rate of datagrams per sender address, whatever its ports, and answers another sender meanwhile', async () => {
      const limited = await startDevice('cam-disc-rate', 18084, { WS_DISCOVERY_SOURCE_RATE: '1' });
      const flooders = await Promise.all(Array.from({ length: 8 }, () => Udp.open()));
      const other = await Udp.open({ address: '127.0.0.2' });
      try {
        const started = performance.now();
        const ids = Array.from({ length: 48 }, uuid);
        for (const [i, id] of ids.entries()) await flooders[i % flooders.length].send(probe(id));
        const marker = uuid();
        await other.send(probe(marker));
        const fromLimited = (u: Udp, id: string) => u.answersTo(id).filter((m) => text(m, NS.wsa04, 'Address') === endpointAddress('cam-disc-rate'));
        await waitFor(() => fromLimited(other, marker).length === 1, 'the other sender is answered', 10_000);
        const seconds = (performance.now() - started) / 1000;
        const answered = ids.filter((id) => flooders.some((f) => fromLimited(f, id).length > 0)).length;
        // A burst of 4 (four seconds at 1/s), then one a second: eight ports of one address share it.
        assert.ok(answered >= 1 && answered <= 4 + Math.ceil(seconds), `${answered} of 48 answered in ${seconds.toFixed(2)} s`);
        const unlimited = ids.filter((id) =>
          flooders.some((f) => f.answersTo(id).some((m) => text(m, NS.wsa04, 'Address') === endpointAddress('cam-disc-a'))),
        ).length;
        assert.equal(unlimited, 48, 'the device with a high rate answered them all');
      } finally {
        for (const u of [...flooders, other]) await u.close();
        await limited.stop();
      }
    });

    it('two devices share UDP 3702 and both answer', async () => {
      const second = await startDevice('cam-disc-b', 18082);
      const prober = await Udp.open();
      try {
        assert.equal(second.runtime.ports.ws_discovery, PORT);
        const id = uuid();
        await probeThenMarker(prober, [probe(id, 'dn:NetworkVideoTransmitter')], 2);
        const addresses = prober.answersTo(id).map((m) => text(m, NS.wsa04, 'Address'));
        assert.deepEqual(addresses.sort(), [endpointAddress('cam-disc-a'), endpointAddress('cam-disc-b')].sort());
        const found = await onvif.startProbe();
        const urns = found.map((d) => d.urn);
        assert.ok(urns.includes(endpointAddress('cam-disc-a')) && urns.includes(endpointAddress('cam-disc-b')), JSON.stringify(urns));
      } finally {
        await prober.close();
        await second.stop();
      }
    });
  });
}
