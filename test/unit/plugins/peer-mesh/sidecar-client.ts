/** A test client of the peer sidecar (node:https with the client material given), shared by the sidecar unit test and the peer-mesh integration test. */
import { request } from 'node:https';

export interface Reply {
  status: number;
  body: unknown;
}

/** One HTTPS request to a sidecar with the client material given (none: no certificate at all). */
export function sidecarRequest(
  o: { host: string; port: number; ca: Buffer | string; cert?: Buffer | string; key?: Buffer | string; localAddress?: string },
  path = '/peer/query?q=peer_hello',
  method = 'POST',
  body = '',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: o.host,
        port: o.port,
        localAddress: o.localAddress,
        path,
        method,
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
