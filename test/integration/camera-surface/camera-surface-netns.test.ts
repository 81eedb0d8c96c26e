/**
 * The whole camera surface of a real `lookout-edge` process (test image surface-camera: camera,
 * encode, rtsp, onvif, ws-discovery), inside a network namespace this test makes
 * (test/support/netns.ts): node-onvif-ts finds it by WS-Discovery, signs in (and is refused with a
 * wrong password), reads its profiles and RTSP URI, ffprobe reads that URI, and the device says Bye
 * when it stops. Nothing here can reach the machine's network.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DOMParser, type Element } from '@xmldom/xmldom';
import onvif, { OnvifDevice } from 'node-onvif-ts';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { endpointAddress } from '../../../plugins/onvif/src/service.js';
import { NS } from '../../../plugins/onvif/src/soap/namespaces.js';
import { startDeviceProcess, type DeviceExit, type DeviceProcess } from '../../support/device-process.js';
import { assertOwnNetns, INSIDE_NETNS, runFileInNetns } from '../../support/netns.js';
import { waitFor } from '../../support/wait-for.js';

const GROUP = '239.255.255.250';
const PORT = 3702;
const DEVICE_ID = 'cam-surface';
const USER = 'admin';
const PASS = 'surface-test-pass';

/** A listener on the discovery group (loopback), collecting what arrives. */
class GroupListener {
  readonly received: string[] = [];
  private constructor(private readonly socket: Socket) {
    socket.on('message', (msg) => this.received.push(msg.toString('utf8')));
  }

