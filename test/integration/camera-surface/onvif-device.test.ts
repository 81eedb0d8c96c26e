import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { OnvifDevice } from 'node-onvif-ts';
import { CameraProfileToken } from '../../../plugins/camera-profile/src/service.js';
import { EncodedVideoToken } from '../../../plugins/encode/src/service.js';
import {
  digestAuthorization,
  faultSubcodes,
  ONVIF_NS as NS,
  ONVIF_PASS as PASS,
  ONVIF_USER as USER,
  parseXml as parse,
  postSoap,
  startOnvifCamera,
  usernameToken,
  xmlTexts as texts,
  type OnvifCamera,
} from '../../support/onvif-camera.js';
import { waitFor } from '../../support/wait-for.js';

let camera: OnvifCamera;
let device: OnvifCamera['device'];
let port: number;

before(async () => {
  // No repeat allowance here: the same token twice is refused at once (onvif-profile-s tests the allowance).
  camera = await startOnvifCamera({ ONVIF_TOKEN_REPEAT_MS: '0' }, async (dataDir) => {
    await mkdir(join(dataDir, 'data', 'config'), { recursive: true });
    const profile = { codec: 'H265', resolution: '1920x1080', fps: 15, bitrate_kbps: 300, gop: 5, rate_control: 'VBR' };
    await writeFile(join(dataDir, 'data', 'config', 'camera_profile.json'), JSON.stringify({ profile, updated_at: new Date().toISOString() }));
  });
  device = camera.device;
  port = camera.port;
});

after(async () => {
  await camera?.stop();
});

interface Token {
  user?: string;
  pass?: string;
  nonce?: Buffer;
  created?: string;
}

function envelope(body: string, token?: Token): string {
  // An unusual WSSE prefix on purpose: the server matches namespaces, not prefixes.
  const security = token ? usernameToken(token.user ?? USER, token.pass ?? PASS, token.nonce, token.created, 'q') : '';
  return `<?xml version="1.0"?><s:Envelope xmlns:s="${NS.env}" xmlns:d="${NS.tds}" xmlns:m="${NS.trt}" xmlns:m2="${NS.tr2}" xmlns:t="${NS.tt}"><s:Header>${security}</s:Header><s:Body>${body}</s:Body></s:Envelope>`;
}

const post = (path: string, xml: string | Buffer, headers: Record<string, string> = {}) => postSoap(port, path, xml, headers);

function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function stillUp(): Promise<void> {
  const r = await post('/onvif/device_service', envelope('<d:GetSystemDateAndTime/>'));
  assert.equal(r.status, 200);
  assert.equal(texts(r.body, NS.tt, 'DateTimeType')[0], 'NTP');
}

test('node-onvif-ts initialises with the right password: device information, the H.264 profile (Media1 has no H.265), its RTSP URI, a snapshot', async () => {
  const cam = new OnvifDevice({ xaddr: `http://127.0.0.1:${port}/onvif/device_service`, user: USER, pass: PASS });
  const info = await cam.init();
  assert.equal(info.Manufacturer, 'Lookout');
  assert.equal(info.Model, 'camera');
  assert.ok(String(info.SerialNumber).length > 0);
  assert.match(String(info.HardwareId), new RegExp(device.id));
  const profiles = cam.getProfileList();
  assert.deepEqual(
    profiles.map((p) => [p.token, p.video.encoder?.encoding, p.video.encoder?.resolution.width, p.video.source?.bounds.width]),
    [['profile_h264', 'H264', 320, 320]],
  );
  const rtsp = 8554;
  assert.equal(profiles[0].stream.rtsp, `rtsp://127.0.0.1:${rtsp}/preview_h264`);
  assert.equal(profiles[0].snapshot, `http://127.0.0.1:${port}/onvif/snapshot.jpg`);
  // The snapshot over HTTP Digest (node-onvif-ts answers the challenge).
  const video = device.runtime.service(EncodedVideoToken)!;
  await waitFor(() => video.latestGop().length >= 1, 'a keyframe', 15_000);
  const snap = await cam.fetchSnapshot();
  assert.equal(snap.headers['content-type'], 'image/jpeg');
  assert.deepEqual([snap.body[0], snap.body[1]], [0xff, 0xd8]);
});

