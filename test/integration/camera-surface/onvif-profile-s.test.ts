import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { endpointAddress } from '../../../plugins/onvif/src/service.js';
import {
  connectOnvifCam,
  digestAuthorization,
  faultSubcodes,
  ONVIF_NS as NS,
  ONVIF_PASS as PASS,
  ONVIF_USER as USER,
  postSoap,
  startOnvifCamera,
  usernameToken,
  xmlTexts as texts,
  type OnvifCamera,
  type SoapReply as Reply,
} from '../../support/onvif-camera.js';

let camera: OnvifCamera;
let port: number;

/** Short, so that the replay test waits little past it; the default is 1000. */
const TOKEN_REPEAT_MS = 300;

before(async () => {
  camera = await startOnvifCamera({ ONVIF_TOKEN_REPEAT_MS: String(TOKEN_REPEAT_MS) });
  port = camera.port;
});

after(async () => {
  await camera?.stop();
});

const connect = (username = USER, password = PASS) => connectOnvifCam(port, username, password);
const post = (path: string, xml: string, headers: Record<string, string> = {}) => postSoap(port, path, xml, headers);
const envelope = (body: string, token?: [string, string] | [string, string, Buffer, string]): string =>
  `<?xml version="1.0"?><s:Envelope xmlns:s="${NS.env}" xmlns:d="${NS.tds}" xmlns:t="${NS.tt}"><s:Header>${token ? usernameToken(token[0], token[1], token[2], token[3]) : ''}</s:Header><s:Body>${body}</s:Body></s:Envelope>`;

test('the Core default access policy pre-auth set answers without credentials; the rest is refused', async () => {
  for (const action of [
    'GetSystemDateAndTime',
    'GetWsdlUrl',
    'GetHostname',
    'GetEndpointReference',
    'GetServices',
    'GetServiceCapabilities',
    'GetCapabilities',
  ]) {
    const r = await post('/onvif/device_service', envelope(`<d:${action}/>`));
    assert.equal(r.status, 200, `${action}: ${r.body}`);
  }
  const guid = texts((await post('/onvif/device_service', envelope('<d:GetEndpointReference/>'))).body, NS.tds, 'GUID')[0];
  assert.match(guid, /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(guid, endpointAddress(camera.device.id), 'the address WS-Discovery announces for this device');
  assert.match(texts((await post('/onvif/device_service', envelope('<d:GetWsdlUrl/>'))).body, NS.tds, 'WsdlUrl')[0], /^http:\/\/www\.onvif\.org\//);
  for (const action of ['GetUsers', 'GetNTP', 'GetDNS', 'GetNetworkProtocols', 'GetScopes', 'GetNetworkInterfaces']) {
    const r = await post('/onvif/device_service', envelope(`<d:${action}/>`));
    assert.equal(r.status, 401, action);
  }
});

test('replies carry Content-Length, never chunked (libonvif onvif-util reads only those)', async () => {
  for (const body of ['<d:GetSystemDateAndTime/>', '<d:GetUsers/>', '<oops/>']) {
    const r = await post('/onvif/device_service', envelope(body));
    assert.equal(r.headers['transfer-encoding'], undefined, body);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), body);
  }
});

test('Media1 lists H.264 (Baseline, as libx264 encodes it) and no H265; npm onvif (Media2) sees both, H.264 as Baseline', async () => {
  const media1 = await post('/onvif/media_service', envelope('<m:GetProfiles xmlns:m="http://www.onvif.org/ver10/media/wsdl"/>', [USER, PASS]));
  assert.deepEqual(texts(media1.body, NS.tt, 'Encoding'), ['H264']);
  assert.deepEqual(texts(media1.body, NS.tt, 'H264Profile'), ['Baseline']);
  const call = await connect();
  // The npm client prefers Media2 when GetServices offers it: H.265 lives there.
  const profiles = (await call('getProfiles')) as {
    $: { token: string };
    videoEncoderConfiguration: { $: { profile?: string; Profile?: string }; encoding: string };
  }[];
  assert.deepEqual(
    profiles.map((p) => [p.$.token, p.videoEncoderConfiguration.encoding, p.videoEncoderConfiguration.$.Profile ?? p.videoEncoderConfiguration.$.profile]),
    [
      ['profile_h265', 'H265', 'Main'],
      ['profile_h264', 'H264', 'Baseline'],
    ],
  );
  const uri = (await call('getStreamUri', { protocol: 'RTSP', profileToken: 'profile_h264' })) as { uri: string };
  assert.match(uri.uri, /\/preview_h264$/);
  const h265 = await post(
    '/onvif/media_service',
    envelope('<m:GetStreamUri xmlns:m="http://www.onvif.org/ver10/media/wsdl"><m:ProfileToken>profile_h265</m:ProfileToken></m:GetStreamUri>', [USER, PASS]),
  );
  assert.deepEqual(faultSubcodes(h265.body), ['ter:InvalidArgVal', 'ter:NoProfile']);
});

