import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { CameraProfileToken } from '../../../plugins/camera-profile/src/service.js';
import { startPluginDevice, type PluginDevice } from '../../support/plugin-device.js';

// The Events service over raw SOAP 1.2, as ONVIF clients (Home Assistant, ODM) speak it: WS-Security
// PasswordDigest on every request, WS-Addressing headers, a pull-point subscription at its own address.
// The detector (sim back-end) and the tracker run on the simulated people-crossing scene, so person
// events come from the scene itself, not from a fake.

const USER = 'admin';
const PASS = 'onvif-events-pass';
const NS = {
  env: 'http://www.w3.org/2003/05/soap-envelope',
  wsa: 'http://www.w3.org/2005/08/addressing',
  wsnt: 'http://docs.oasis-open.org/wsn/b-2',
  wstop: 'http://docs.oasis-open.org/wsn/t-1',
  tev: 'http://www.onvif.org/ver10/events/wsdl',
  tt: 'http://www.onvif.org/ver10/schema',
  tns1: 'http://www.onvif.org/ver10/topics',
  trt: 'http://www.onvif.org/ver10/media/wsdl',
  tr2: 'http://www.onvif.org/ver20/media/wsdl',
  tds: 'http://www.onvif.org/ver10/device/wsdl',
};
const CONCRETE_SET = 'http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet';
const PERSON = 'tns1:RuleEngine/ObjectDetection/Person';
const PEOPLE = 'tns1:RuleEngine/PeopleDetector/People';
const MOTION = 'tns1:RuleEngine/CellMotionDetector/Motion';
const CONFIGURATION_CHANGED = 'tns1:Media/ConfigurationChanged';

let broker: EmbeddedBroker;
let device: PluginDevice;
let port: number;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'onvif-detect-camera.json'), 'utf8')) as { plugins: string[] };
  device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    // The tracker (track_id) is on from layer2; the detector shares the camera with the encoder.
    layer: 'layer2',
    env: {
      ENCODE_RESOLUTION: '320x240',
      ENCODE_FPS: '5',
      LIVE_PORT: '0',
      HEALTH_INTERVAL_MS: '60000',
      EDGE_V3_ENCODE_ONLY: '0',
      SIM_SCENARIO: 'people-crossing',
      SIM_DET_FP_RATE: '0',
      RF_DETR_STRIDE_FPS: '5',
      // One tracker frame per detector frame at 5 Hz.
      TRACKER_FRAME_MS: '200',
      ONVIF_USER: USER,
      ONVIF_PASSWORD: PASS,
    },
    prepare: async (dataDir) => {
      await mkdir(join(dataDir, 'data', 'config'), { recursive: true });
      const profile = { codec: 'H265', resolution: '1920x1080', fps: 5, bitrate_kbps: 300, gop: 5, rate_control: 'VBR' };
      await writeFile(join(dataDir, 'data', 'config', 'camera_profile.json'), JSON.stringify({ profile, updated_at: new Date().toISOString() }));
    },
  });
  for (const name of ['onvif', 'detector', 'tracker']) {
    const plugin = device.runtime.plugins.find((p) => p.name === name)!;
    assert.equal(plugin.state, 'ok', `${name}: ${plugin.message}`);
  }
  port = device.runtime.ports.onvif;
  assert.ok(port > 0, 'the onvif port is announced');
});

after(async () => {
  await device?.stop();
  await broker?.close();
});

// --- SOAP as a client writes it ---

/** WS-Security UsernameToken with PasswordDigest = base64(sha1(nonce + created + password)), a fresh nonce each time. */
function security(): string {
  const nonce = randomBytes(16);
  const created = new Date().toISOString();
  const digest = createHash('sha1')
    .update(Buffer.concat([nonce, Buffer.from(created), Buffer.from(PASS)]))
    .digest('base64');
  return (
    `<wsse:Security s:mustUnderstand="1" xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" ` +
    `xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"><wsse:UsernameToken><wsse:Username>${USER}</wsse:Username>` +
    `<wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">${digest}</wsse:Password>` +
    `<wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">${nonce.toString('base64')}</wsse:Nonce>` +
    `<wsu:Created>${created}</wsu:Created></wsse:UsernameToken></wsse:Security>`
  );
}

