/**
 * The device tool server's `GET|HEAD /recordings/<file>` (issue 26, item 10): the recorder's files
 * served read-only to whoever holds the device's token. The server listens beyond loopback, inside
 * a network namespace this test makes (`unshare -n`, as root; lo up with 10.201.0.1 on it), so that
 * a call without the token is the 401 a LAN caller gets; the test file runs itself again inside.
 * Checked with plain HTTP over real sockets and real files: no token / a wrong token (401), an
 * Origin (403), a path out of the root, a name that is no recording file, a `.part` in progress, a
 * symlink, a folder (4xx with the JSON error body), byte ranges (206, 416), ETag (304, If-Range),
 * HEAD, the bound on transfers at once (429), and no recorder (503).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../core/src/log/logger.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startToolServer, type ToolServer } from '../../../edge/src/tool-server.js';

const ADDRESS = '10.201.0.1';
const TOKEN = 'recordings-route-test-token-0123456789abcdef';
const CHUNK = '20260101T120000000Z_000001.h265';
const BIG = '20260101T120100000Z_000002.h265';

if (process.env.LOOKOUT_RECORDINGS_NETNS_INSIDE !== '1') {
  describe('device /recordings route (in a network namespace of its own)', () => {
    it('passes every check inside `unshare -n` with 10.201.0.1 on lo', async () => {
      const self = fileURLToPath(import.meta.url);
      const script = `set -e; ip link set lo up; ip addr add ${ADDRESS}/32 dev lo; exec "${process.execPath}" --test --test-reporter=spec "${self}"`;
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        // NODE_TEST_CONTEXT would make the inner runner think it is nested in this one and run nothing.
        const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
        const child = spawn('unshare', ['--net', '--', 'sh', '-c', script], {
          env: { ...env, LOOKOUT_RECORDINGS_NETNS_INSIDE: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c: Buffer) => (output += c.toString()));
        child.stderr.on('data', (c: Buffer) => (output += c.toString()));
        child.once('error', reject);
        child.once('exit', (c) => resolve({ code: c, output }));
      });
      assert.equal(code, 0, `inside the namespace (unshare needs root and util-linux; ip needs iproute2):\n${output.slice(-8000)}`);
      assert.match(output, /^\S+ pass [1-9]/m, output.slice(-4000));
      assert.match(output, /^\S+ fail 0$/m);
      assert.match(output, /^\S+ skipped 0$/m);
    });
  });
} else {
  interface Answer {
    status: number;
    headers: IncomingMessage['headers'];
    body: Buffer;
  }
  /** A request whose path goes out byte for byte as written (no URL parser folding `..`). */
  const get = (port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request({ host: ADDRESS, port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const errorCode = (a: Answer): string => (JSON.parse(a.body.toString()) as { error: { code: string } }).error.code;

  describe('GET /recordings/<file> beyond loopback', () => {
    let dir: string;
    let root: string;
    let server: ToolServer;
    let bare: ToolServer;
    let narrow: ToolServer;
    const chunk = randomBytes(5000);

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'recordings-route-'));
      root = join(dir, 'recordings');
      mkdirSync(root);
      writeFileSync(join(root, CHUNK), chunk);
      writeFileSync(join(root, CHUNK.replace('.h265', '.json')), '{"fps":5}');
      writeFileSync(join(root, BIG), Buffer.alloc(16 * 1024 * 1024, 1));
      writeFileSync(join(root, `.${CHUNK.replace('000001', '000009')}.part`), 'in progress');
      writeFileSync(join(root, 'notes.txt'), 'not a recording');
      writeFileSync(join(dir, 'secret.h265'), 'outside the root');
      symlinkSync(join(dir, 'secret.h265'), join(root, '20260101T120200000Z_000003.h265'));
      mkdirSync(join(root, '20260101T120300000Z_000004.h265'));
      const logger = createLogger({ level: 'silent' });
      const common = { tools: new ToolRegistry(), logger, port: 0, host: ADDRESS, token: TOKEN };
      server = await startToolServer({ ...common, recordings: () => ({ root }) });
      narrow = await startToolServer({ ...common, recordings: () => ({ root }), maxRecordingTransfers: 1 });
      bare = await startToolServer(common);
    });
    after(async () => {
      await server?.close();
      await bare?.close();
      await narrow?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a caller without the token or with a wrong one (401), and a page of another origin (403), with the JSON error body', async () => {
      const none = await get(server.port, `/recordings/${CHUNK}`);
      assert.equal(none.status, 401);
      assert.equal(errorCode(none), 'unauthorized');
      assert.match(String(none.headers['www-authenticate']), /^Bearer /);
      for (const wrong of ['Bearer not-the-token-of-this-device-0000000', `Bearer ${TOKEN}x`, 'Basic cm9vdDpyb290', 'Bearer']) {
        const r = await get(server.port, `/recordings/${CHUNK}`, { authorization: wrong });
        assert.equal(r.status, 401, wrong);
        assert.equal(errorCode(r), 'unauthorized');
      }
      const page = await get(server.port, `/recordings/${CHUNK}`, { ...auth, origin: 'http://evil.example' });
      assert.equal(page.status, 403);
      assert.equal(errorCode(page), 'forbidden');
    });

    it('serves a chunk and its sidecar to the token, with ETag and Last-Modified; HEAD has no body', async () => {
      const r = await get(server.port, `/recordings/${CHUNK}`, auth);
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(chunk));
      assert.equal(r.headers['content-length'], String(chunk.length));
      assert.equal(r.headers['accept-ranges'], 'bytes');
      assert.ok(r.headers.etag);
      assert.ok(Date.parse(String(r.headers['last-modified'])) > 0);
      const sidecar = await get(server.port, `/recordings/${CHUNK.replace('.h265', '.json')}`, auth);
      assert.equal(sidecar.body.toString(), '{"fps":5}');
      const head = await get(server.port, `/recordings/${CHUNK}`, auth, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(chunk.length));
      assert.equal(head.body.length, 0);
      assert.equal((await get(server.port, `/recordings/${CHUNK}`, { ...auth, 'if-none-match': r.headers.etag })).status, 304);
      const post = await get(server.port, `/recordings/${CHUNK}`, auth, 'POST');
      assert.equal(post.status, 405);
      assert.equal(errorCode(post), 'method_not_allowed');
    });

    it('honours one byte range (206), refuses one outside the file (416), and gives the whole file to a stale If-Range', async () => {
      const part = await get(server.port, `/recordings/${CHUNK}`, { ...auth, range: 'bytes=100-1099' });
      assert.equal(part.status, 206);
      assert.equal(part.headers['content-range'], `bytes 100-1099/${chunk.length}`);
      assert.ok(part.body.equals(chunk.subarray(100, 1100)));
      const rest = await get(server.port, `/recordings/${CHUNK}`, { ...auth, range: 'bytes=4000-' });
      assert.ok(rest.body.equals(chunk.subarray(4000)));
      const tail = await get(server.port, `/recordings/${CHUNK}`, { ...auth, range: 'bytes=-10' });
      assert.ok(tail.body.equals(chunk.subarray(chunk.length - 10)));
      const outside = await get(server.port, `/recordings/${CHUNK}`, { ...auth, range: `bytes=${chunk.length}-` });
      assert.equal(outside.status, 416);
      assert.equal(outside.headers['content-range'], `bytes */${chunk.length}`);
      assert.equal(errorCode(outside), 'range_not_satisfiable');
      const stale = await get(server.port, `/recordings/${CHUNK}`, { ...auth, range: 'bytes=0-9', 'if-range': '"another-file"' });
      assert.equal(stale.status, 200);
      assert.equal(stale.body.length, chunk.length);
    });

    it('refuses paths out of the root and names that are no recording file (400), symlinks, folders and missing files (404)', async () => {
      for (const path of [
        '/recordings/../secret.h265',
        '/recordings/..%2Fsecret.h265',
        '/recordings/%2E%2E%2Fsecret.h265',
        '/recordings/sub/x.h265',
        '/recordings//etc/passwd',
        '/recordings/notes.txt',
        `/recordings/.${CHUNK.replace('000001', '000009')}.part`,
        '/recordings/',
        `/recordings/${CHUNK}%00.json`,
      ]) {
        const r = await get(server.port, path, auth);
        assert.equal(r.status, 400, `${path}: ${r.status} ${r.body.toString()}`);
        assert.equal(errorCode(r), 'bad_request', path);
      }
      for (const name of ['20260101T120200000Z_000003.h265', '20260101T120300000Z_000004.h265', '20260101T125900000Z_000099.h265']) {
        const r = await get(server.port, `/recordings/${name}`, auth);
        assert.equal(r.status, 404, name);
        assert.equal(errorCode(r), 'recording_not_found', name);
        assert.doesNotMatch(r.body.toString(), /outside the root/);
      }
    });

    it('sends a bounded number of files at once (429 past it), and a device without a recorder says so (503)', async () => {
      // A reader that takes nothing holds its transfer: 16 MiB does not fit the socket buffers.
      const held = await new Promise<{ destroy: () => void }>((resolve, reject) => {
        const req = request({ host: ADDRESS, port: narrow.port, path: `/recordings/${BIG}`, headers: auth }, (res) => {
          res.pause();
          resolve({ destroy: () => req.destroy() });
        });
        req.on('error', () => undefined);
        req.once('error', reject);
        req.end();
      });
      const busy = await get(narrow.port, `/recordings/${CHUNK}`, auth);
      assert.equal(busy.status, 429);
      assert.equal(errorCode(busy), 'device_busy');
      held.destroy();
      // The slot comes back once the server sees the reader gone.
      let after: Answer | undefined;
      for (let i = 0; i < 100 && after?.status !== 200; i++) {
        after = await get(narrow.port, `/recordings/${CHUNK}`, auth);
        if (after.status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(after?.status, 200);
      const none = await get(bare.port, `/recordings/${CHUNK}`, auth);
      assert.equal(none.status, 503);
      assert.equal(errorCode(none), 'service_unavailable');
    });
  });
}