test('node-onvif-ts fails with a wrong password; the pre-auth operations still answer', async () => {
  const cam = new OnvifDevice({ xaddr: `http://127.0.0.1:${port}/onvif/device_service`, user: USER, pass: 'wrong' });
  await assert.rejects(cam.init(), /not authorized/i);
  const anonymous = await post('/onvif/device_service', envelope('<d:GetCapabilities><d:Category>All</d:Category></d:GetCapabilities>'));
  assert.equal(anonymous.status, 200);
  assert.deepEqual(texts(anonymous.body, NS.tt, 'XAddr'), [
    `http://127.0.0.1:${port}/onvif/device_service`,
    `http://127.0.0.1:${port}/onvif/events_service`,
    `http://127.0.0.1:${port}/onvif/imaging_service`,
    `http://127.0.0.1:${port}/onvif/media_service`,
  ]);
  // A pre-auth operation with a (wrong) token still answers.
  const withToken = await post(
    '/onvif/device_service',
    envelope('<d:GetServices><d:IncludeCapability>true</d:IncludeCapability></d:GetServices>', { pass: 'wrong' }),
  );
  assert.equal(withToken.status, 200);
  assert.ok(texts(withToken.body, NS.tds, 'Namespace').includes(NS.tr2));
  const none = await post('/onvif/device_service', envelope('<d:GetDeviceInformation/>'));
  assert.equal(none.status, 401);
  assert.match(String(none.headers['www-authenticate']), /^Digest realm="[^"]+", qop="auth", nonce="[0-9a-f]+"/);
  assert.deepEqual(faultSubcodes(none.body), ['ter:NotAuthorized']);
});

test('WS-Security: nanosecond Created and clock skew accepted, a replayed nonce and a stale Created refused', async () => {
  const nano = new Date(Date.now() - 90_000).toISOString().replace(/\.(\d{3})Z$/, '.$1456789Z');
  const ok = await post('/onvif/device_service', envelope('<d:GetHostname/>', { created: nano }));
  assert.equal(ok.status, 200, ok.body);
  assert.equal(texts(ok.body, NS.tt, 'FromDHCP')[0], 'false');
  const token: Token = { nonce: randomBytes(16), created: new Date().toISOString() };
  const first = await post('/onvif/device_service', envelope('<d:GetScopes/>', token));
  assert.equal(first.status, 200);
  assert.ok(texts(first.body, NS.tt, 'ScopeItem').includes('onvif://www.onvif.org/Profile/Streaming'));
  const replay = await post('/onvif/device_service', envelope('<d:GetScopes/>', token));
  assert.equal(replay.status, 401);
  assert.deepEqual(faultSubcodes(replay.body), ['ter:NotAuthorized']);
  assert.match(texts(replay.body, NS.env, 'Text')[0], /nonce/);
  const stale = await post('/onvif/device_service', envelope('<d:GetScopes/>', { created: new Date(Date.now() - 3600_000).toISOString() }));
  assert.equal(stale.status, 401);
  assert.match(texts(stale.body, NS.env, 'Text')[0], /clock skew/);
  await stillUp();
});

test('HTTP Digest: a correct answer to the challenge passes, a replayed nonce count and a wrong password do not', async () => {
  const challenge = await post('/onvif/media_service', envelope('<m:GetProfiles/>'));
  assert.equal(challenge.status, 401);
  const authorization = (nc: number, pass = PASS): string =>
    digestAuthorization(String(challenge.headers['www-authenticate']), { uri: '/onvif/media_service', nc, pass });
  const ok = await post('/onvif/media_service', envelope('<m:GetProfiles/>'), { Authorization: authorization(1) });
  assert.equal(ok.status, 200, ok.body);
  assert.equal(parse(ok.body).getElementsByTagNameNS(NS.trt, 'Profiles').length, 1);
  const replay = await post('/onvif/media_service', envelope('<m:GetProfiles/>'), { Authorization: authorization(1) });
  assert.equal(replay.status, 401);
  const next = await post('/onvif/media_service', envelope('<m:GetProfiles/>'), { Authorization: authorization(2) });
  assert.equal(next.status, 200);
  const wrong = await post('/onvif/media_service', envelope('<m:GetProfiles/>'), { Authorization: authorization(3, 'nope') });
  assert.equal(wrong.status, 401);
  assert.deepEqual(faultSubcodes(wrong.body), ['ter:NotAuthorized']);
  // The snapshot without credentials is challenged too.
  const snap = await get('/onvif/snapshot.jpg');
  assert.equal(snap.status, 401);
  assert.match(String(snap.headers['www-authenticate']), /^Digest /);
});

