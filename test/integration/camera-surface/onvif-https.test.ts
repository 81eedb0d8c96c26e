/**
 * ONVIF over HTTPS beside HTTP, as cameras offer it (issue 32, item 3): the same services on an
 * https port with the device certificate the identity plugin holds, HTTP Digest as on HTTP; an answer
 * over HTTPS hands back https addresses (GetServices, GetCapabilities), TLS 1.2 shows in the
 * security capabilities, WS-Discovery's XAddrs lists both, and HTTP stays for the clients that need it.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { deviceTlsPaths } from '../../../lib/tls/tls-paths.js';
import { OnvifServiceToken } from '../../../plugins/onvif/src/service.js';
import { digestAuthorization, ONVIF_NS, postSoap, startOnvifCamera, xmlTexts, type OnvifCamera, type SoapReply } from '../../support/onvif-camera.js';

const envelope = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${ONVIF_NS.env}"><s:Body>${body}</s:Body></s:Envelope>`;
const GET_SERVICES = envelope(`<GetServices xmlns="${ONVIF_NS.tds}"><IncludeCapability>true</IncludeCapability></GetServices>`);
const GET_INFORMATION = envelope(`<GetDeviceInformation xmlns="${ONVIF_NS.tds}"/>`);
const GET_CAPABILITIES = envelope(`<GetCapabilities xmlns="${ONVIF_NS.tds}"><Category>All</Category></GetCapabilities>`);
const PATH = '/onvif/device_service';

/** A SOAP POST over HTTPS; the certificate's fingerprint comes back with the answer (the client only looks: a camera's certificate is the fleet's, the test does not hold its CA here). */
function postSoapTls(port: number, xml: string, headers: Record<string, string> = {}): Promise<SoapReply & { fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: PATH,
        method: 'POST',
        rejectUnauthorized: false,
        agent: false,
        headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', ...headers },
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), fingerprint }));
      },
    );
    req.on('error', reject);
    req.end(xml);
  });
}

/** A request answered after its HTTP Digest challenge, as a client does. */
async function withDigest<T extends SoapReply>(send: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  const challenge = await send({});
  assert.equal(challenge.status, 401, challenge.body);
  return send({ Authorization: digestAuthorization(String(challenge.headers['www-authenticate']), { uri: PATH, nc: 1 }) });
}

describe('ONVIF over HTTPS beside HTTP, with the device certificate and HTTP Digest', () => {
  let camera: OnvifCamera;
  let httpsPort: number;

  before(async () => {
    camera = await startOnvifCamera();
    httpsPort = camera.device.runtime.ports.onvif_https;
  });
  after(() => camera?.stop());

  it('serves the device certificate on its https port, announced as onvif_https', async () => {
    assert.ok(httpsPort > 0 && httpsPort !== camera.port, JSON.stringify(camera.device.runtime.ports));
    const answer = await postSoapTls(httpsPort, GET_SERVICES);
    assert.equal(answer.status, 200, answer.body);
    const certificate = new X509Certificate(await readFile(deviceTlsPaths(camera.device.dataDir).certPath));
    assert.equal(answer.fingerprint, certificate.fingerprint256);
  });

  it('GetServices and GetCapabilities over HTTPS hand back https addresses and say TLS 1.2; over HTTP they stay http', async () => {
    // Pre-auth operations (ONVIF's PRE_AUTH class): no credentials needed, as over HTTP.
    const services = await postSoapTls(httpsPort, GET_SERVICES);
    const xaddrs = xmlTexts(services.body, ONVIF_NS.tds, 'XAddr');
    assert.ok(xaddrs.length >= 5, services.body);
    for (const x of xaddrs) assert.match(x, new RegExp(`^https://127\\.0\\.0\\.1:${httpsPort}/onvif/`));
    assert.match(services.body, /TLS1\.2="true"/);
    const caps = await postSoapTls(httpsPort, GET_CAPABILITIES);
    assert.equal(caps.status, 200, caps.body);
    for (const x of xmlTexts(caps.body, ONVIF_NS.tt, 'XAddr')) assert.match(x, /^https:\/\//);
    assert.deepEqual(xmlTexts(caps.body, ONVIF_NS.tt, 'TLS1.2'), ['true']);

    const plain = await postSoap(camera.port, PATH, GET_SERVICES);
    assert.equal(plain.status, 200, plain.body);
    for (const x of xmlTexts(plain.body, ONVIF_NS.tds, 'XAddr')) assert.match(x, new RegExp(`^http://127\\.0\\.0\\.1:${camera.port}/onvif/`));
  });

  it('HTTP Digest over HTTPS as over HTTP: challenged without credentials, answered with them', async () => {
    const r = await withDigest((h) => postSoapTls(httpsPort, GET_INFORMATION, h));
    assert.equal(r.status, 200, r.body);
    assert.equal(xmlTexts(r.body, ONVIF_NS.tds, 'SerialNumber').length, 1);
  });

  it('WS-Discovery XAddrs: http first, then https', () => {
    const onvif = camera.device.runtime.service(OnvifServiceToken)!;
    assert.deepEqual(onvif.xaddr('127.0.0.1').split(' '), [`http://127.0.0.1:${camera.port}${PATH}`, `https://127.0.0.1:${httpsPort}${PATH}`]);
  });
});

describe('ONVIF_HTTPS=0: HTTP only', () => {
  it('announces no https port and lists http alone', async () => {
    const camera = await startOnvifCamera({ ONVIF_HTTPS: '0' });
    try {
      assert.equal(camera.device.runtime.ports.onvif_https, undefined);
      const onvif = camera.device.runtime.service(OnvifServiceToken)!;
      assert.equal(onvif.xaddr('127.0.0.1'), `http://127.0.0.1:${camera.port}${PATH}`);
    } finally {
      await camera.stop();
    }
  });
});