test('npm onvif: GetHostname, GetNTP/SetNTP, GetDNS, GetNetworkProtocols, GetNetworkInterfaces (a real interface first, never lo with a zero MAC)', async () => {
  const call = await connect();
  const host = (await call('getHostname')) as { name: string };
  assert.ok(host.name.length > 0);
  await call('setNTP', {
    fromDHCP: false,
    NTPManual: [
      { type: 'DNS', DNSname: 'ntp.example.org' },
      { type: 'IPv4', IPv4Address: '127.0.0.9' },
    ],
  });
  const ntp = (await call('getNTP')) as { fromDHCP: boolean; NTPManual: { type: string; DNSname?: string; IPv4Address?: string }[] };
  assert.equal(ntp.fromDHCP, false);
  assert.deepEqual(
    ntp.NTPManual.map((m) => m.DNSname ?? m.IPv4Address),
    ['ntp.example.org', '127.0.0.9'],
  );
  const badNtp = await post(
    '/onvif/device_service',
    envelope('<d:SetNTP><d:FromDHCP>false</d:FromDHCP><d:NTPManual><t:Type>DNS</t:Type><t:DNSname>a b</t:DNSname></d:NTPManual></d:SetNTP>', [USER, PASS]),
  );
  assert.equal(badNtp.status, 400);
  const dns = await post('/onvif/device_service', envelope('<d:GetDNS/>', [USER, PASS]));
  assert.equal(dns.status, 200, dns.body);
  assert.equal(texts(dns.body, NS.tt, 'FromDHCP')[0], 'false');
  const protocols = ((await call('getNetworkProtocols')) as { networkProtocols: { name: string; enabled: boolean; port: number }[] }).networkProtocols;
  const byName = Object.fromEntries(protocols.map((p) => [p.name, p]));
  assert.equal(Number(byName.HTTP.port), port);
  assert.equal(byName.RTSP.enabled, true);
  const ifaces = await post('/onvif/device_service', envelope('<d:GetNetworkInterfaces/>', [USER, PASS]));
  const names = texts(ifaces.body, NS.tt, 'Name');
  const macs = texts(ifaces.body, NS.tt, 'HwAddress');
  assert.ok(names.length > 0, ifaces.body);
  assert.notEqual(names[0], 'lo');
  assert.ok(!macs.includes('00:00:00:00:00:00'), macs.join());
});

test('npm onvif: GetScopes/SetScopes (fixed ones kept, configurable ones replaced and persisted), SetSystemDateAndTime, SystemReboot', async () => {
  const call = await connect();
  await call('setScopes', ['onvif://www.onvif.org/name/Gate', 'onvif://www.onvif.org/location/Yard']);
  const scopes = (await call('getScopes')) as { scopeDef: string; scopeItem: string }[];
  const items = scopes.map((s) => `${s.scopeDef} ${s.scopeItem}`);
  assert.ok(items.includes('Fixed onvif://www.onvif.org/Profile/Streaming'), items.join());
  assert.ok(items.includes('Configurable onvif://www.onvif.org/name/Gate'), items.join());
  assert.ok(!items.some((i) => i.includes('name/Lookout')), 'the configurable name was replaced');
  const fixed = await post('/onvif/device_service', envelope('<d:SetScopes><d:Scopes>onvif://www.onvif.org/Profile/T</d:Scopes></d:SetScopes>', [USER, PASS]));
  assert.deepEqual(faultSubcodes(fixed.body), ['ter:OperationProhibited', 'ter:ScopeOverwrite']);
  const saved = JSON.parse(await readFile(join(camera.device.dataDir, 'data', 'config', 'onvif_device.json'), 'utf8')) as { scopes: string[] };
  assert.deepEqual(saved.scopes, ['onvif://www.onvif.org/name/Gate', 'onvif://www.onvif.org/location/Yard']);
  // NTP mode with a time zone: accepted and shown; a manual time: a clear fault (the clock is the host's, kept by NTP).
  await call('setSystemDateAndTime', { dateTimeType: 'NTP', daylightSavings: false, timezone: 'CET-1CEST,M3.5.0,M10.5.0/3' });
  const time = await post('/onvif/device_service', envelope('<d:GetSystemDateAndTime/>'));
  assert.equal(texts(time.body, NS.tt, 'TZ')[0], 'CET-1CEST,M3.5.0,M10.5.0/3');
  assert.equal(texts(time.body, NS.tt, 'DateTimeType')[0], 'NTP');
  // The npm client reports any fault of these two as a "Wrong … response": the fault itself is read raw.
  await assert.rejects(call('setSystemDateAndTime', { dateTimeType: 'Manual', daylightSavings: false, dateTime: new Date() }));
  const manual = await post(
    '/onvif/device_service',
    envelope('<d:SetSystemDateAndTime><d:DateTimeType>Manual</d:DateTimeType><d:DaylightSavings>false</d:DaylightSavings></d:SetSystemDateAndTime>', [
      USER,
      PASS,
    ]),
  );
  assert.deepEqual(faultSubcodes(manual.body), ['ter:InvalidArgVal', 'ter:NtpServerUndefined']);
  assert.match(texts(manual.body, NS.env, 'Text')[0], /keeps its clock by NTP/);
  await assert.rejects(call('systemReboot'));
  const reboot = await post('/onvif/device_service', envelope('<d:SystemReboot/>', [USER, PASS]));
  assert.deepEqual(faultSubcodes(reboot.body), ['ter:ActionNotSupported']);
  assert.match(texts(reboot.body, NS.env, 'Text')[0], /cannot restart itself/);
});

