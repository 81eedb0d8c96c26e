import { HelloMessageSchema } from 'lookout/core/contracts';
import type { MeshNetworks } from './mesh-networks.js';
import { helloAddress } from './peer-address.js';
import type { PeerAnnounce } from './peer-table.js';

/**
 * What a message on `devices/+/hello` means to the mesh: a peer to add, nothing (not a hello, our
 * own, or no mesh port announced), or a hello refused and counted: one whose device_id is not the
 * device its topic names (the broker lets a device publish only under its own id, so the topic is
 * the proof of who sent it; the payload is anyone's word), or one announcing no usable address.
 */
export type HelloOutcome =
  { kind: 'peer'; announce: PeerAnnounce } | { kind: 'ignored' } | { kind: 'refused'; reason: 'topic_mismatch' | 'no_address'; deviceId: string };

export function peerFromHello(topic: string, payload: Buffer, self: { deviceId: string; listenHost: string; networks: MeshNetworks }): HelloOutcome {
  const hello = parseHello(payload);
  if (!hello) return { kind: 'ignored' };
  const topicId = topic.split('/')[1];
  if (topicId !== hello.device_id) return { kind: 'refused', reason: 'topic_mismatch', deviceId: topicId ?? '' };
  if (hello.device_id === self.deviceId || hello.ports.mesh === undefined) return { kind: 'ignored' };
  const address = helloAddress(hello.ips, self.listenHost, self.networks);
  if (!address) return { kind: 'refused', reason: 'no_address', deviceId: hello.device_id };
  return {
    kind: 'peer',
    announce: { deviceId: hello.device_id, address, meshPort: hello.ports.mesh, sidecarPort: hello.ports.sidecar ?? null, source: 'hello' },
  };
}

/** A hello from the bus, or null when it is not one (nothing of a bad one is kept). */
function parseHello(payload: Buffer) {
  try {
    const parsed = HelloMessageSchema.safeParse(JSON.parse(payload.toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
