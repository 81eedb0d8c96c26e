import { createHash, createPrivateKey, diffieHellman, hkdfSync, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { checkIssuedBy, commonNameOf } from 'lookout/lib/tls';

/**
 * Who this device is to the mesh, and how it knows who its peers are.
 *
 * The mesh used to sign every datagram with the one fleet mesh key every device holds, so any device
 * could sign as any other. A key per pair of devices derived from the fleet secret would not help while
 * every device holds that secret (it could derive every pair's key), so the pair key here is derived from
 * what only the two devices hold: an ECDH agreement between their device keys, whose public halves are
 * vouched for by the fleet CA in the device certificates the sidecar already uses (CN = device id). The
 * pair key is HKDF-SHA256(ECDH(mine, theirs), salt = fleet mesh key, info = "lookout-mesh-pair-v1" and the
 * two ids sorted): both ends compute it alone, no third device can, and the fleet key still scopes it to
 * the fleet. Heartbeats then cost one HMAC; only the introduction that sets it up costs a signature.
 */
export interface MeshIdentityMaterial {
  /** PEMs as the sidecar reads them: the device certificate and key, and the fleet CA. */
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

export class MeshIdentity {
  readonly certificate: Buffer;
  readonly privateKey: KeyObject;
  private readonly ca: Buffer;

  constructor(
    readonly deviceId: string,
    material: MeshIdentityMaterial,
  ) {
    this.certificate = new X509Certificate(material.cert).raw;
    this.privateKey = createPrivateKey(material.key);
    this.ca = material.ca;
  }

  /** The key this device and `peerId` (whose vouched public key is `peerPublic`) share, under the fleet key. */
  pairKey(fleetKey: Buffer, peerId: string, peerPublic: KeyObject): Buffer {
    const shared = diffieHellman({ privateKey: this.privateKey, publicKey: peerPublic });
    const [lo, hi] = [this.deviceId, peerId].sort();
    return Buffer.from(hkdfSync('sha256', shared, fleetKey, `lookout-mesh-pair-v1\0${lo}\0${hi}`, 32));
  }

  /**
   * A peer's certificate checked: issued by the fleet CA, in date, its CN the id it claims. The answer is
   * kept per certificate (a check is a signature verification; a peer sends the same certificate each time),
   * bounded, and rechecked after a while so an expiry is noticed.
   */
  checkPeerCertificate(der: Buffer, claimedId: string, now: Date, cache: CertificateCache): PeerCertificate | string {
    const digest = createHash('sha256').update(der).digest('base64url');
    let entry = cache.get(digest, now.getTime());
    if (!entry) {
      entry = checkCertificate(der, this.ca, now);
      cache.set(digest, entry, now.getTime());
    }
    if (typeof entry === 'string') return entry;
    return entry.commonName === claimedId ? entry : `the certificate names ${entry.commonName}, not ${claimedId}`;
  }
}

export interface PeerCertificate {
  commonName: string;
  publicKey: KeyObject;
  fingerprint: string;
  /** Whether a sender's signature over `data` is this certificate key's (ECDSA P-256, IEEE P1363). */
  verify(data: Buffer, signature: Buffer): boolean;
}

function checkCertificate(der: Buffer, ca: Buffer, now: Date): PeerCertificate | string {
  const check = checkIssuedBy(der, ca, now);
  if (!check.ok) return check.reason;
  const cert = new X509Certificate(der);
  const commonName = commonNameOf(cert);
  if (!commonName) return 'the certificate has no single common name';
  const publicKey = cert.publicKey;
  if (publicKey.asymmetricKeyType !== 'ec' || publicKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return 'the certificate key is not P-256';
  return {
    commonName,
    publicKey,
    fingerprint: check.fingerprint,
    verify: (data, signature) => {
      try {
        return verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
      } catch {
        return false;
      }
    },
  };
}

/** Checked certificates by digest, least recently used forgotten first, each for `ttlMs`. */
export class CertificateCache {
  private readonly entries = new Map<string, { value: PeerCertificate | string; at: number }>();
  /** Checks done (not answered from the cache): each is a signature verification. */
  checks = 0;

  constructor(
    private readonly max = 256,
    private readonly ttlMs = 600_000,
  ) {}

  get(digest: string, now: number): PeerCertificate | string | undefined {
    const entry = this.entries.get(digest);
    if (!entry || now - entry.at > this.ttlMs) return undefined;
    this.entries.delete(digest);
    this.entries.set(digest, entry);
    return entry.value;
  }

  set(digest: string, value: PeerCertificate | string, now: number): void {
    this.checks += 1;
    this.entries.delete(digest);
    this.entries.set(digest, { value, at: now });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}
