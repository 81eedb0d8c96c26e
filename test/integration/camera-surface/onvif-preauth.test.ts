import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { OnvifStatsToken, type OnvifStats } from '../../../plugins/onvif/src/service.js';
import { digestAuthorization, postSoap, startOnvifCamera, type OnvifCamera, type SoapReply as Reply } from '../../support/onvif-camera.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * What a stranger can make the ONVIF server hold before signing in (issue 25, item 1): a camera of
 * real plugins with an ONVIF password, attacked over real sockets on 127.0.0.0/8 (a second and
 * third source address are 127.0.0.2 and 127.0.0.3). Bounds are set small by configuration so that
 * the test stays short; none of the assertions is on speed.
 */
const PER_ADDRESS = 4;
const TOTAL = 6;
const PREAUTH_BYTES = 16 * 1024;
const ENV = 'http://www.w3.org/2003/05/soap-envelope';
const TDS = 'http://www.onvif.org/ver10/device/wsdl';
const TEV = 'http://www.onvif.org/ver10/events/wsdl';

let camera: OnvifCamera;
let port: number;
const stats = (): OnvifStats => camera.device.runtime.service(OnvifStatsToken)!.stats();

before(async () => {
  camera = await startOnvifCamera({
    ONVIF_PREAUTH_BODY_BYTES: String(PREAUTH_BYTES),
    ONVIF_PREAUTH_MAX_ELEMENTS: '512',
    ONVIF_PREAUTH_BODY_TIMEOUT_MS: '1000',
    ONVIF_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    ONVIF_MAX_CONNECTIONS: String(TOTAL),
    ONVIF_MAX_SUBSCRIPTIONS_PER_CLIENT: '2',
  });
  port = camera.port;
});

after(async () => {
  await camera?.stop();
});

const envelope = (body: string, header = '', padding = ''): string =>
  `<?xml version="1.0"?><s:Envelope xmlns:s="${ENV}" xmlns:d="${TDS}" xmlns:e="${TEV}"><s:Header>${header}</s:Header><s:Body>${body}</s:Body>${padding}</s:Envelope>`;

/** A raw connection: what it has received, and whether the server has closed it. */
interface Raw {
  socket: Socket;
  received(): string;
  closed: boolean;
}

function open(localAddress = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const raw: Raw = { socket, received: () => text, closed: false };
    socket.setEncoding('latin1');
    socket.on('data', (s: string) => (text += s));
    socket.on('close', () => (raw.closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(raw));
    socket.once('error', reject);
  });
}

