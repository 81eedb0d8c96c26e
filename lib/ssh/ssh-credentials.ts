import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { LookoutError } from 'lookout/core';

/**
 * ssh2, loaded on first use: lookout/core exports the SSH code, and a device process that never
 * opens SSH should not load the library (as with the lazily loaded certificate code).
 */
export function loadSsh2(): typeof import('ssh2') {
  ssh2Module ??= createRequire(import.meta.url)('ssh2') as typeof import('ssh2');
  return ssh2Module;
}
let ssh2Module: typeof import('ssh2') | undefined;

/** What authenticates the hub to devices: the device password, a private key, or both. */
export interface SshCredentialSource {
  password?: string;
  privateKey?: Buffer;
  passphrase?: string;
}

/**
 * The hub's SSH credentials, held in private fields: they are handed to ssh2 and nowhere else, and
 * a log line, JSON answer or inspection of this object shows only which kinds are set.
 */
export class SshCredentials {
  readonly #password: string | undefined;
  readonly #privateKey: Buffer | undefined;
  readonly #passphrase: string | undefined;

  constructor(source: SshCredentialSource) {
    this.#password = source.password || undefined;
    this.#privateKey = source.privateKey && source.privateKey.length > 0 ? source.privateKey : undefined;
    this.#passphrase = source.passphrase || undefined;
  }

  /** Reads the key file (LOOKOUT_SSH_KEY_FILE) and checks that ssh2 can use it; its content never appears in an error. */
  static load(options: { password?: string; keyFile?: string; passphrase?: string }): SshCredentials {
    let privateKey: Buffer | undefined;
    if (options.keyFile) {
      try {
        privateKey = readFileSync(options.keyFile);
      } catch (err) {
        throw new LookoutError('config_invalid', `LOOKOUT_SSH_KEY_FILE ${options.keyFile} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, {
          details: { key: 'LOOKOUT_SSH_KEY_FILE', file: options.keyFile },
        });
      }
      const parsed = loadSsh2().utils.parseKey(privateKey, options.passphrase);
      if (parsed instanceof Error || (Array.isArray(parsed) ? parsed.length === 0 : !parsed)) {
        const why =
          parsed instanceof Error && /passphrase|encrypted/i.test(parsed.message)
            ? 'is encrypted: set LOOKOUT_SSH_KEY_PASSPHRASE'
            : 'is not a private key ssh2 reads';
        throw new LookoutError('config_invalid', `LOOKOUT_SSH_KEY_FILE ${options.keyFile} ${why}`, {
          details: { key: 'LOOKOUT_SSH_KEY_FILE', file: options.keyFile },
        });
      }
    }
    return new SshCredentials({ password: options.password, privateKey, passphrase: options.passphrase });
  }

  get configured(): boolean {
    return this.#password !== undefined || this.#privateKey !== undefined;
  }

  /** Which kinds are set (for status and logs). */
  get kinds(): ('password' | 'key')[] {
    return [...(this.#password !== undefined ? (['password'] as const) : []), ...(this.#privateKey !== undefined ? (['key'] as const) : [])];
  }

  /** The ssh2 connect options carrying them. */
  connectOptions(): { password?: string; privateKey?: Buffer; passphrase?: string; tryKeyboard: boolean } {
    return {
      ...(this.#privateKey !== undefined ? { privateKey: this.#privateKey } : {}),
      ...(this.#passphrase !== undefined && this.#privateKey !== undefined ? { passphrase: this.#passphrase } : {}),
      ...(this.#password !== undefined ? { password: this.#password } : {}),
      // Devices whose sshd authenticates passwords through PAM ask with keyboard-interactive.
      tryKeyboard: this.#password !== undefined,
    };
  }

  /** Answers keyboard-interactive prompts with the password (one answer per prompt). */
  keyboardAnswers(prompts: readonly unknown[]): string[] {
    return prompts.map(() => this.#password ?? '');
  }

  toJSON(): { kinds: string[] } {
    return { kinds: this.kinds };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `SshCredentials(${this.kinds.join(', ') || 'none'})`;
  }
}