/** An authenticated envelope with the WS-Addressing headers pull-point clients send (Action, MessageID, To). */
function envelope(body: string, to: string, action: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${NS.env}" xmlns:a="${NS.wsa}" xmlns:tev="${NS.tev}" xmlns:wsnt="${NS.wsnt}" ` +
    `xmlns:trt="${NS.trt}" xmlns:tr2="${NS.tr2}" xmlns:tt="${NS.tt}" xmlns:tds="${NS.tds}"><s:Header>` +
    `<a:Action s:mustUnderstand="1">${action}</a:Action><a:MessageID>urn:uuid:${randomUUID()}</a:MessageID><a:To s:mustUnderstand="1">${to}</a:To>` +
    `${security()}</s:Header><s:Body>${body}</s:Body></s:Envelope>`
  );
}

interface Reply {
  status: number;
  body: string;
  doc: ReturnType<DOMParser['parseFromString']>;
  ms: number;
}

/** POSTs an envelope to a full URL (a subscription's own address included). */
function soap(url: string, body: string, action: string): Promise<Reply> {
  const target = new URL(url);
  const xml = envelope(body, url, action);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: Number(target.port),
        path: target.pathname,
        method: 'POST',
        headers: { 'Content-Type': `application/soap+xml; charset=utf-8; action="${action}"` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, doc: new DOMParser().parseFromString(text, 'text/xml'), ms: Date.now() - started });
        });
      },
    );
    req.on('error', reject);
    req.end(xml);
  });
}

const eventsUrl = () => `http://127.0.0.1:${port}/onvif/events_service`;
const ACTION = {
  properties: `${NS.tev}/EventPortType/GetEventPropertiesRequest`,
  create: `${NS.tev}/EventPortType/CreatePullPointSubscriptionRequest`,
  pull: `${NS.tev}/PullPointSubscription/PullMessagesRequest`,
  renew: `${NS.wsnt}/SubscriptionManager/RenewRequest`,
  unsubscribe: `${NS.wsnt}/SubscriptionManager/UnsubscribeRequest`,
};

// --- reading answers by namespace and local name ---

function elements(
  node: { getElementsByTagNameNS(ns: string, local: string): { length: number; item(i: number): Element | null } },
  ns: string,
  local: string,
): Element[] {
  const list = node.getElementsByTagNameNS(ns, local);
  return Array.from({ length: list.length }, (_, i) => list.item(i)!);
}

function one(reply: Reply, ns: string, local: string): Element {
  const found = elements(reply.doc, ns, local);
  assert.equal(found.length, 1, `one ${local} in ${reply.body}`);
  return found[0];
}

const textOf = (el: Element): string => (el.textContent ?? '').trim();
const childrenOf = (el: Element): Element[] =>
  Array.from({ length: el.childNodes.length }, (_, i) => el.childNodes.item(i)).filter((n): n is Element => n !== null && n.nodeType === 1);

/** The SOAP 1.2 fault's subcode values, outermost first. */
function faultSubcodes(reply: Reply): string[] {
  assert.equal(elements(reply.doc, NS.env, 'Fault').length, 1, `a SOAP fault: ${reply.body}`);
  return elements(reply.doc, NS.env, 'Value').map(textOf).slice(1);
}

interface Notification {
  /** The Topic as `tns1:…`, its prefix resolved against the answer's declarations. */
  topic: string;
  dialect: string | null;
  utcTime: string;
  operation: string | null;
  source: Record<string, string>;
  data: Record<string, string>;
}

function simpleItems(parent: Element | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!parent) return out;
  for (const item of elements(parent, NS.tt, 'SimpleItem')) out[item.getAttribute('Name')!] = item.getAttribute('Value')!;
  return out;
}

function notifications(reply: Reply): Notification[] {
  return elements(reply.doc, NS.wsnt, 'NotificationMessage').map((n) => {
    const topicEl = elements(n, NS.wsnt, 'Topic')[0];
    const [prefix, path] = textOf(topicEl).split(':');
    // A client resolves the QName: whatever the prefix, it must stand for the ONVIF topic namespace.
    assert.equal(topicEl.lookupNamespaceURI(prefix), NS.tns1, `the topic prefix "${prefix}" is declared as tns1`);
    const message = elements(n, NS.tt, 'Message')[0];
    return {
      topic: `tns1:${path}`,
      dialect: topicEl.getAttribute('Dialect'),
      utcTime: message.getAttribute('UtcTime')!,
      operation: message.getAttribute('PropertyOperation') || null,
      source: simpleItems(elements(message, NS.tt, 'Source')[0]),
      data: simpleItems(elements(message, NS.tt, 'Data')[0]),
    };
  });
}

