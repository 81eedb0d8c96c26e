import { redactSecrets } from 'lookout/core';
import { HUB_BUS_USER, busPassword, deviceBusCredentials, deviceToolToken, fleetA2aKey, fleetMeshKey, signedUrlKey } from 'lookout/lib/auth';

export const REDACTED = '[redacted]';
/** Shorter values are not looked for in text: they would match by chance (and say little). */
const MIN_SECRET_LENGTH = 6;
/** Environment names whose values are secrets (their files' paths are not). */
const SECRET_NAME = /(SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|CREDENTIAL|AUTH|_KEY$|^KEY$|HMAC)/i;
const PATH_NAME = /(_FILE|_PATH|_DIR)$/;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !PATH_NAME.test(name);
}

/**
 * Removes secrets by value from text the hub did not write itself (a device's log line, a ring
 * event's free text) as well as by key name from objects: the fleet secret, everything derived from
 * it for the registered devices (bus passwords, tool tokens, mesh and A2A keys, the URL key), and
 * the values of the secret-named settings the hub runs with. Key-name redaction alone would let a
 * password a device printed into its log through.
 */
export class SecretScrubber {
  private values: string[] = [];

  constructor(
    private readonly source: {
      fleetSecret: string | undefined;
      /** Values of the hub's secret settings (DEVICE_PASSWORD, tokens). */
      settings: () => (string | undefined)[];
      deviceIds: () => string[];
    },
  ) {}

  /** Collects the values now (devices come and go). */
  refresh(): this {
    const found = new Set<string>();
    const add = (v: string | undefined) => {
      if (typeof v === 'string' && v.length >= MIN_SECRET_LENGTH) found.add(v);
    };
    for (const v of this.source.settings()) add(v);
    const secret = this.source.fleetSecret;
    if (secret) {
      add(secret);
      add(fleetMeshKey(secret));
      add(fleetA2aKey(secret));
      add(signedUrlKey(secret));
      add(busPassword(secret, HUB_BUS_USER));
      for (const id of this.source.deviceIds()) {
        add(deviceBusCredentials(secret, id).password);
        add(deviceToolToken(secret, id));
      }
    }
    // Longest first: a secret containing another is removed whole.
    this.values = [...found].sort((a, b) => b.length - a.length);
    return this;
  }

  text(value: string): string {
    let out = value;
    for (const s of this.values) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /** A deep copy with secret-named keys and PEM keys replaced, then every known secret value. */
  value<T>(value: T): T {
    return JSON.parse(this.text(JSON.stringify(redactSecrets(value)) ?? 'null')) as T;
  }

  /** The environment with every secret-named value replaced. */
  env(env: Record<string, string | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) continue;
      out[k] = isSecretName(k) ? REDACTED : this.text(v);
    }
    return out;
  }
}