test('Media2 over raw SOAP: profiles with Type, encoder configurations and options, stream and snapshot URIs', async () => {
  const profiles = await post('/onvif/media2_service', envelope('<m2:GetProfiles><m2:Type>All</m2:Type></m2:GetProfiles>', {}));
  assert.equal(profiles.status, 200, profiles.body);
  assert.deepEqual(texts(profiles.body, NS.tt, 'Encoding'), ['H265', 'H264']);
  assert.deepEqual(texts(profiles.body, NS.tt, 'SourceToken'), ['video_source', 'video_source']);
  const names = await post('/onvif/media2_service', envelope('<m2:GetProfiles/>', {}));
  assert.deepEqual(texts(names.body, NS.tt, 'Encoding'), [], 'no Type: names only');
  const encoders = await post('/onvif/media2_service', envelope('<m2:GetVideoEncoderConfigurations/>', {}));
  assert.deepEqual(texts(encoders.body, NS.tt, 'Width'), ['320', '320']);
  const options = await post(
    '/onvif/media2_service',
    envelope('<m2:GetVideoEncoderConfigurationOptions><m2:ProfileToken>profile_h264</m2:ProfileToken></m2:GetVideoEncoderConfigurationOptions>', {}),
  );
  assert.deepEqual(texts(options.body, NS.tt, 'Encoding'), ['H264']);
  const uri = await post(
    '/onvif/media2_service',
    envelope('<m2:GetStreamUri><m2:Protocol>RTSP</m2:Protocol><m2:ProfileToken>profile_h264</m2:ProfileToken></m2:GetStreamUri>', {}),
  );
  assert.deepEqual(texts(uri.body, NS.tr2, 'Uri'), ['rtsp://127.0.0.1:8554/preview_h264']);
  const snapshot = await post('/onvif/media2_service', envelope('<m2:GetSnapshotUri><m2:ProfileToken>profile_h265</m2:ProfileToken></m2:GetSnapshotUri>', {}));
  assert.deepEqual(texts(snapshot.body, NS.tr2, 'Uri'), [`http://127.0.0.1:${port}/onvif/snapshot.jpg`]);
  const sources = await post('/onvif/media_service', envelope('<m:GetVideoSources/>', {}));
  assert.equal(parse(sources.body).getElementsByTagNameNS(NS.trt, 'VideoSources').item(0)?.getAttribute('token'), 'video_source');
});

test('faults: malformed XML, a DTD, an unknown action, an unknown profile, a huge body, a wrong path; the device stays up', async () => {
  const malformed = await post('/onvif/device_service', '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><oops></s:Body>');
  assert.equal(malformed.status, 400);
  assert.match(String(malformed.headers['content-type']), /^application\/soap\+xml/);
  assert.deepEqual(faultSubcodes(malformed.body), ['ter:WellFormed']);
  await stillUp();
  const notXml = await post('/onvif/device_service', 'hello');
  assert.deepEqual(faultSubcodes(notXml.body), ['ter:WellFormed']);
  const dtd = await post(
    '/onvif/device_service',
    `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><s:Envelope xmlns:s="${NS.env}"><s:Body><x>&a;</x></s:Body></s:Envelope>`,
  );
  assert.equal(dtd.status, 400);
  assert.deepEqual(faultSubcodes(dtd.body), ['ter:WellFormed']);
  const unknown = await post(
    '/onvif/device_service',
    envelope('<d:SetSystemFactoryDefault><d:FactoryDefault>Hard</d:FactoryDefault></d:SetSystemFactoryDefault>', {}),
  );
  assert.deepEqual(faultSubcodes(unknown.body), ['ter:ActionNotSupported']);
  const ptz = await post('/onvif/device_service', envelope('<p:ContinuousMove xmlns:p="http://www.onvif.org/ver20/ptz/wsdl"/>', {}));
  assert.deepEqual(faultSubcodes(ptz.body), ['ter:ActionNotSupported']);
  const noProfile = await post('/onvif/media_service', envelope('<m:GetStreamUri><m:ProfileToken>nope</m:ProfileToken></m:GetStreamUri>', {}));
  assert.equal(noProfile.status, 400);
  assert.deepEqual(faultSubcodes(noProfile.body), ['ter:InvalidArgVal', 'ter:NoProfile']);
  const noProfile2 = await post('/onvif/media2_service', envelope('<m2:GetProfiles><m2:Token>nope</m2:Token></m2:GetProfiles>', {}));
  assert.deepEqual(faultSubcodes(noProfile2.body), ['ter:InvalidArgVal', 'ter:NoProfile']);
  // Without credentials a large body is not read at all (401, a Digest challenge); signed in, it is 413.
  const huge = await post('/onvif/device_service', Buffer.alloc(300 * 1024, 0x20));
  assert.equal(huge.status, 401);
  assert.deepEqual(faultSubcodes(huge.body), ['ter:NotAuthorized']);
  const nowhere = await post('/onvif/ptz_service', envelope('<d:GetHostname/>'));
  assert.equal(nowhere.status, 404);
  assert.deepEqual(faultSubcodes(nowhere.body), ['ter:ActionNotSupported']);
  await stillUp();
});