// --- the operations ---

interface Subscription {
  address: string;
  currentTime: number;
  terminationTime: number;
}

async function subscribe(options: { initialTermination?: string; filter?: string } = {}): Promise<Subscription> {
  const filter = options.filter
    ? `<tev:Filter><wsnt:TopicExpression Dialect="${CONCRETE_SET}" xmlns:ev="${NS.tns1}">${options.filter}</wsnt:TopicExpression></tev:Filter>`
    : '';
  const termination = options.initialTermination ? `<tev:InitialTerminationTime>${options.initialTermination}</tev:InitialTerminationTime>` : '';
  const r = await soap(eventsUrl(), `<tev:CreatePullPointSubscription>${filter}${termination}</tev:CreatePullPointSubscription>`, ACTION.create);
  assert.equal(r.status, 200, r.body);
  const reference = one(r, NS.tev, 'SubscriptionReference');
  return {
    address: textOf(elements(reference, NS.wsa, 'Address')[0]),
    currentTime: Date.parse(textOf(one(r, NS.wsnt, 'CurrentTime'))),
    terminationTime: Date.parse(textOf(one(r, NS.wsnt, 'TerminationTime'))),
  };
}

function pull(address: string, timeout: string, limit = 100): Promise<Reply> {
  return soap(address, `<tev:PullMessages><tev:Timeout>${timeout}</tev:Timeout><tev:MessageLimit>${limit}</tev:MessageLimit></tev:PullMessages>`, ACTION.pull);
}

/** Pulls (PT5S, 100 at most) until `done` holds over everything received, or fails after `timeoutMs` saying what it saw. */
async function pullUntil(address: string, done: (seen: Notification[]) => boolean, what: string, timeoutMs = 30_000): Promise<Notification[]> {
  const seen: Notification[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(seen)) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; received: ${JSON.stringify([...new Set(seen.map((n) => n.topic))])} (${seen.length})`,
      );
    }
    const r = await pull(address, 'PT5S');
    assert.equal(r.status, 200, r.body);
    seen.push(...notifications(r));
  }
  return seen;
}

async function unsubscribe(address: string): Promise<Reply> {
  return soap(address, '<wsnt:Unsubscribe/>', ACTION.unsubscribe);
}

async function stillUp(): Promise<void> {
  const r = await soap(`http://127.0.0.1:${port}/onvif/device_service`, '<tds:GetSystemDateAndTime/>', `${NS.tds}/GetSystemDateAndTime`);
  assert.equal(r.status, 200, r.body);
  assert.equal(textOf(one(r, NS.tt, 'DateTimeType')), 'NTP');
}

// --- the tests ---

