/**
 * Helpers of the A2A tests (unit, integration, bench): a hub that carries the a2a plugin, and a test
 * double of a device's peer sidecar at the edge of the world (an https server with the device's
 * certificate, client certificates of the fleet CA required) for tests that run no device process.
 * Not a test file itself.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Plugin } from '../../core/src/plugin/context.js';
import a2aPlugin from '../../hub/plugins/a2a/src/index.js';
import type { HubOptions } from '../../hub/src/hub-options.js';
import { loadHubPluginSet } from '../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { testHub } from './hub-helpers.js';

/** The hub's default plugin set, with the a2a plugin whether or not the set lists it yet. */
export async function hubPluginsWithA2a(): Promise<{ plugins: Plugin[]; essential: string[] }> {
  const set = await loadHubPluginSet();
  return { plugins: set.plugins.some((p) => p.name === 'a2a') ? set.plugins : [...set.plugins, a2aPlugin], essential: set.essential };
}

export async function a2aTestHub(options: HubOptions): Promise<RunningHub> {
  return testHub({ ...(await hubPluginsWithA2a()), ...options });
}

export interface TestSidecar {
  host: string;
  port: number;
  /** Callers that got an answer, by client certificate CN. */
  readonly callers: string[];
  /** TLS connections that reached the server (refused handshakes included). */
  readonly connections: number;
  /** Handshakes the server refused (no or a foreign client certificate). */
  readonly refused: number;
  close(): Promise<void>;
}

/** How the test sidecar answers one query: a status and body, 'hang' (never), or undefined for a valid ack. */
export type SidecarBehaviour = (req: { q: string | null; caller: string }) => { status: number; body: unknown; delayMs?: number } | 'hang' | undefined;

/**
 * A stand-in for a device's sidecar (the real one is the peer-mesh plugin's): TLS 1.3, client
 * certificate of the fleet CA required, `POST /peer/query?q=peer_hello` answered with a valid
 * PeerHelloAck for `deviceId` unless `behave` says otherwise.
 */
export async function startTestSidecar(options: {
  deviceId: string;
  certPath: string;
  keyPath: string;
  caPath: string;
  host?: string;
  behave?: SidecarBehaviour;
}): Promise<TestSidecar> {
  const callers: string[] = [];
  let connections = 0;
  let refused = 0;
  const server: Server = createServer(
    {
      key: await readFile(options.keyPath),
      cert: await readFile(options.certPath),
      ca: await readFile(options.caPath),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
    },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        const caller = String((req.socket as TLSSocket).getPeerCertificate().subject.CN);
        const q = new URL(req.url ?? '/', 'https://sidecar').searchParams.get('q');
        const plan = options.behave?.({ q, caller }) ?? { status: 200, body: sidecarAck(options.deviceId, caller) };
        if (plan === 'hang') return;
        const send = () => {
          callers.push(caller);
          const text = typeof plan.body === 'string' ? plan.body : JSON.stringify(plan.body);
          res.writeHead(plan.status, { 'content-type': 'application/json' }).end(text);
        };
        if (plan.delayMs) setTimeout(send, plan.delayMs);
        else send();
      });
    },
  );
  server.on('connection', () => connections++);
  server.on('tlsClientError', () => refused++);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    callers,
    get connections() {
      return connections;
    },
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The `ack` a test sidecar sends, for tests that alter it. */
export function sidecarAck(deviceId: string, caller = 'lookout-hub'): Record<string, unknown> {
  return {
    q: 'peer_hello',
    ack: true,
    device_id: deviceId,
    cert_fingerprint: null,
    peer_comm_status: 'ok',
    peers_up: 0,
    caller,
    received_at: new Date().toISOString(),
  };
}
