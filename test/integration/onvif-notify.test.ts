import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { EmbeddedBroker } from '../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startPluginDevice, type PluginDevice } from '../support/plugin-device.js';
import { waitFor } from '../support/wait-for.js';

/** Events Basic Notification (Subscribe, Notify with retries, Renew, Unsubscribe) with the npm `onvif` client (0.8.x). */
interface Cam {
  [method: string]: unknown;
}
type CamCtor = new (
  o: { hostname: string; port: number; username: string; password: string; timeout?: number; autoconnect?: boolean },
  cb?: (err: Error | null) => void,
) => Cam;
const { Cam: OnvifCam } = createRequire(import.meta.url)('onvif') as { Cam: CamCtor };

const USER = 'admin';
const PASS = 'onvif-test-pass';
const NS = {
  env: 'http://www.w3.org/2003/05/soap-envelope',
  tds: 'http://www.onvif.org/ver10/device/wsdl',
  trt: 'http://www.onvif.org/ver10/media/wsdl',
  tt: 'http://www.onvif.org/ver10/schema',
  timg: 'http://www.onvif.org/ver20/imaging/wsdl',
};

let broker: EmbeddedBroker;
let device: PluginDevice;
let port: number;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'onvif-camera.json'), 'utf8')) as { plugins: string[] };
  device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    env: {
      ENCODE_RESOLUTION: '320x240',
      ENCODE_FPS: '5',
      LIVE_PORT: '0',
      HEALTH_INTERVAL_MS: '60000',
      ONVIF_USER: USER,
      ONVIF_PASSWORD: PASS,
      ONVIF_MAX_SUBSCRIPTIONS_PER_CLIENT: '2',
      ONVIF_NOTIFY_RETRY_DELAY_MS: '50',
      ONVIF_NOTIFY_RETRIES: '3',
    },
  });
  const onvif = device.runtime.plugins.find((p) => p.name === 'onvif')!;
  assert.equal(onvif.state, 'ok', onvif.message);
  port = device.runtime.ports.onvif;
});

after(async () => {
  await device?.stop();
  await broker?.close();
});

/** A connected npm `onvif` Cam, its callback methods as promises. */
async function connect(username = USER, password = PASS): Promise<(method: string, ...args: unknown[]) => Promise<unknown>> {
  const cam = await new Promise<Cam>((resolve, reject) => {
    const c: Cam = new OnvifCam({ hostname: '127.0.0.1', port, username, password, timeout: 10_000 }, (err) => (err ? reject(err) : resolve(c)));
  });
  return (method, ...args) =>
    new Promise((resolve, reject) => {
      (cam[method] as (...a: unknown[]) => void).call(cam, ...args, (err: Error | null, data: unknown) => (err ? reject(err) : resolve(data)));
    });
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function post(path: string, xml: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(xml);
  });
}

function usernameToken(user: string, pass: string): string {
  const nonce = randomBytes(16);
  const created = new Date().toISOString();
  const digest = createHash('sha1')
    .update(Buffer.concat([nonce, Buffer.from(created), Buffer.from(pass)]))
    .digest('base64');
  return (
    `<w:Security xmlns:w="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" xmlns:u="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd">` +
    `<w:UsernameToken><w:Username>${user}</w:Username><w:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">${digest}</w:Password>` +
    `<w:Nonce>${nonce.toString('base64')}</w:Nonce><u:Created>${created}</u:Created></w:UsernameToken></w:Security>`
  );
}

const envelope = (body: string, token?: [string, string]): string =>
  `<?xml version="1.0"?><s:Envelope xmlns:s="${NS.env}" xmlns:d="${NS.tds}" xmlns:t="${NS.tt}"><s:Header>${token ? usernameToken(...token) : ''}</s:Header><s:Body>${body}</s:Body></s:Envelope>`;

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');
function faultSubcodes(xml: string): string[] {
  const values = parse(xml).getElementsByTagNameNS(NS.env, 'Value');
  return Array.from({ length: values.length }, (_, i) => (values.item(i)?.textContent ?? '').trim()).slice(1);
}

/** A Notify consumer on loopback: answers 500 to the first `failFirst` POSTs, then 200; keeps what it received. */
async function consumer(failFirst: number): Promise<{ url: string; posts: { status: number; body: string; length: string | undefined }[]; server: Server }> {
  const posts: { status: number; body: string; length: string | undefined }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = posts.length < failFirst ? 500 : 200;
      posts.push({ status, body: Buffer.concat(chunks).toString('utf8'), length: req.headers['content-length'] });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, posts, server };
}