test('GetEventProperties lists the topic set: People (IsPeople), Motion (IsMotion), the person detection, ConfigurationChanged', async () => {
  const r = await soap(eventsUrl(), '<tev:GetEventProperties/>', ACTION.properties);
  assert.equal(r.status, 200, r.body);
  assert.match(textOf(one(r, NS.tev, 'TopicNamespaceLocation')), /topicns\.xml$/);
  assert.equal(textOf(one(r, NS.wsnt, 'FixedTopicSet')), 'true');
  assert.ok(elements(r.doc, NS.wsnt, 'TopicExpressionDialect').map(textOf).includes(CONCRETE_SET));
  // The topic tree: the first level in the tns1 namespace, deeper levels unqualified; leaves carry wstop:topic="true".
  const set = one(r, NS.wstop, 'TopicSet');
  const topics = new Map<string, Element>();
  const walk = (el: Element, path: string[]): void => {
    for (const c of childrenOf(el)) {
      if (c.namespaceURI === NS.tt) continue; // MessageDescription
      const here = [...path, c.localName!];
      if (path.length === 0) assert.equal(c.namespaceURI, NS.tns1, `${c.localName} is a tns1 topic`);
      else assert.equal(c.namespaceURI ?? null, null, `${here.join('/')} is unqualified`);
      if (c.getAttributeNS(NS.wstop, 'topic') === 'true') topics.set(`tns1:${here.join('/')}`, c);
      walk(c, here);
    }
  };
  walk(set, []);
  assert.deepEqual([...topics.keys()].sort(), [CONFIGURATION_CHANGED, PERSON, MOTION, PEOPLE].sort());
  const describe = (topic: string) => {
    const description = childrenOf(topics.get(topic)!).find((c) => c.localName === 'MessageDescription' && c.namespaceURI === NS.tt)!;
    const items = (tag: string) =>
      elements(description, NS.tt, tag).flatMap((part) =>
        elements(part, NS.tt, 'SimpleItemDescription').map((i) => `${i.getAttribute('Name')}:${i.getAttribute('Type')}`),
      );
    return { isProperty: description.getAttribute('IsProperty'), source: items('Source'), data: items('Data') };
  };
  assert.deepEqual(describe(PEOPLE), {
    isProperty: 'true',
    source: ['VideoSourceConfigurationToken:tt:ReferenceToken', 'VideoAnalyticsConfigurationToken:tt:ReferenceToken', 'Rule:xs:string'],
    data: ['IsPeople:xs:boolean'],
  });
  assert.deepEqual(describe(MOTION).data, ['IsMotion:xs:boolean']);
  assert.equal(describe(MOTION).isProperty, 'true');
  assert.deepEqual(describe(PERSON).data, ['b:xs:string', 'p:xs:float', 'conf:xs:float', 'track_id:xs:int']);
  assert.deepEqual(describe(CONFIGURATION_CHANGED), { isProperty: 'false', source: ['Token:tt:ReferenceToken', 'Type:xs:string'], data: [] });
});

test('CreatePullPointSubscription gives each subscription its own address; PullMessages there receives person events from the simulated scene', async () => {
  const a = await subscribe({ initialTermination: 'PT60S' });
  const b = await subscribe({ initialTermination: 'PT60S' });
  for (const sub of [a, b]) {
    assert.match(sub.address, new RegExp(`^http://127\\.0\\.0\\.1:${port}/onvif/subscription/[^/]+$`));
    assert.ok(Math.abs(sub.currentTime - Date.now()) < 60_000, 'CurrentTime is the device clock');
    assert.ok(Math.abs(sub.terminationTime - sub.currentTime - 60_000) <= 1000, `PT60S honoured: ${sub.terminationTime - sub.currentTime} ms`);
  }
  assert.notEqual(a.address, b.address);
  try {
    // A new subscription first gets the current state of each property (Initialized), then changes and one-off events.
    const seen = await pullUntil(
      a.address,
      (s) => s.some((n) => n.topic === PEOPLE && n.data.IsPeople === 'true') && s.some((n) => n.topic === PERSON && n.data.track_id !== undefined),
      'IsPeople true and a tracked person detection',
    );
    assert.deepEqual(
      seen.slice(0, 2).map((n) => [n.topic, n.operation]),
      [
        [PEOPLE, 'Initialized'],
        [MOTION, 'Initialized'],
      ],
      'the first messages are the Initialized states',
    );
    for (const n of seen) {
      assert.equal(n.dialect, CONCRETE_SET);
      assert.ok(Math.abs(Date.parse(n.utcTime) - Date.now()) < 120_000, `UtcTime ${n.utcTime} is wall-clock time`);
      assert.match(n.utcTime, /Z$/);
    }
    const people = seen.find((n) => n.topic === PEOPLE && n.data.IsPeople === 'true')!;
    assert.deepEqual(people.source, {
      VideoSourceConfigurationToken: people.source.VideoSourceConfigurationToken,
      VideoAnalyticsConfigurationToken: 'Analytics_1',
      Rule: 'PeopleDetector',
    });
    assert.ok(people.source.VideoSourceConfigurationToken.length > 0);
    const persons = seen.filter((n) => n.topic === PERSON);
    for (const person of persons) {
      assert.equal(person.source.Rule, 'ObjectDetector');
      const box = person.data.b.split(',').map(Number);
      assert.equal(box.length, 4, `b "${person.data.b}" is x1,y1,x2,y2`);
      assert.ok(box.every(Number.isFinite) && box[2] > box[0] && box[3] > box[1], `b "${person.data.b}" is a box`);
      const p = Number(person.data.p);
      assert.ok(p > 0 && p <= 1, `p ${person.data.p}`);
      assert.equal(person.data.conf, person.data.p);
    }
    const tracked = persons.filter((n) => n.data.track_id !== undefined);
    assert.ok(
      tracked.every((n) => /^\d+$/.test(n.data.track_id)),
      `track_id is an integer: ${tracked.map((n) => n.data.track_id).join(',')}`,
    );
    // The other subscription has its own queue: it gets its own Initialized states and the same live events.
    const other = await pullUntil(b.address, (s) => s.some((n) => n.topic === PERSON), 'a person event on the second subscription', 15_000);
    assert.deepEqual(
      other.slice(0, 2).map((n) => n.operation),
      ['Initialized', 'Initialized'],
    );
  } finally {
    for (const sub of [a, b]) assert.equal((await unsubscribe(sub.address)).status, 200);
  }
});

