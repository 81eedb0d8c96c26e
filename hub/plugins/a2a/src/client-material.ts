import { readFileSync, statSync } from 'node:fs';
import { checkIssuedBy, keyMatchesCertificate, type TlsPaths } from 'lookout/lib/tls';

/** The hub's client certificate, its key and the fleet CA it pins, or why there is none. */
export type ClientTls = { ok: true; key: Buffer; cert: Buffer; ca: Buffer; fingerprint: string; notAfter: Date } | { ok: false; problem: string };

/**
 * The hub's TLS material in `<hub data dir>/tls/`, read when first needed and again whenever one of
 * the files changes (a `lookout certs` run while the hub is up takes effect at the next query), so
 * the hub starts without it and says why it cannot make peer queries until it is there.
 * Synchronous on purpose: three stats per query on small local files, and `problem()` can answer
 * at once. The key is only kept in memory and never shown.
 */
export class HubClientMaterial {
  private stamp = '';
  private loaded: ClientTls = { ok: false, problem: 'not read yet' };

  constructor(
    private readonly paths: TlsPaths,
    private readonly now: () => number = Date.now,
  ) {}

  current(): ClientTls {
    const stamp = this.stampOfFiles();
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      this.loaded = this.read();
    }
    if (this.loaded.ok && this.now() > this.loaded.notAfter.getTime()) {
      return { ok: false, problem: `the hub certificate ${this.paths.certPath} expired on ${this.loaded.notAfter.toISOString()}; run lookout certs again` };
    }
    return this.loaded;
  }

  /** Identity of the three files as they are now (device, inode, size, change time), or what is missing. */
  private stampOfFiles(): string {
    return [this.paths.certPath, this.paths.keyPath, this.paths.caPath]
      .map((p) => {
        try {
          const s = statSync(p);
          return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
        } catch {
          return 'missing';
        }
      })
      .join('|');
  }

  private read(): ClientTls {
    const { certPath, keyPath, caPath } = this.paths;
    const files: Partial<Record<'cert' | 'key' | 'ca', Buffer>> = {};
    for (const [name, path] of [
      ['cert', certPath],
      ['key', keyPath],
      ['ca', caPath],
    ] as const) {
      try {
        files[name] = readFileSync(path);
      } catch (err) {
        const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'is missing' : `cannot be read: ${(err as Error).message}`;
        return { ok: false, problem: `${path} ${why}; provision the hub with lookout certs --ca-dir <fleet CA dir> --hub-data <hub data dir>` };
      }
    }
    const { cert, key, ca } = files as Record<'cert' | 'key' | 'ca', Buffer>;
    const check = checkIssuedBy(cert, ca, new Date(this.now()));
    if (!check.ok) return { ok: false, problem: `${certPath}: ${check.reason}` };
    if (!keyMatchesCertificate(cert, key)) return { ok: false, problem: `${keyPath} is not the key of ${certPath}` };
    return { ok: true, cert, key, ca, fingerprint: check.fingerprint, notAfter: check.notAfter };
  }
}
