import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { sameSecret } from 'lookout/lib/auth';
import { writeFileAtomic } from 'lookout/core';

/** The key a server presented: its type and the SSH wire blob (what known-hosts files hold in base64). */
export interface HostKey {
  type: string;
  blob: Buffer;
}

export type HostKeyVerdict =
  /** A pinned key of this host matches. */
  | { status: 'pinned' }
  /** No key is pinned for this host. */
  | { status: 'unknown' }
  /** Keys are pinned for this host and none is this one (or this one is revoked). */
  | { status: 'changed'; pinnedTypes: string[] };

interface Entry {
  patterns: string[];
  /** `|1|salt|hash` names (HashKnownHosts): HMAC-SHA1 of the name under the salt. */
  hashed?: { salt: Buffer; hash: Buffer };
  type: string;
  key: string;
  revoked: boolean;
}

/** Reads the key type from an SSH public key blob (a length-prefixed string first). */
export function hostKeyOf(blob: Buffer): HostKey {
  const length = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  const type = length > 0 && length <= 64 && blob.length >= 4 + length ? blob.subarray(4, 4 + length).toString('latin1') : 'unknown';
  return { type, blob };
}

/** OpenSSH's fingerprint: `SHA256:` and unpadded base64 (what `ssh-keygen -lf` prints). */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** How OpenSSH names a host in known_hosts: `host` on port 22, `[host]:port` elsewhere. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** One known-hosts line for a key, as `ssh-keyscan` writes it. */
export function knownHostsLine(host: string, port: number, key: HostKey): string {
  return `${knownHostsName(host, port)} ${key.type} ${key.blob.toString('base64')}`;
}

/**
 * The hub's pinned SSH host keys: an OpenSSH-like known_hosts file (`[host]:port type base64`, plain
 * or hashed names, `*`/`?` patterns and `!` negation, `@revoked` lines; `@cert-authority` lines are
 * ignored). The file is read again when it changes on disk, so an operator's edit counts at the next
 * connection. Keys are compared in constant time.
 */
export class KnownHosts {
  private entries: Entry[] = [];
  private stamp = '';
  private writing: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** Whether the key is pinned for host:port, unknown there, or other than the pinned one. */
  check(host: string, port: number, key: HostKey): HostKeyVerdict {
    this.reload();
    const encoded = key.blob.toString('base64');
    const names = [knownHostsName(host, port)];
    const revoked = this.entries.some((e) => e.revoked && sameSecret(encoded, e.key));
    const mine = this.entries.filter((e) => !e.revoked && matches(e, names));
    if (!revoked && mine.some((e) => e.type === key.type && sameSecret(encoded, e.key))) return { status: 'pinned' };
    if (mine.length === 0 && !revoked) return { status: 'unknown' };
    return { status: 'changed', pinnedTypes: [...new Set(mine.map((e) => e.type))] };
  }

  /** Key types pinned for host:port, so the connection asks the server for one of those first. */
  pinnedTypes(host: string, port: number): string[] {
    this.reload();
    const names = [knownHostsName(host, port)];
    return [...new Set(this.entries.filter((e) => !e.revoked && matches(e, names)).map((e) => e.type))];
  }

  /**
   * Records a key for host:port (trust on first use), written atomically; writes are serialised, and
   * a key pinned meanwhile (by another connection or the operator) is not written twice. Resolves
   * with the verdict after the write: `changed` when another key got pinned for the host first.
   */
  pin(host: string, port: number, key: HostKey): Promise<HostKeyVerdict> {
    const run = this.writing.then(async () => {
      this.stamp = '';
      const verdict = this.check(host, port, key);
      if (verdict.status !== 'unknown') return verdict;
      let text = '';
      try {
        text = readFileSync(this.path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      if (text.length > 0 && !text.endsWith('\n')) text += '\n';
      await writeFileAtomic(this.path, `${text}${knownHostsLine(host, port, key)}\n`, 0o644);
      this.stamp = '';
      return this.check(host, port, key);
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  private reload(): void {
    let stamp: string;
    try {
      const s = statSync(this.path);
      stamp = `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      stamp = 'absent';
    }
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      // Absent (or unreadable): nothing is pinned, so every key is unknown and refused.
    }
    this.entries = parseKnownHosts(text);
  }
}

/** The entries of a known-hosts text; malformed lines are skipped (as OpenSSH does). */
export function parseKnownHosts(text: string): Entry[] {
  const entries: Entry[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    let revoked = false;
    if (fields[0].startsWith('@')) {
      if (fields[0] !== '@revoked') continue;
      revoked = true;
      fields.shift();
    }
    if (fields.length < 3 || !/^[A-Za-z0-9+/]+=*$/.test(fields[2])) continue;
    const [hosts, type, key] = fields;
    const hashed = /^\|1\|([^|]+)\|([^|]+)$/.exec(hosts);
    if (hashed) {
      entries.push({ patterns: [], hashed: { salt: Buffer.from(hashed[1], 'base64'), hash: Buffer.from(hashed[2], 'base64') }, type, key, revoked });
    } else {
      entries.push({ patterns: hosts.split(','), type, key, revoked });
    }
  }
  return entries;
}

function matches(entry: Entry, names: string[]): boolean {
  if (entry.hashed) {
    const { salt, hash } = entry.hashed;
    return names.some((n) => {
      const mac = createHmac('sha1', salt).update(n).digest();
      return mac.length === hash.length && timingSafeEqual(mac, hash);
    });
  }
  let matched = false;
  for (const pattern of entry.patterns) {
    const negated = pattern.startsWith('!');
    const glob = negated ? pattern.slice(1) : pattern;
    if (!names.some((n) => globMatch(glob, n))) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

function globMatch(glob: string, name: string): boolean {
  if (!/[*?]/.test(glob)) return glob.toLowerCase() === name.toLowerCase();
  const re = new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  );
  return re.test(name);
}
