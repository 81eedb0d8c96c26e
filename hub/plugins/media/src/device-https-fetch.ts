import { request, type AgentOptions } from 'node:https';
import { Readable } from 'node:stream';
import { DeviceTlsAgents, type DevicePin } from 'lookout/lib/tls';

/**
 * GET over https from a device whose tool server speaks TLS, answered as a fetch Response (what the
 * recordings download reads): node's https with an agent per device that trusts the fleet CA only
 * and pins the certificate the device announced (global fetch cannot be given a CA or an identity
 * check without undici's own Agent, which is not a dependency). Agents are kept alive per device and
 * replaced when its pinned fingerprint changes. Redirects are not followed, as with `redirect: 'manual'`.
 */
export class DeviceHttpsFetch {
  private readonly agents: DeviceTlsAgents;

  constructor(tls: (pin: DevicePin) => AgentOptions) {
    this.agents = new DeviceTlsAgents(tls);
  }

  get(url: URL, pin: DevicePin, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    const agent = this.agents.agentOf(pin);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'GET', headers, agent, ...(signal ? { signal } : {}) }, (res) => {
        const head = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) head.set(k, Array.isArray(v) ? v.join(', ') : v);
        const status = res.statusCode ?? 502;
        const body = status === 204 || status === 304 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, headers: head }));
      });
      req.once('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agents.close();
  }
}
