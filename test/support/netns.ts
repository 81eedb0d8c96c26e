/**
 * Tests that send or receive multicast (WS-Discovery) run inside a network namespace the test makes,
 * so nothing they send can leave the machine: the test file runs itself again under `unshare -n`
 * (root) with only loopback up, multicast on and the 224.0.0.0/4 route on `lo`. The outer run only
 * spawns the inner one and asserts on its test-runner summary.
 *
 *   if (!INSIDE_NETNS) runFileInNetns(import.meta.url, 'WS-Discovery');
 *   else describe(...the body...)
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const MARK = 'LOOKOUT_NETNS_INSIDE';
/** The outer run's namespace (`net:[inode]`), which the inner one must not be in. */
const OUTER = 'LOOKOUT_NETNS_OUTER';

/** True in the inner run (inside the namespace). */
export const INSIDE_NETNS = process.env[MARK] === '1';

/** Loopback only, able to carry multicast: the group's route goes to `lo` and nowhere else. */
export const MULTICAST_LOOPBACK_SETUP = ['set -e', 'ip link set lo up', 'ip link set lo multicast on', 'ip route add 224.0.0.0/4 dev lo'].join('; ');

/** Why a namespace cannot be made here, or null when `unshare -n` works. */
export function netnsUnavailable(): string | null {
  const probe = spawnSync('unshare', ['--net', '--', 'ip', 'link', 'show', 'lo'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `unshare cannot run (${probe.error.message}): install util-linux and iproute2`;
  if (probe.status !== 0) return `unshare --net failed (status ${probe.status}: ${probe.stderr.trim()}): the multicast tests need root (CI runs them as root)`;
  return null;
}

/**
 * Throws unless this process is in another network namespace than the outer run that started it
 * (PID 1's may not be readable in a container): the guard a test body calls before it sends or joins.
 */
export function assertOwnNetns(): void {
  let own: string;
  try {
    own = readlinkSync('/proc/self/ns/net');
  } catch (err) {
    throw new Error(`cannot tell which network namespace this is (${(err as Error).message}): refusing to send multicast`);
  }
  const outer = process.env[OUTER];
  if (!INSIDE_NETNS || !outer || own === outer) throw new Error('not inside a network namespace of the test: refusing to send multicast');
}

/**
 * The outer run: one test that runs `fileUrl` again inside a fresh namespace and passes when every
 * inner test passed (at least one, none skipped). Its failure message carries the inner output.
 */
export function runFileInNetns(fileUrl: string, what: string, options: { setup?: string; env?: Record<string, string>; timeoutMs?: number } = {}): void {
  describe(`${what} (in a network namespace of its own)`, () => {
    it(`passes every check inside \`unshare -n\`${options.setup ? ', as its setup makes it' : ', loopback only, multicast routed to lo'}`, async () => {
      const why = netnsUnavailable();
      assert.equal(why, null, `${what} needs a network namespace so that no multicast leaves the machine: ${why}`);
      const self = fileURLToPath(fileUrl);
      const script = `${options.setup ?? MULTICAST_LOOPBACK_SETUP}; exec "${process.execPath}" --test --test-reporter=spec "${self}"`;
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        // NODE_TEST_CONTEXT would make the inner runner think it is nested in this one and run nothing.
        const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
        const child = spawn('unshare', ['--net', '--', 'sh', '-c', script], {
          env: { ...env, ...options.env, [MARK]: '1', [OUTER]: readlinkSync('/proc/self/ns/net') },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
        child.stdout.on('data', (c: Buffer) => (output += c.toString()));
        child.stderr.on('data', (c: Buffer) => (output += c.toString()));
        child.once('error', reject);
        child.once('exit', (c) => {
          clearTimeout(timer);
          resolve({ code: c, output });
        });
      });
      assert.equal(code, 0, `inside the namespace:\n${output.slice(-8000)}`);
      assert.match(output, /^\S+ pass [1-9]/m, output.slice(-4000));
      assert.match(output, /^\S+ fail 0$/m);
      assert.match(output, /^\S+ skipped 0$/m);
    });
  });
}
