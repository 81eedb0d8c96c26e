import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseDigestHeader } from '../../../../lib/auth/http-digest-server.js';
import { DigestAuth, REALM } from '../../../../plugins/rtsp/src/digest-auth.js';
import { packetize, RtpStream } from '../../../../plugins/rtsp/src/rtp-packetizer.js';
import { RtspReader } from '../../../../plugins/rtsp/src/rtsp-message.js';

const annexB = (...nals: Buffer[]): Buffer => Buffer.concat(nals.flatMap((n) => [Buffer.from([0, 0, 0, 1]), n]));

test('H.265: small NALs go alone, a large one in FUs that reassemble to it (RFC 7798)', () => {
  const vps = Buffer.from([0x40, 0x01, 1, 2, 3]);
  const idr = Buffer.concat([Buffer.from([0x26, 0x01]), Buffer.alloc(3000, 7)]);
  const out = packetize('h265', annexB(vps, idr), 1400);
  assert.deepEqual(out[0], vps);
  const fus = out.slice(1);
  assert.equal(fus.length, 3);
  for (const fu of fus) assert.equal((fu[0] >> 1) & 0x3f, 49);
  assert.equal(fus[0][2] & 0x80, 0x80, 'start bit');
  assert.equal(fus.at(-1)![2] & 0x40, 0x40, 'end bit');
  assert.equal(fus[0][2] & 0x3f, 19, 'the NAL type rides in the FU header');
  const rebuilt = Buffer.concat([idr.subarray(0, 2), ...fus.map((f) => f.subarray(3))]);
  assert.deepEqual(rebuilt, idr);
  assert.ok(out.every((p) => p.length <= 1400));
});

test('H.264: FU-A reassembles to the NAL (RFC 6184)', () => {
  const idr = Buffer.concat([Buffer.from([0x65]), Buffer.alloc(2000, 9)]);
  const fus = packetize('h264', annexB(idr), 1000);
  assert.equal(fus.length, 3);
  assert.equal(fus[0][0] & 0x1f, 28);
  assert.equal(fus[0][0] & 0x60, 0x60, 'NRI kept');
  assert.deepEqual(Buffer.concat([idr.subarray(0, 1), ...fus.map((f) => f.subarray(2))]), idr);
});

test('RTP headers: marker on the last packet of a picture, sequence wraps, 90 kHz from the capture time', () => {
  const rtp = new RtpStream(0x1234, 0xffff, 1000);
  const a = rtp.packets([Buffer.from([1]), Buffer.from([2])], 5000);
  assert.equal(a[0][1] & 0x80, 0);
  assert.equal(a[1][1] & 0x80, 0x80);
  assert.equal(a[0].readUInt16BE(2), 0xffff);
  assert.equal(a[1].readUInt16BE(2), 0);
  const b = rtp.packets([Buffer.from([3])], 5200);
  assert.equal(b[0].readUInt32BE(4) - a[0].readUInt32BE(4), 200 * 90);
  assert.equal(b[0].readUInt32BE(8), 0x1234);
});

test('the request reader: pieces of any size, interleaved frames skipped, malformed heads refused', () => {
  const r = new RtspReader();
  const text = 'OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n';
  assert.deepEqual(r.push(Buffer.from(text.slice(0, 10))), []);
  const got = r.push(Buffer.concat([Buffer.from(text.slice(10)), Buffer.from([0x24, 1, 0, 2, 9, 9])]));
  assert.equal(got.length, 2);
  assert.equal(got[0].kind === 'request' && got[0].request.headers.get('cseq'), '1');
  assert.equal(got[1].kind, 'interleaved');
  assert.equal(new RtspReader().push(Buffer.from('HELLO\r\n\r\n'))[0].kind, 'malformed');
  const body = new RtspReader().push(Buffer.from('SET_PARAMETER * RTSP/1.0\r\nCSeq: 2\r\nContent-Length: 3\r\n\r\nabc'));
  assert.equal(body[0].kind === 'request' && body[0].request.body.toString(), 'abc');
});

test('Digest: the right response passes (with and without qop), a wrong password, a forged nonce and an old nonce do not', () => {
  let now = 1_000_000;
  const auth = new DigestAuth('admin', 'pw', () => now);
  const conn = {};
  const nonce = parseDigestHeader(auth.challenge(false, conn)).nonce;
  const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
  let nc = 0;
  const sign = (password: string, n = nonce, qop = false): string => {
    const ha1 = md5(`admin:${REALM}:${password}`);
    const ha2 = md5('DESCRIBE:rtsp://h/preview');
    const count = (++nc).toString(16).padStart(8, '0');
    const response = qop ? md5(`${ha1}:${n}:${count}:abc:auth:${ha2}`) : md5(`${ha1}:${n}:${ha2}`);
    return `Digest username="admin", realm="${REALM}", nonce="${n}", uri="rtsp://h/preview", response="${response}"${qop ? `, qop=auth, nc=${count}, cnonce="abc"` : ''}`;
  };
  const verify = (header: string | undefined): string => auth.verify('DESCRIBE', 'rtsp://h/preview', header, conn);
  assert.equal(verify(sign('pw')), 'ok');
  assert.equal(verify(sign('pw', nonce, true)), 'ok');
  assert.equal(verify(sign('nope')), 'denied');
  assert.equal(verify(sign('pw', `${nonce.slice(0, 12)}${'0'.repeat(32)}`)), 'denied');
  assert.equal(verify(undefined), 'denied');
  now += 6 * 60_000;
  assert.equal(verify(sign('pw')), 'stale');
});