test('SetVideoEncoderConfiguration (Media2, then Media ver10) raises tns1:Media/ConfigurationChanged with Token and Type', async () => {
  // Filtered on ConfigurationChanged, as a client that only follows configuration does; the prefix is the request's own.
  const sub = await subscribe({ filter: 'ev:Media/ConfigurationChanged' });
  const profiles = device.runtime.service(CameraProfileToken)!;
  try {
    // A held PullMessages is answered early by the change: started before the Set, it ends well inside its 5 s.
    const held = pull(sub.address, 'PT5S');
    const set = await soap(
      `http://127.0.0.1:${port}/onvif/media2_service`,
      `<tr2:SetVideoEncoderConfiguration><tr2:Configuration token="encoder_h265" GovLength="10"><tt:Name>h265</tt:Name><tt:UseCount>1</tt:UseCount>` +
        `<tt:Encoding>H265</tt:Encoding></tr2:Configuration></tr2:SetVideoEncoderConfiguration>`,
      `${NS.tr2}/SetVideoEncoderConfiguration`,
    );
    assert.equal(set.status, 200, set.body);
    assert.equal(profiles.get().gop, 10);
    const first = await held;
    assert.equal(first.status, 200, first.body);
    const changed = notifications(first);
    const seen = changed.length ? changed : await pullUntil(sub.address, (s) => s.length > 0, 'ConfigurationChanged', 15_000);
    assert.deepEqual(
      seen.map((n) => [n.topic, n.source, n.data, n.operation]),
      [[CONFIGURATION_CHANGED, { Token: 'encoder_h265', Type: 'VideoEncoder' }, {}, null]],
      'only the filtered topic, once',
    );
    // Media ver10, the H.264 configuration (GovLength inside H264).
    const v10 = await soap(
      `http://127.0.0.1:${port}/onvif/media_service`,
      `<trt:SetVideoEncoderConfiguration><trt:Configuration token="encoder_h264"><tt:Encoding>H264</tt:Encoding><tt:H264><tt:GovLength>5</tt:GovLength></tt:H264></trt:Configuration>` +
        `<trt:ForcePersistence>true</trt:ForcePersistence></trt:SetVideoEncoderConfiguration>`,
      `${NS.trt}/SetVideoEncoderConfiguration`,
    );
    assert.equal(v10.status, 200, v10.body);
    const second = await pullUntil(sub.address, (s) => s.length > 0, 'the second ConfigurationChanged', 15_000);
    assert.deepEqual(
      second.map((n) => [n.topic, n.source]),
      [[CONFIGURATION_CHANGED, { Token: 'encoder_h264', Type: 'VideoEncoder' }]],
    );
    assert.equal(profiles.get().gop, 5);
    // A refused change raises nothing.
    const bad = await soap(
      `http://127.0.0.1:${port}/onvif/media2_service`,
      `<tr2:SetVideoEncoderConfiguration><tr2:Configuration token="encoder_h265" GovLength="9999"/></tr2:SetVideoEncoderConfiguration>`,
      `${NS.tr2}/SetVideoEncoderConfiguration`,
    );
    assert.equal(bad.status, 400);
    const quiet = await pull(sub.address, 'PT1S');
    assert.deepEqual(notifications(quiet), []);
  } finally {
    await unsubscribe(sub.address);
  }
});

