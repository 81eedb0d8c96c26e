/**
 * GET /stream/live/mp4 when the device's RTSP fails (issue 25, item 2): a camera that resets the
 * connection (what a camera at its connection cap does), one that closes it, one whose port refuses,
 * one that answers SETUP with 453 or DESCRIBE with 503, one that never answers. Each is a coded 502
 * with the JSON error body, never 500 "internal error". The cameras are real TCP servers on
 * 127.0.0.1 speaking just enough RTSP; the devices are announced by hello on the hub's broker.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import liveMp4 from '../../../hub/plugins/live-mp4/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=x\r\nt=0 0\r\nm=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control:trackID=0\r\n';

/** Every camera-side socket, destroyed at the end. */
const sockets = new Set<Socket>();

/** A camera's RTSP port that does `onRequest` with each request (by method); `onConnect` runs first. */
async function camera(behaviour: { onConnect?: (s: Socket) => void; onRequest?: (s: Socket, method: string, cseq: string) => void }): Promise<Server> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    behaviour.onConnect?.(socket);
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        const method = head.split(' ')[0];
        const cseq = /^CSeq: *(\d+)/im.exec(head)?.[1] ?? '0';
        behaviour.onRequest?.(socket, method, cseq);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const answer = (s: Socket, cseq: string, status: string, headers: Record<string, string> = {}, body = ''): void => {
  const lines = [`RTSP/1.0 ${status}`, `CSeq: ${cseq}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  s.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
};

const portOf = (s: Server): number => (s.address() as AddressInfo).port;

describe('live-mp4: a failing device RTSP is a coded 502', () => {
  let hub: RunningHub;
  const servers: Server[] = [];
  const ports = new Map<string, number>();

  before(async () => {
    const set = await loadHubPluginSet();
    hub = await testHub({
      plugins: [...set.plugins.filter((p) => p.name !== liveMp4.name), liveMp4],
      essential: set.essential,
      env: { LOOKOUT_LIVE_CONNECT_TIMEOUT_MS: '1500', LOOKOUT_LIVE_FIRST_KEYFRAME_MS: '10000', LOOKOUT_LIVE_IDLE_MS: '100' },
    });
    const cams = {
      // The camera takes the connection and resets it at the first request (an RST: ECONNRESET on the hub's side).
      'cam-reset': await camera({ onRequest: (s) => s.resetAndDestroy() }),
      // The camera closes every new connection at once (a server at its connection cap).
      'cam-closed': await camera({ onConnect: (s) => s.destroy() }),
      'cam-453': await camera({
        onRequest: (s, method, cseq) =>
          method === 'DESCRIBE'
            ? answer(s, cseq, '200 OK', { 'Content-Type': 'application/sdp', 'Content-Base': `rtsp://127.0.0.1/preview_h264/` }, SDP)
            : answer(s, cseq, '453 Not Enough Bandwidth'),
      }),
      'cam-503': await camera({ onRequest: (s, _m, cseq) => answer(s, cseq, '503 Service Unavailable', { 'Retry-After': '5' }) }),
      'cam-silent': await camera({}),
    };
    for (const [id, server] of Object.entries(cams)) {
      servers.push(server);
      ports.set(id, portOf(server));
    }
    // A port nothing listens on: the connection is refused.
    const gone = await camera({});
    ports.set('cam-refused', portOf(gone));
    await new Promise<void>((resolve) => gone.close(() => resolve()));

    const client = await mqttClient(hub.brokerUrl);
    try {
      for (const [id, port] of ports) {
        const hello = msg.hello(id, ['127.0.0.1'], 9);
        await publish(client, `devices/${id}/hello`, { ...hello, ports: { ...hello.ports, rtsp: port } });
      }
    } finally {
      await endClient(client);
    }
    for (const id of ports.keys()) {
      await waitFor(`${id}'s hello`, async () => (await api(hub.url, `/fleet/registry?device=${id}`)).body.shadows?.[0]?.ports?.rtsp === ports.get(id));
    }
  });

  after(async () => {
    await hub?.close();
    for (const s of sockets) s.destroy();
    for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  const cases: [string, string, Record<string, unknown>][] = [
    ['cam-reset', 'live-mp4.rtsp_failed', { cause: 'ECONNRESET' }],
    ['cam-closed', 'live-mp4.rtsp_failed', { cause: 'closed' }],
    ['cam-refused', 'device_unreachable', { cause: 'ECONNREFUSED' }],
    ['cam-453', 'live-mp4.rtsp_failed', { method: 'SETUP', status: 453 }],
    ['cam-503', 'live-mp4.rtsp_failed', { method: 'DESCRIBE', status: 503 }],
    ['cam-silent', 'live-mp4.rtsp_failed', { method: 'DESCRIBE', cause: 'timeout' }],
  ];
  for (const [id, code, details] of cases) {
    it(`${id}: 502 ${code}`, async () => {
      const r = await api(hub.url, `/stream/live/mp4?target=${id}`);
      assert.equal(r.status, 502, r.text);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(r.body.error.code, code, r.text);
      for (const [k, v] of Object.entries(details)) assert.equal(r.body.error.details?.[k], v, r.text);
    });
  }
});