const subscribeXml = (address: string): string =>
  `<n:Subscribe xmlns:n="http://docs.oasis-open.org/wsn/b-2" xmlns:a="http://www.w3.org/2005/08/addressing"><n:ConsumerReference><a:Address>${address}</a:Address></n:ConsumerReference><n:InitialTerminationTime>PT60S</n:InitialTerminationTime></n:Subscribe>`;

test('npm onvif Subscribe: Notify reaches the consumer after failed tries (retries), Renew, Unsubscribe stops it; the pull point stays', async () => {
  const c = await consumer(2);
  try {
    const call = await connect();
    const sub = (await call('subscribe', { url: c.url })) as { subscriptionReference: { address: URL }; terminationTime: string };
    assert.match(sub.subscriptionReference.address.href, /\/onvif\/subscription\/[0-9a-f]+$/);
    // The subscription's first messages (the properties' Initialized states) arrive on the third POST.
    await waitFor(() => c.posts.some((p) => p.status === 200), 'a Notify delivered', 15_000);
    assert.deepEqual(
      c.posts.slice(0, 3).map((p) => p.status),
      [500, 500, 200],
    );
    const notify = c.posts[2];
    assert.equal(Number(notify.length), Buffer.byteLength(notify.body));
    assert.ok(parse(notify.body).getElementsByTagNameNS('http://docs.oasis-open.org/wsn/b-2', 'Notify').length === 1, notify.body);
    assert.ok(parse(notify.body).getElementsByTagNameNS('http://docs.oasis-open.org/wsn/b-2', 'NotificationMessage').length >= 1);
    const renewed = (await call('renew', {})) as { terminationTime: string };
    assert.ok(renewed.terminationTime);
    // A push subscription has no pull point; the pull point service itself stays.
    const pull = await post(
      new URL(sub.subscriptionReference.address.href).pathname,
      envelope(
        '<e:PullMessages xmlns:e="http://www.onvif.org/ver10/events/wsdl"><e:Timeout>PT1S</e:Timeout><e:MessageLimit>10</e:MessageLimit></e:PullMessages>',
        [USER, PASS],
      ),
    );
    assert.equal(pull.status, 400);
    const pullPoint = await post(
      '/onvif/events_service',
      envelope('<e:CreatePullPointSubscription xmlns:e="http://www.onvif.org/ver10/events/wsdl"/>', [USER, PASS]),
    );
    assert.equal(pullPoint.status, 200, pullPoint.body);
    await call('unsubscribe');
    const gone = await post(
      new URL(sub.subscriptionReference.address.href).pathname,
      envelope('<n:Renew xmlns:n="http://docs.oasis-open.org/wsn/b-2"><n:TerminationTime>PT60S</n:TerminationTime></n:Renew>', [USER, PASS]),
    );
    assert.equal(gone.status, 400);
    const unsub = /<wsa:Address>([^<]+)<\/wsa:Address>/.exec(pullPoint.body)![1];
    await post(new URL(unsub).pathname, envelope('<n:Unsubscribe xmlns:n="http://docs.oasis-open.org/wsn/b-2"/>', [USER, PASS]));
  } finally {
    c.server.close();
  }
});

test('Subscribe refuses consumers outside loopback and the device networks, host names, non-http; subscriptions are bounded per client', async () => {
  for (const address of ['http://8.8.8.8/notify', 'http://example.org/notify', 'https://127.0.0.1/notify', 'file:///etc/passwd', 'not a url']) {
    const r = await post('/onvif/events_service', envelope(subscribeXml(address), [USER, PASS]));
    assert.equal(r.status, 400, address);
    assert.deepEqual(faultSubcodes(r.body), ['ter:InvalidArgs', 'ter:InvalidArgVal'], address);
  }
  const c = await consumer(0);
  try {
    const made: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await post('/onvif/events_service', envelope(subscribeXml(c.url), [USER, PASS]));
      assert.equal(r.status, 200, r.body);
      made.push(/<wsa:Address>([^<]+)<\/wsa:Address>/.exec(r.body)![1]);
    }
    const third = await post('/onvif/events_service', envelope(subscribeXml(c.url), [USER, PASS]));
    assert.deepEqual(faultSubcodes(third.body), ['ter:Action', 'ter:TooManySubscriptions']);
    for (const address of made) {
      const r = await post(new URL(address).pathname, envelope('<n:Unsubscribe xmlns:n="http://docs.oasis-open.org/wsn/b-2"/>', [USER, PASS]));
      assert.equal(r.status, 200);
    }
  } finally {
    c.server.close();
  }
});
