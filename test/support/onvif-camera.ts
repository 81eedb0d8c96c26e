/**
 * A simulated camera with its ONVIF surface (the onvif-camera test image on an embedded broker), and
 * the clients the ONVIF tests speak to it with: the npm `onvif` client (0.8.x, a client no one on the
 * project wrote: what UniFi Protect and many NVR tools use) and raw SOAP with a WS-Security token.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request, type RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../hub/src/broker/embedded-broker.js';
import { startPluginDevice, type PluginDevice } from './plugin-device.js';

export const ONVIF_USER = 'admin';
export const ONVIF_PASS = 'onvif-test-pass';
export const ONVIF_NS = {
  env: 'http://www.w3.org/2003/05/soap-envelope',
  tds: 'http://www.onvif.org/ver10/device/wsdl',
  trt: 'http://www.onvif.org/ver10/media/wsdl',
  tr2: 'http://www.onvif.org/ver20/media/wsdl',
  tt: 'http://www.onvif.org/ver10/schema',
  timg: 'http://www.onvif.org/ver20/imaging/wsdl',
};

export interface OnvifCamera {
  device: PluginDevice;
  port: number;
  stop(): Promise<void>;
}

/**
 * The camera, its ONVIF plugin started ok, with ONVIF_USER / ONVIF_PASS and `env` on top; `prepare`
 * runs on its data folder before the plugins start (a camera profile written there, say).
 */
export async function startOnvifCamera(env: Record<string, string> = {}, prepare?: (dataDir: string) => Promise<void>): Promise<OnvifCamera> {
  const broker = await EmbeddedBroker.start({ port: 0 });
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'onvif-camera.json'), 'utf8')) as { plugins: string[] };
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', LIVE_PORT: '0', HEALTH_INTERVAL_MS: '60000', ONVIF_USER, ONVIF_PASSWORD: ONVIF_PASS, ...env },
    prepare,
  });
  const onvif = device.runtime.plugins.find((p) => p.name === 'onvif')!;
  assert.equal(onvif.state, 'ok', onvif.message);
  assert.ok(device.runtime.ports.onvif > 0, 'the onvif port is announced');
  return {
    device,
    port: device.runtime.ports.onvif,
    async stop() {
      await device.stop();
      await broker.close();
    },
  };
}

interface Cam {
  [method: string]: unknown;
}
type CamCtor = new (
  o: { hostname: string; port: number; username: string; password: string; timeout?: number; autoconnect?: boolean },
  cb?: (err: Error | null) => void,
) => Cam;
const { Cam: OnvifCam } = createRequire(import.meta.url)('onvif') as { Cam: CamCtor };

/** A connected npm `onvif` Cam, its callback methods as promises. */
export async function connectOnvifCam(
  port: number,
  username = ONVIF_USER,
  password = ONVIF_PASS,
): Promise<(method: string, ...args: unknown[]) => Promise<unknown>> {
  const cam = await new Promise<Cam>((resolve, reject) => {
    const c: Cam = new OnvifCam({ hostname: '127.0.0.1', port, username, password, timeout: 10_000 }, (err) => (err ? reject(err) : resolve(c)));
  });
  return (method, ...args) =>
    new Promise((resolve, reject) => {
      (cam[method] as (...a: unknown[]) => void).call(cam, ...args, (err: Error | null, data: unknown) => (err ? reject(err) : resolve(data)));
    });
}

export interface SoapReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** `via`: `agent: false` for a connection of its own (tests counting connections), `localAddress` for another source address. */
export function postSoap(
  port: number,
  path: string,
  xml: string | Buffer,
  headers: Record<string, string> = {},
  via: Pick<RequestOptions, 'agent' | 'localAddress'> = {},
): Promise<SoapReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ...via, headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', ...headers } },
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

/**
 * A WS-Security UsernameToken with a PasswordDigest (base64 SHA-1 of nonce, Created and password).
 * `prefix`: the WSSE namespace's prefix (an unusual one checks that the server matches namespaces, not prefixes).
 */
export function usernameToken(user: string, pass: string, nonce: Buffer = randomBytes(16), created = new Date().toISOString(), prefix = 'w'): string {
  const digest = createHash('sha1')
    .update(Buffer.concat([nonce, Buffer.from(created), Buffer.from(pass)]))
    .digest('base64');
  const w = prefix;
  return (
    `<${w}:Security xmlns:${w}="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" xmlns:u="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd">` +
    `<${w}:UsernameToken><${w}:Username>${user}</${w}:Username><${w}:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">${digest}</${w}:Password>` +
    `<${w}:Nonce>${nonce.toString('base64')}</${w}:Nonce><u:Created>${created}</u:Created></${w}:UsernameToken></${w}:Security>`
  );
}

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

/**
 * A client's answer to an HTTP Digest challenge (RFC 7616, MD5, qop=auth): `challenge` is the
 * WWW-Authenticate header; `nc` the nonce count (a test repeats one to check replays are refused).
 */
export function digestAuthorization(challenge: string, o: { uri: string; nc: number; user?: string; pass?: string; method?: string }): string {
  const realm = /realm="([^"]+)"/.exec(challenge)![1];
  const nonce = /nonce="([^"]+)"/.exec(challenge)![1];
  const { uri, user = ONVIF_USER, pass = ONVIF_PASS, method = 'POST' } = o;
  const nc = o.nc.toString(16).padStart(8, '0');
  const cnonce = randomBytes(8).toString('hex');
  const response = md5(`${md5(`${user}:${realm}:${pass}`)}:${nonce}:${nc}:${cnonce}:auth:${md5(`${method}:${uri}`)}`);
  return `Digest username="${user}", realm="${realm}", nonce="${nonce}", uri="${uri}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="${cnonce}", response="${response}"`;
}

export const parseXml = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');

export function xmlTexts(xml: string, ns: string, local: string): string[] {
  const list = parseXml(xml).getElementsByTagNameNS(ns, local);
  return Array.from({ length: list.length }, (_, i) => (list.item(i)?.textContent ?? '').trim());
}

/** A SOAP fault's subcodes (every Value but the first, the Code's own), outermost first; the body must be one fault. */
export function faultSubcodes(xml: string): string[] {
  assert.equal(parseXml(xml).getElementsByTagNameNS(ONVIF_NS.env, 'Fault').length, 1, `a SOAP fault: ${xml}`);
  return xmlTexts(xml, ONVIF_NS.env, 'Value').slice(1);
}