test('Renew extends TerminationTime; after Unsubscribe the address answers a fault, a held PullMessages ends with one; the device stays up', async () => {
  const sub = await subscribe({ initialTermination: 'PT10S', filter: 'ev:Media/ConfigurationChanged' });
  assert.ok(Math.abs(sub.terminationTime - sub.currentTime - 10_000) <= 1000);
  const renew = await soap(sub.address, '<wsnt:Renew><wsnt:TerminationTime>PT120S</wsnt:TerminationTime></wsnt:Renew>', ACTION.renew);
  assert.equal(renew.status, 200, renew.body);
  const renewedTo = Date.parse(textOf(one(renew, NS.wsnt, 'TerminationTime')));
  const renewedAt = Date.parse(textOf(one(renew, NS.wsnt, 'CurrentTime')));
  assert.ok(renewedTo > sub.terminationTime + 100_000, 'the termination time moved out');
  assert.ok(Math.abs(renewedTo - renewedAt - 120_000) <= 1000, `PT120S from the renewal: ${renewedTo - renewedAt} ms`);
  // PullMessages reports the renewed time too.
  const quiet = await pull(sub.address, 'PT0S');
  assert.equal(quiet.status, 200, quiet.body);
  assert.equal(Date.parse(textOf(one(quiet, NS.tev, 'TerminationTime'))), renewedTo);
  // An absolute dateTime in the past is refused, the subscription stays.
  const past = await soap(sub.address, `<wsnt:Renew><wsnt:TerminationTime>2001-01-01T00:00:00Z</wsnt:TerminationTime></wsnt:Renew>`, ACTION.renew);
  assert.equal(past.status, 400);
  assert.deepEqual(faultSubcodes(past), ['ter:InvalidArgs', 'ter:InvalidArgVal']);

  // Held with nothing to say (the filter lets only configuration changes through), then unsubscribed: the held pull ends with the fault.
  const held = pull(sub.address, 'PT5S');
  const gone = await unsubscribe(sub.address);
  assert.equal(gone.status, 200, gone.body);
  assert.equal(one(gone, NS.wsnt, 'UnsubscribeResponse').childNodes.length, 0);
  const heldReply = await held;
  assert.ok(heldReply.status === 400, `the held pull ends with a fault: ${heldReply.status} ${heldReply.body}`);
  assert.ok(heldReply.ms < 4500, `at the Unsubscribe, not at its timeout (${heldReply.ms} ms)`);
  assert.deepEqual(faultSubcodes(heldReply), ['ter:InvalidArgs', 'ter:InvalidArgVal']);

  const after = await pull(sub.address, 'PT1S');
  assert.equal(after.status, 400);
  assert.match(after.body, /unknown, unsubscribed or expired/);
  assert.deepEqual(faultSubcodes(after), ['ter:InvalidArgs', 'ter:InvalidArgVal']);
  assert.equal((await soap(sub.address, '<wsnt:Renew><wsnt:TerminationTime>PT60S</wsnt:TerminationTime></wsnt:Renew>', ACTION.renew)).status, 400);
  assert.equal((await unsubscribe(sub.address)).status, 400);
  const never = await pull(`http://127.0.0.1:${port}/onvif/subscription/not-a-subscription`, 'PT1S');
  assert.deepEqual(faultSubcodes(never), ['ter:InvalidArgs', 'ter:InvalidArgVal']);
  await stillUp();
});

test('a PullMessages with nothing to say is held to its Timeout (PT1S) and answers empty', async () => {
  const sub = await subscribe({ filter: 'ev:Media/ConfigurationChanged' });
  try {
    const r = await pull(sub.address, 'PT1S');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(notifications(r), []);
    assert.equal(elements(r.doc, NS.tev, 'PullMessagesResponse').length, 1);
    assert.ok(Date.parse(textOf(one(r, NS.tev, 'CurrentTime'))) > 0);
    assert.ok(Date.parse(textOf(one(r, NS.tev, 'TerminationTime'))) > Date.now());
    // Held for the timeout, not answered at once (timers may fire a little early or late; the machine may be loaded).
    assert.ok(r.ms >= 900, `held ${r.ms} ms`);
    assert.ok(r.ms < 5000, `answered at its timeout, ${r.ms} ms`);
  } finally {
    await unsubscribe(sub.address);
  }
  await stillUp();
});
