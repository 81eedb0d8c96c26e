import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  connectOnvifCam,
  faultSubcodes,
  ONVIF_NS as NS,
  ONVIF_PASS as PASS,
  ONVIF_USER as USER,
  parseXml as parse,
  postSoap,
  startOnvifCamera,
  usernameToken,
  type OnvifCamera,
} from '../../support/onvif-camera.js';
import { waitFor } from '../../support/wait-for.js';

let camera: OnvifCamera;
let port: number;

before(async () => {
  camera = await startOnvifCamera({
    ONVIF_MAX_SUBSCRIPTIONS_PER_CLIENT: '2',
    ONVIF_NOTIFY_RETRY_DELAY_MS: '50',
    ONVIF_NOTIFY_RETRIES: '3',
  });
  port = camera.port;
});

after(async () => {
  await camera?.stop();
});

const connect = (username = USER, password = PASS) => connectOnvifCam(port, username, password);
const post = (path: string, xml: string, headers: Record<string, string> = {}) => postSoap(port, path, xml, headers);
const envelope = (body: string, token?: [string, string]): string =>
  `<?xml version="1.0"?><s:Envelope xmlns:s="${NS.env}" xmlns:d="${NS.tds}" xmlns:t="${NS.tt}"><s:Header>${token ? usernameToken(...token) : ''}</s:Header><s:Body>${body}</s:Body></s:Envelope>`;

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