const head = (contentLength: number | 'chunked', extra: Record<string, string> = {}): string =>
  `POST /onvif/device_service HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/soap+xml\r\n` +
  (contentLength === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${contentLength}\r\n`) +
  Object.entries(extra)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('') +
  '\r\n';

/** The status of the first answer on a raw connection. */
const status = (raw: Raw): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw.received())?.[1] ?? 0);

/** On a connection of its own (the server counts connections per address), from `localAddress`. */
const post = (path: string, xml: string, headers: Record<string, string> = {}, localAddress?: string): Promise<Reply> =>
  postSoap(port, path, xml, headers, { agent: false, localAddress });

/** An HTTP Digest client (RFC 7616, qop=auth) as strict clients do it: one nonce, the count going up. */
class DigestClient {
  private nc = 0;
  private constructor(private readonly challenge: string) {}
  static async challenge(path: string): Promise<DigestClient> {
    const r = await post(path, envelope('<d:GetDeviceInformation/>'));
    assert.equal(r.status, 401);
    return new DigestClient(String(r.headers['www-authenticate']));
  }
  authorization(path: string, pass?: string): string {
    return digestAuthorization(this.challenge, { uri: path, nc: ++this.nc, pass });
  }
}

async function allClosed(): Promise<void> {
  await waitFor(() => stats().connections === 0, 'the server to count every connection closed', 20_000);
}

test('the body flood: 256 KiB declared (within ONVIF_MAX_BODY_BYTES), 262 000 bytes sent and held, no credentials: 401 and closed, unread', async () => {
  // The attacker's condition: a declared length the server accepts and a body a little short of
  // it, so that the request never completes. Main read it whole into memory and held it for ever
  // (requestTimeout 0); a length above the cap was refused at once, which is why the second try held nothing.
  const before = stats();
  const raw = await open();
  raw.socket.write(head(256 * 1024));
  raw.socket.write(Buffer.alloc(262_000, 0x20));
  await waitFor(() => raw.closed, 'the server to close the connection', 15_000);
  assert.equal(status(raw), 401, raw.received());
  assert.match(raw.received(), /WWW-Authenticate: Digest /i);
  assert.match(raw.received(), new RegExp(`at most ${PREAUTH_BYTES} bytes`));
  assert.equal(stats().parsedBodies, before.parsedBodies, 'nothing was parsed');
  assert.equal(stats().refusedUnread, before.refusedUnread + 1);
  await allClosed();
});

test('a slow body within the pre-auth bound is cut at its deadline and the connection closed', async () => {
  const raw = await open();
  raw.socket.write(head(2000));
  raw.socket.write(Buffer.alloc(1000, 0x20));
  await waitFor(() => raw.closed, 'the server to close the slow connection', 15_000);
  assert.equal(status(raw), 401, raw.received());
  assert.match(raw.received(), /did not arrive within 1000 ms/);
  await allClosed();
});

test('60 000 <a/> (240 KB) without credentials: 401 before parsing, with a Content-Length or chunked; 600 elements in 2.4 KB too', async () => {
  const flood = envelope('<d:GetDeviceInformation/>', '<a/>'.repeat(60_000));
  const before = stats();
  const declared = await post('/onvif/device_service', flood);
  assert.equal(declared.status, 401);
  assert.match(String(declared.headers['www-authenticate']), /^Digest realm=/);

  // Chunked: no length to judge by, so the server stops reading at the bound. Only part of the
  // body is sent and the answer still comes: it did not wait for the rest.
  const raw = await open();
  raw.socket.write(head('chunked'));
  const part = Buffer.from(flood.slice(0, 40_000));
  raw.socket.write(`${part.length.toString(16)}\r\n`);
  raw.socket.write(part);
  raw.socket.write('\r\n');
  await waitFor(() => status(raw) !== 0, 'an answer before the chunked body ends', 15_000);
  assert.equal(status(raw), 401);
  raw.socket.destroy();

  // Small in bytes, many elements: refused by the element count, still unparsed.
  const many = await post('/onvif/device_service', envelope('<d:GetDeviceInformation/>', '<a/>'.repeat(600)));
  assert.equal(many.status, 401);
  assert.match(many.body, /at most 512 XML elements/);
  assert.equal(stats().parsedBodies, before.parsedBodies, 'none of the three was parsed');
  assert.equal(stats().refusedUnread, before.refusedUnread + 3);

  // A small pre-auth operation is parsed and answered: the counter counts.
  const time = await post('/onvif/device_service', envelope('<d:GetSystemDateAndTime/>'));
  assert.equal(time.status, 200, time.body);
  assert.equal(stats().parsedBodies, before.parsedBodies + 1);
  await allClosed();
});

test('HTTP Digest is decided from the headers: a valid answer may send a body above the pre-auth bound, a wrong one is refused before its body', async () => {
  const path = '/onvif/device_service';
  const client = await DigestClient.challenge(path);
  // 40 KB: above the pre-auth bound, below ONVIF_MAX_BODY_BYTES.
  const big = envelope('<d:GetDeviceInformation/>', '', ' '.repeat(40_000));
  const ok = await post(path, big, { Authorization: client.authorization(path) });
  assert.equal(ok.status, 200, ok.body);
  assert.match(ok.body, /<tds:Manufacturer>Lookout<\/tds:Manufacturer>/);

  // A wrong password: answered on the headers, while most of the body was never sent.
  const raw = await open();
  raw.socket.write(head(Buffer.byteLength(big), { Authorization: client.authorization(path, 'wrong') }));
  raw.socket.write(big.slice(0, 1000));
  await waitFor(() => raw.closed, 'the refusal and the close', 15_000);
  assert.equal(status(raw), 401);
  assert.match(raw.received(), /wrong HTTP Digest credentials/);

  // Over the post-auth cap, even signed in: 413.
  const huge = await post(path, envelope('<d:GetDeviceInformation/>', '', ' '.repeat(300 * 1024)), { Authorization: client.authorization(path) });
  assert.equal(huge.status, 413);
  await allClosed();
});

test('connections: a fifth from one address is closed at once, another address still gets in, none beyond the total; a slot frees when one closes', async () => {
  const mine = await Promise.all(Array.from({ length: PER_ADDRESS }, () => open('127.0.0.1')));
  await waitFor(() => stats().connections === PER_ADDRESS, 'the held connections to be counted');
  const fifth = await open('127.0.0.1');
  await waitFor(() => fifth.closed, 'the fifth connection from 127.0.0.1 to be closed', 5000);
  assert.equal(fifth.received(), '', 'refused without an answer');
  assert.ok(
    mine.every((r) => !r.closed),
    'the first four stay open',
  );

  const other = await Promise.all(Array.from({ length: TOTAL - PER_ADDRESS }, () => open('127.0.0.2')));
  await waitFor(() => stats().connections === TOTAL, 'the other address to get in');
  const third = await open('127.0.0.3');
  await waitFor(() => third.closed, 'a connection beyond the total to be closed', 5000);
  assert.ok(stats().refusedConnections >= 2);

  // A held connection serves requests; once one closes, its address gets a slot back.
  mine[0].socket.write(head(Buffer.byteLength(envelope('<d:GetSystemDateAndTime/>'))) + envelope('<d:GetSystemDateAndTime/>'));
  await waitFor(() => status(mine[0]) !== 0, 'an answer on a held connection', 15_000);
  assert.equal(status(mine[0]), 200);
  mine[1].socket.destroy();
  await waitFor(() => stats().connections === TOTAL - 1, 'the closed one to be counted');
  const again = await post('/onvif/device_service', envelope('<d:GetSystemDateAndTime/>'));
  assert.equal(again.status, 200);
  for (const r of [...mine, ...other]) r.socket.destroy();
  await allClosed();
});

test('pull points: one client holds at most its share (2), another address gets its own, Unsubscribe frees one', async () => {
  const events = '/onvif/events_service';
  const create = async (client: DigestClient, localAddress: string): Promise<Reply> =>
    post(
      events,
      envelope('<e:CreatePullPointSubscription><e:InitialTerminationTime>PT600S</e:InitialTerminationTime></e:CreatePullPointSubscription>'),
      { Authorization: client.authorization(events) },
      localAddress,
    );
  const a = await DigestClient.challenge(events);
  const first = await create(a, '127.0.0.1');
  assert.equal(first.status, 200, first.body);
  assert.equal((await create(a, '127.0.0.1')).status, 200);
  const third = await create(a, '127.0.0.1');
  assert.equal(third.status, 500);
  assert.match(third.body, /TooManySubscriptions/);
  assert.match(third.body, /for this client/);
  // Another address is another client: the first one did not take every slot.
  assert.equal((await create(a, '127.0.0.2')).status, 200);
  const address = new URL(/<wsa:Address>([^<]+)<\/wsa:Address>/.exec(first.body)![1]).pathname;
  const gone = await post(address, envelope('<wsnt:Unsubscribe xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2"/>'), {
    Authorization: a.authorization(address),
  });
  assert.equal(gone.status, 200, gone.body);
  assert.equal((await create(a, '127.0.0.1')).status, 200);
  await allClosed();
});