test('SetVideoEncoderConfiguration writes the camera profile, the encoder follows, the response is empty; bad values are refused', async () => {
  const video = device.runtime.service(EncodedVideoToken)!;
  const profiles = device.runtime.service(CameraProfileToken)!;
  const set = await post(
    '/onvif/media2_service',
    envelope(
      `<m2:SetVideoEncoderConfiguration><m2:Configuration token="encoder_h265" GovLength="10" Profile="Main"><t:Name>x</t:Name><t:UseCount>1</t:UseCount><t:Encoding>H265</t:Encoding>` +
        `<t:Resolution><t:Width>640</t:Width><t:Height>360</t:Height></t:Resolution><t:RateControl ConstantBitRate="true"><t:FrameRateLimit>5</t:FrameRateLimit><t:BitrateLimit>400</t:BitrateLimit></t:RateControl><t:Quality>5</t:Quality>` +
        `</m2:Configuration></m2:SetVideoEncoderConfiguration>`,
      {},
    ),
  );
  assert.equal(set.status, 200, set.body);
  const response = parse(set.body).getElementsByTagNameNS(NS.tr2, 'SetVideoEncoderConfigurationResponse').item(0)!;
  assert.equal(response.childNodes.length, 0);
  assert.deepEqual(profiles.get(), { codec: 'H265', resolution: '640x360', fps: 5, bitrate_kbps: 400, gop: 10, rate_control: 'CBR' });
  // ENCODE_RESOLUTION keeps the test light at 320x240; the keyframe interval comes from the profile.
  await waitFor(() => video.gop === 10, 'the encoder to run at gop 10', 15_000);
  const after = await post(
    '/onvif/media2_service',
    envelope('<m2:GetVideoEncoderConfigurations><m2:ConfigurationToken>encoder_h265</m2:ConfigurationToken></m2:GetVideoEncoderConfigurations>', {}),
  );
  const config = parse(after.body).getElementsByTagNameNS(NS.tr2, 'Configurations').item(0)!;
  assert.equal(config.getAttribute('GovLength'), '10');
  assert.deepEqual(texts(after.body, NS.tt, 'BitrateLimit'), ['400']);
  // Media ver10 too.
  const v10 = await post(
    '/onvif/media_service',
    envelope(
      `<m:SetVideoEncoderConfiguration><m:Configuration token="encoder_h264"><t:Encoding>H264</t:Encoding><t:RateControl><t:FrameRateLimit>5</t:FrameRateLimit><t:BitrateLimit>350</t:BitrateLimit></t:RateControl><t:H264><t:GovLength>5</t:GovLength></t:H264></m:Configuration><m:ForcePersistence>true</m:ForcePersistence></m:SetVideoEncoderConfiguration>`,
      {},
    ),
  );
  assert.equal(v10.status, 200, v10.body);
  assert.equal(profiles.get().gop, 5);
  await waitFor(() => video.gop === 5, 'the encoder back at gop 5', 15_000);
  const bad = await post(
    '/onvif/media2_service',
    envelope(`<m2:SetVideoEncoderConfiguration><m2:Configuration token="encoder_h265" GovLength="9999"/></m2:SetVideoEncoderConfiguration>`, {}),
  );
  assert.equal(bad.status, 400);
  assert.deepEqual(faultSubcodes(bad.body), ['ter:InvalidArgs', 'ter:InvalidArgVal']);
  const wrongCodec = await post(
    '/onvif/media2_service',
    envelope(
      `<m2:SetVideoEncoderConfiguration><m2:Configuration token="encoder_h265"><t:Encoding>H264</t:Encoding></m2:Configuration></m2:SetVideoEncoderConfiguration>`,
      {},
    ),
  );
  assert.deepEqual(faultSubcodes(wrongCodec.body), ['ter:InvalidArgVal', 'ter:ConfigModify']);
  assert.equal(profiles.get().gop, 5, 'a refused change leaves the profile');
});
