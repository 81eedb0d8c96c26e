import { pbkdf2Sync, randomBytes } from 'node:crypto';

/** mosquitto_passwd's default for `$7$` (PBKDF2-SHA512) hashes in mosquitto 2. */
const ITERATIONS = 101;

/**
 * One line of a mosquitto password_file, `user:$7$<iterations>$<salt>$<hash>`, as mosquitto_passwd
 * writes it (PBKDF2-HMAC-SHA512, 12-byte salt, 64-byte hash, both base64): Node's crypto does the
 * hashing, so the project needs no mosquitto_passwd binary to write the file.
 */
export function mosquittoPasswordLine(username: string, password: string, salt: Buffer = randomBytes(12)): string {
  if (/[:\n\r]/.test(username)) throw new RangeError(`a mosquitto user name cannot contain ':' or a line break: ${JSON.stringify(username)}`);
  const hash = pbkdf2Sync(password, salt, ITERATIONS, 64, 'sha512');
  return `${username}:$7$${ITERATIONS}$${salt.toString('base64')}$${hash.toString('base64')}`;
}