  static async open(): Promise<GroupListener> {
    assertOwnNetns();
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(PORT, '0.0.0.0', () => resolve());
    });
    socket.setMulticastInterface('127.0.0.1');
    socket.addMembership(GROUP, '127.0.0.1');
    return new GroupListener(socket);
  }

  /** Messages whose body holds wsd:`local` (Hello, Bye) from `address`. */
  from(address: string, local: string): Element[] {
    return this.received
      .map((text) => new DOMParser().parseFromString(text, 'text/xml').documentElement)
      .filter((root): root is Element => !!root && root.getElementsByTagNameNS(NS.wsd, local).length > 0)
      .filter((root) => root.getElementsByTagNameNS(NS.wsa04, 'Address')[0]?.textContent?.trim() === address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

function run(cmd: string, args: string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The same as `run`, its standard input fed with `input` (onvif-util reads commands there). */
function runWithInput(cmd: string, args: string[], input: string, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const haveOnvifUtil = spawnSync('which', ['onvif-util']).status === 0;

/** The npm `onvif` client (0.8.x): it speaks Media2 when the device offers it. */
interface Cam {
  [method: string]: unknown;
}
type CamCtor = new (o: { hostname: string; port: number; username: string; password: string; timeout?: number }, cb?: (err: Error | null) => void) => Cam;
const { Cam: OnvifCam } = createRequire(import.meta.url)('onvif') as { Cam: CamCtor };

if (!INSIDE_NETNS) {
  runFileInNetns(import.meta.url, 'The camera surface of a lookout-edge process', { timeoutMs: 150_000 });
} else {
  describe('the camera surface of a lookout-edge process, inside the namespace', () => {
    let broker: EmbeddedBroker;
    let listener: GroupListener;
    let device: DeviceProcess | undefined;
    let xaddr: string;
    let rtspUri: string;
    let h264Uri: string;

    before(async () => {
      assertOwnNetns();
      listener = await GroupListener.open();
      broker = await EmbeddedBroker.start({ port: 0 });
      device = await startDeviceProcess({
        deviceId: DEVICE_ID,
        image: join(packageRoot(), 'test', 'fixtures', 'images', 'surface-camera.json'),
        mqtt: broker.url,
        env: {
          ENCODE_RESOLUTION: '320x240',
          ENCODE_FPS: '5',
          RTSP_H264: 'on',
          HEALTH_INTERVAL_MS: '60000',
          ONVIF_USER: USER,
          ONVIF_PASSWORD: PASS,
        },
        readyTimeoutMs: 30_000,
      });
    });

    after(async () => {
      await device?.stop();
      await listener?.close();
      await broker?.close();
    });

    it('announces its ONVIF, RTSP and discovery ports and says Hello on the group', async () => {
      const ports = device!.ready.ports;
      assert.ok(ports.onvif > 0 && ports.rtsp > 0, `ready line ports: ${JSON.stringify(ports)}`);
      assert.equal(ports.ws_discovery, PORT);
      await waitFor(() => listener.from(endpointAddress(DEVICE_ID), 'Hello').length === 1, 'Hello', 10_000);
    });

    it('is found by node-onvif-ts startProbe with its device_service XAddr', async () => {
      const found = await onvif.startProbe();
      const ours = found.filter((d) => d.urn === endpointAddress(DEVICE_ID));
      assert.equal(ours.length, 1, JSON.stringify(found));
      // HTTP first, then the same services over HTTPS with the device certificate (as cameras offering HTTPS list them).
      assert.deepEqual(ours[0].xaddrs, [
        `http://127.0.0.1:${device!.ready.ports.onvif}/onvif/device_service`,
        `https://127.0.0.1:${device!.ready.ports.onvif_https}/onvif/device_service`,
      ]);
      xaddr = ours[0].xaddrs[0];
      // Scope values are URI segments (percent-encoded); node-onvif-ts hands them over as they are.
      assert.match(decodeURIComponent(ours[0].name), new RegExp(DEVICE_ID));
      assert.ok(ours[0].scopes.includes('onvif://www.onvif.org/Profile/Streaming'), JSON.stringify(ours[0].scopes));
    });

    it('OnvifDevice.init() (Media1) with the right credentials reports the H.264 profile only (H265 is no tt:VideoEncoding) and its RTSP URI', async () => {
      const cam = new OnvifDevice({ xaddr, user: USER, pass: PASS });
      const info = await cam.init();
      assert.equal(info.Manufacturer, 'Lookout');
      assert.match(String(info.HardwareId), new RegExp(DEVICE_ID));
      const profiles = cam.getProfileList();
      assert.deepEqual(
        profiles.map((p) => [p.video.encoder?.encoding, p.video.encoder?.resolution.width, p.video.encoder?.resolution.height]),
        [['H264', 320, 240]],
      );
      const rtsp = device!.ready.ports.rtsp;
      assert.equal(profiles[0].stream.rtsp, `rtsp://127.0.0.1:${rtsp}/preview_h264`);
      h264Uri = profiles[0].stream.rtsp;
    });

    it('npm onvif (Media2) reports both profiles, H.264 as Baseline and H.265 as Main, with their RTSP URIs', async () => {
      const url = new URL(xaddr);
      const cam = await new Promise<Cam>((resolve, reject) => {
        const c: Cam = new OnvifCam({ hostname: url.hostname, port: Number(url.port), username: USER, password: PASS, timeout: 10_000 }, (err) =>
          err ? reject(err) : resolve(c),
        );
      });
      const call = (method: string, ...args: unknown[]): Promise<unknown> =>
        new Promise((resolve, reject) =>
          (cam[method] as (...a: unknown[]) => void).call(cam, ...args, (err: Error | null, data: unknown) => (err ? reject(err) : resolve(data))),
        );
      const profiles = (await call('getProfiles')) as { $: { token: string }; videoEncoderConfiguration: { $: { Profile?: string }; encoding: string } }[];
      assert.deepEqual(
        profiles.map((p) => [p.videoEncoderConfiguration.encoding, p.videoEncoderConfiguration.$.Profile]),
        [
          ['H265', 'Main'],
          ['H264', 'Baseline'],
        ],
      );
      const uri = (await call('getStreamUri', { protocol: 'RTSP', profileToken: profiles[0].$.token })) as { uri: string };
      assert.equal(uri.uri, `rtsp://127.0.0.1:${device!.ready.ports.rtsp}/preview`);
      rtspUri = uri.uri;
    });

    it('ffprobe: the H.264 stream is the profile ONVIF reports (libx264 Constrained Baseline, ONVIF Baseline)', async () => {
      const url = new URL(h264Uri);
      url.username = USER;
      url.password = PASS;
      const r = await run('ffprobe', ['-v', 'error', '-rtsp_transport', 'tcp', '-show_entries', 'stream=codec_name,profile', '-of', 'csv=p=0', url.toString()]);
      assert.equal(r.code, 0, `ffprobe: ${r.stderr}`);
      assert.equal(r.stdout.trim(), 'h264,Constrained Baseline');
    });

    it(
      'onvif-util (libonvif) finds the camera, signs in (one nonce, fresh Created each request) and reads its time, profiles and RTSP URI',
      { skip: !haveOnvifUtil && 'onvif-util is not installed (scripts/setup-system.sh installs onvif-tools)' },
      async () => {
        const r = await runWithInput('onvif-util', ['-u', USER, '-p', PASS, '127.0.0.1'], 'get time\nget profiles\nget rtsp\nquit\n');
        const out = `${r.stdout}${r.stderr}`;
        assert.match(out, /Time Set By: NTP/, out);
        assert.match(out, /Token 0: profile_h264/, out);
        assert.ok(out.includes(`rtsp://127.0.0.1:${device!.ready.ports.rtsp}/preview_h264`), out);
        // libonvif keeps one nonce for the session and stamps Created in milliseconds: two of its requests in
        // the same millisecond carry the very same token, which the device lets the same peer repeat at once
        // (a replay from elsewhere, or later, is still refused: test/unit/plugins/onvif/onvif-auth.test.ts).
      },
    );

    it('OnvifDevice.init() with a wrong password fails', async () => {
      const cam = new OnvifDevice({ xaddr, user: USER, pass: 'not-the-password' });
      await assert.rejects(cam.init(), /not authorized/i);
    });

    it('ffprobe reads the reported RTSP URI over TCP with the credentials: hevc 320x240', async () => {
      const url = new URL(rtspUri);
      url.username = USER;
      url.password = PASS;
      const r = await run('ffprobe', [
        '-v',
        'error',
        '-rtsp_transport',
        'tcp',
        '-show_entries',
        'stream=codec_name,width,height',
        '-of',
        'csv=p=0',
        url.toString(),
      ]);
      assert.equal(r.code, 0, `ffprobe: ${r.stderr}`);
      assert.equal(r.stdout.trim(), 'hevc,320,240');
    });

    it('stops cleanly and says Bye on the group', async () => {
      const exit: DeviceExit = await device!.stop(10_000);
      const logs = device!.logs();
      device = undefined;
      assert.deepEqual(exit, { code: 0, signal: null }, logs.slice(-3000));
      const errors = logs.split('\n').filter((line) => /"level":(50|60)\b/.test(line));
      assert.deepEqual(errors, [], 'the device logged no error');
      await waitFor(() => listener.from(endpointAddress(DEVICE_ID), 'Bye').length === 1, 'Bye', 5_000);
    });
  });
}
