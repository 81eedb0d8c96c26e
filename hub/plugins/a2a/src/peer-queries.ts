import { toLookoutError } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { a2aError } from './a2a-errors.js';
import type { HubClientMaterial } from './client-material.js';
import type { PeerHelloResult, PeerQueries } from './service.js';
import { sidecarAddress } from './sidecar-address.js';
import { peerHelloOverMtls } from './sidecar-client.js';

/** The A2A_PEERS service: peer_hello to a device's sidecar with the hub's certificate, recorded in the debug ring. */
export class HubPeerQueries implements PeerQueries {
  constructor(
    private readonly o: {
      material: HubClientMaterial;
      timeoutMs: number;
      ring?: Pick<DebugRing, 'record'> | undefined;
    },
  ) {}

  async peerHello(device: RegisteredDevice, signal: AbortSignal): Promise<PeerHelloResult> {
    const started = performance.now();
    const ms = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      const { host, port } = sidecarAddress(device);
      const tls = this.o.material.current();
      if (!tls.ok) throw a2aError('no_client_certificate', `the hub cannot make peer queries: ${tls.problem}`);
      const ack = await peerHelloOverMtls({ host, port, deviceId: device.deviceId, tls, timeoutMs: this.o.timeoutMs, signal });
      // The tool URL's host: an IPv6 address is bracketed already.
      const sidecar = `${host}:${port}`;
      const result = { ...ack, rtt_ms: ms(), sidecar };
      this.o.ring?.record({
        kind: 'a2a',
        device_id: device.deviceId,
        message: `peer_hello ok (${result.rtt_ms} ms)`,
        details: { q: 'peer_hello', sidecar, ms: result.rtt_ms },
      });
      return result;
    } catch (err) {
      const e = toLookoutError(err);
      this.o.ring?.record({
        kind: 'a2a',
        device_id: device.deviceId,
        message: `peer_hello: ${e.message}`.slice(0, 300),
        details: { q: 'peer_hello', code: e.code, ms: ms() },
      });
      throw e;
    }
  }

  /**
   * Throws what peerHello would refuse before dialling (no sidecar port or address, no hub
   * certificate): checked before a signed query's nonce is claimed. Cheap: a few stats, no I/O.
   */
  check(device: RegisteredDevice): void {
    sidecarAddress(device);
    const tls = this.o.material.current();
    if (!tls.ok) throw a2aError('no_client_certificate', `the hub cannot make peer queries: ${tls.problem}`);
  }

  problem(): string | null {
    const tls = this.o.material.current();
    return tls.ok ? null : tls.problem;
  }
}