test('npm onvif: GetUsers, CreateUsers, SetUser, DeleteUsers; a created user signs in with WS-Security and HTTP Digest, its level bounds it, passwords never answered', async () => {
  const call = await connect();
  await call('createUsers', [
    { username: 'viewer', password: 'viewer-pass-1', userLevel: 'User' },
    { username: 'ops', password: 'ops-pass-1', userLevel: 'Operator' },
  ]);
  const users = (await call('getUsers')) as { username: string; userLevel: string; password?: string }[];
  assert.deepEqual(
    users.map((u) => [u.username, u.userLevel, u.password]),
    [
      [USER, 'Administrator', undefined],
      ['viewer', 'User', undefined],
      ['ops', 'Operator', undefined],
    ],
  );
  const clash = await post(
    '/onvif/device_service',
    envelope('<d:CreateUsers><d:User><t:Username>ops</t:Username><t:Password>x1</t:Password><t:UserLevel>User</t:UserLevel></d:User></d:CreateUsers>', [
      USER,
      PASS,
    ]),
  );
  assert.deepEqual(faultSubcodes(clash.body), ['ter:OperationProhibited', 'ter:UsernameClash']);
  // The new user connects with the npm client (WS-Security) and reads; a User may not change settings.
  const viewer = await connect('viewer', 'viewer-pass-1');
  assert.ok(((await viewer('getHostname')) as { name: string }).name.length > 0);
  await assert.rejects(viewer('setScopes', ['onvif://www.onvif.org/name/X']));
  const userSets = await post(
    '/onvif/device_service',
    envelope('<d:SetScopes><d:Scopes>onvif://www.onvif.org/name/X</d:Scopes></d:SetScopes>', ['viewer', 'viewer-pass-1']),
  );
  assert.equal(userSets.status, 403);
  assert.match(texts(userSets.body, NS.env, 'Text')[0], /needs an Administrator/);
  const denied = await post('/onvif/device_service', envelope('<d:GetUsers/>', ['viewer', 'viewer-pass-1']));
  assert.equal(denied.status, 403);
  // HTTP Digest with the created user.
  const challenge = await post('/onvif/device_service', envelope('<d:GetNTP/>'));
  const digest = await post('/onvif/device_service', envelope('<d:GetNTP/>'), {
    Authorization: digestAuthorization(String(challenge.headers['www-authenticate']), { uri: '/onvif/device_service', nc: 1, user: 'ops', pass: 'ops-pass-1' }),
  });
  assert.equal(digest.status, 200, digest.body);
  // SetUser: a new password; the old one stops working.
  await call('setUsers', [{ username: 'viewer', password: 'viewer-pass-2', userLevel: 'Operator' }]);
  const oldPassword = await post('/onvif/device_service', envelope('<d:GetNTP/>', ['viewer', 'viewer-pass-1']));
  assert.equal(oldPassword.status, 401);
  const renamed = await post('/onvif/device_service', envelope('<d:GetNTP/>', ['viewer', 'viewer-pass-2']));
  assert.equal(renamed.status, 200);
  const fixedUser = await post('/onvif/device_service', envelope(`<d:DeleteUsers><d:Username>${USER}</d:Username></d:DeleteUsers>`, [USER, PASS]));
  assert.deepEqual(faultSubcodes(fixedUser.body), ['ter:OperationProhibited', 'ter:FixedUser']);
  await call('deleteUsers', ['viewer']);
  const gone = await post('/onvif/device_service', envelope('<d:GetNTP/>', ['viewer', 'viewer-pass-2']));
  assert.equal(gone.status, 401);
  // Persisted under the data root, readable by the device alone.
  const file = join(camera.device.dataDir, 'data', 'config', 'onvif_device.json');
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const saved = JSON.parse(await readFile(file, 'utf8')) as { users: { name: string }[] };
  assert.deepEqual(
    saved.users.map((u) => u.name),
    ['ops'],
  );
});

