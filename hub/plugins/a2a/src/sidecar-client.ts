import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { PeerHelloAckSchema, type PeerHelloAck } from 'lookout/core/contracts';
import { a2aError } from './a2a-errors.js';

/** A sidecar's answer is a small JSON object; more than this is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface SidecarCall {
  host: string;
  port: number;
  /** The device the hub means to reach: its certificate must name it (CN). */
  deviceId: string;
  tls: { key: Buffer; cert: Buffer; ca: Buffer };
  timeoutMs: number;
  signal: AbortSignal;
}

/** A device's acknowledgement, with the SHA-256 fingerprint of the certificate its sidecar presented to the hub. */
export type SidecarAck = PeerHelloAck & {
  /** Colon hex, upper case (as Node and the identity plugin write it): what the hub saw, not what the device says. */
  tls_fingerprint: string;
};

/**
 * `POST /peer/query?q=peer_hello` to a device's sidecar over mutual TLS (TLS 1.3, the hub's
 * certificate, only the fleet CA trusted, the server's certificate must name the device asked for),
 * a fresh connection each time. The answer must be that device's peer_hello acknowledgement; its
 * `cert_fingerprint` is the device's word, `tls_fingerprint` is the certificate the handshake proved.
 */
export async function peerHelloOverMtls(call: SidecarCall): Promise<SidecarAck> {
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = AbortSignal.any([call.signal, timeout]);
  const where = `${call.deviceId}'s sidecar at ${call.host}:${call.port}`;
  let answer: Answer;
  try {
    answer = await post(call, signal);
  } catch (err) {
    if (timeout.aborted) throw a2aError('peer_timeout', `${where} did not answer within ${call.timeoutMs} ms`, { timeout_ms: call.timeoutMs });
    if (call.signal.aborted) throw a2aError('peer_unreachable', `the query to ${where} was cancelled: the client went away`, { reason: 'cancelled' });
    const e = err as NodeJS.ErrnoException;
    throw a2aError('peer_unreachable', `${where}: ${e.message}`, { reason: e.code ?? 'error' });
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw a2aError('peer_answer_invalid', `${where} answered ${answer.status} with something that is not JSON`, { status: answer.status });
  }
  if (answer.status !== 200) {
    const error = (body as { error?: unknown } | null)?.error ?? null;
    throw a2aError('peer_refused', `${where} refused the query with ${answer.status}`, { status: answer.status, error });
  }
  const ack = PeerHelloAckSchema.safeParse(body);
  if (!ack.success) {
    throw a2aError('peer_answer_invalid', `${where} answered with no peer_hello acknowledgement: ${ack.error.issues[0]?.message ?? 'invalid'}`, {
      path: ack.error.issues[0]?.path.join('.') ?? '',
    });
  }
  if (ack.data.device_id !== call.deviceId) {
    throw a2aError('peer_answer_invalid', `${where} answered as ${JSON.stringify(ack.data.device_id)}`, { device_id: ack.data.device_id });
  }
  // Last: the acknowledgement is a loose object, and a field of that name in it is only the device's word.
  return { ...ack.data, tls_fingerprint: answer.tlsFingerprint };
}

type Answer = { status: number; text: string; tlsFingerprint: string };

function post(call: SidecarCall, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: call.host.replace(/^\[(.*)\]$/, '$1'),
        port: call.port,
        method: 'POST',
        path: '/peer/query?q=peer_hello',
        headers: { 'content-type': 'application/json', 'content-length': 2 },
        key: call.tls.key,
        cert: call.tls.cert,
        ca: call.tls.ca,
        minVersion: 'TLSv1.3',
        rejectUnauthorized: true,
        // The address came from the registry; what proves the peer is the device asked for is its
        // certificate of the fleet CA naming it, not the address.
        checkServerIdentity: (_host: string, cert: PeerCertificate) =>
          cert.subject.CN === call.deviceId ? undefined : new Error(`the sidecar's certificate names ${JSON.stringify(cert.subject.CN)}, not ${call.deviceId}`),
        agent: false,
        signal,
      },
      (res) => {
        // Read now, while the socket is open: the certificate this connection's handshake verified.
        const tlsFingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            res.destroy(new Error(`the answer exceeds ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), tlsFingerprint }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}