test('npm onvif: Imaging GetImagingSettings, GetOptions, GetMoveOptions, GetStatus of the one source; SetImagingSettings refuses each setting the source cannot honour', async () => {
  const call = await connect();
  const services = await post('/onvif/device_service', envelope('<d:GetServices><d:IncludeCapability>false</d:IncludeCapability></d:GetServices>'));
  assert.ok(texts(services.body, NS.tds, 'Namespace').includes(NS.timg));
  const settings = (await call('getImagingSettings', { token: 'video_source' })) as Record<string, unknown>;
  assert.equal(settings.brightness, undefined, 'no brightness is claimed');
  const timg = (body: string): Promise<Reply> =>
    post('/onvif/imaging_service', envelope(`<i:${body} xmlns:i="${NS.timg}"><i:VideoSourceToken>video_source</i:VideoSourceToken></i:${body}>`, [USER, PASS]));
  for (const action of ['GetOptions', 'GetMoveOptions', 'GetStatus']) {
    const r = await timg(action);
    assert.equal(r.status, 200, `${action}: ${r.body}`);
  }
  await call('imagingGetStatus', { token: 'video_source' });
  const set = await post(
    '/onvif/imaging_service',
    envelope(
      `<i:SetImagingSettings xmlns:i="${NS.timg}"><i:VideoSourceToken>video_source</i:VideoSourceToken><i:ImagingSettings><t:Brightness>60</t:Brightness><t:Exposure><t:Mode>AUTO</t:Mode></t:Exposure></i:ImagingSettings></i:SetImagingSettings>`,
      [USER, PASS],
    ),
  );
  assert.equal(set.status, 400);
  assert.deepEqual(faultSubcodes(set.body), ['ter:InvalidArgVal', 'ter:SettingsInvalid']);
  assert.match(texts(set.body, NS.env, 'Text')[0], /Brightness \(not supported\), Exposure \(not supported\)/);
  await assert.rejects(call('setImagingSettings', { token: 'video_source', brightness: 60 }));
  const noSource = await post(
    '/onvif/imaging_service',
    envelope(`<i:GetImagingSettings xmlns:i="${NS.timg}"><i:VideoSourceToken>nope</i:VideoSourceToken></i:GetImagingSettings>`, [USER, PASS]),
  );
  assert.deepEqual(faultSubcodes(noSource.body), ['ter:InvalidArgVal', 'ter:NoSource']);
});

test('WS-Security: one nonce with a fresh Created each time (as libonvif signs) passes, the same token again at once from the same address too; later it is a replay', async () => {
  const nonce = randomBytes(16);
  const t0 = Date.now();
  const first = new Date(t0).toISOString();
  assert.equal((await post('/onvif/device_service', envelope('<d:GetNTP/>', [USER, PASS, nonce, first]))).status, 200);
  assert.equal((await post('/onvif/device_service', envelope('<d:GetNTP/>', [USER, PASS, nonce, new Date(t0 + 2).toISOString()]))).status, 200);
  // libonvif's two requests in one millisecond: the very same token, from the same address, at once.
  const sameMillisecond = await post('/onvif/device_service', envelope('<d:GetNTP/>', [USER, PASS, nonce, first]));
  assert.equal(sameMillisecond.status, 200, sameMillisecond.body);
  await new Promise((r) => setTimeout(r, TOKEN_REPEAT_MS + 50));
  const replay = await post('/onvif/device_service', envelope('<d:GetNTP/>', [USER, PASS, nonce, first]));
  assert.equal(replay.status, 401);
  assert.match(texts(replay.body, NS.env, 'Text')[0], /already used/);
});
