import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LookoutError, packageRoot } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { DEFAULT_SERVICE_COMMAND } from './apply-layer-command.js';
import { commandTimeoutMs } from './remote/device-target.js';
import { shellQuote, type DeviceSession } from './remote/device-session.js';
import { waitSeconds, watchHello, type HelloWatch } from './remote/hello-wait.js';
import { progressFor } from './remote/progress.js';
import { uploadResumable } from './remote/resumable-upload.js';

const run = promisify(execFile);
const USAGE = 'lookout deploy <device> [--bundle <file.tar.gz>] [--service-command <cmd>] [--mqtt <url>] [--root <dir>] [--json]';
const BASE = '/opt/lookout';

const ABOUT = `Deploys the device runtime: builds a release bundle (npm run bundle) unless --bundle names one,
copies it over SFTP (resumable, SHA-256 checked on the device), unpacks it into
/opt/lookout/releases/<version>, switches /opt/lookout/current to it in one step (a symlink renamed
over the old one), restarts the service (the repo's deploy/lookout-edge.service; the command is
configurable) and waits for the device's hello with the new version. When the device does not come
back, /opt/lookout/current goes back to the previous release, the service restarts again, and the
command exits 8 once the old version says hello.

Options:
  --bundle <file>            a bundle from npm run bundle (default: build one now, for --arch)
  --arch <arch>              the device's architecture when building (default this machine's)
  --service-command <cmd>    restarts the runtime on the device (default "${DEFAULT_SERVICE_COMMAND}")
  --keep <n>                 releases kept on the device, the active and previous included (default 3)
  --json                     the result as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout deploy cam-1 --registry hub/registry.json --mqtt mqtt://10.0.0.2:1883`,
  `LOOKOUT_SSH_KEY_FILE=~/.ssh/fleet lookout deploy 10.0.0.21 --device-id cam-1 --bundle dist-bundle/lookout-edge-0.2.0-linux-arm64.tar.gz --arch arm64`,
];

interface BundleManifest {
  version: string;
  arch: string;
}

/** The manifest a bundle carries (BUNDLE.json), read without unpacking the rest. */
async function readManifest(bundle: string): Promise<BundleManifest> {
  try {
    const { stdout } = await run('tar', ['-xzOf', bundle, './BUNDLE.json'], { maxBuffer: 1024 * 1024 });
    const manifest = JSON.parse(stdout) as Partial<BundleManifest>;
    if (typeof manifest.version !== 'string' || !/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(manifest.version))
      throw new Error('BUNDLE.json names no valid version');
    return { version: manifest.version, arch: String(manifest.arch) };
  } catch (err) {
    throw new LookoutError('bundle_invalid', `${bundle} is not a release bundle of npm run bundle: ${(err as Error).message.split('\n')[0]}`, {
      details: { bundle },
    });
  }
}

async function buildBundle(arch: string | undefined, dir: string): Promise<string> {
  const out = join(dir, 'lookout-edge.tar.gz');
  try {
    await run(process.execPath, [join(packageRoot(), 'scripts', 'bundle.mjs'), '--out', out, ...(arch ? ['--arch', arch] : [])], {
      maxBuffer: 4 * 1024 * 1024,
    });
  } catch (err) {
    throw new LookoutError('bundle_invalid', `npm run bundle failed: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
  return out;
}

/** Points `current` at a release in one step: a new relative symlink renamed over the old one. */
async function switchCurrent(session: DeviceSession, version: string): Promise<void> {
  const base = session.path(BASE);
  await session.run(
    `cd ${shellQuote(base)} && ln -sfn ${shellQuote(`releases/${version}`)} current.next && mv -T current.next current`,
    `switching ${base}/current to ${version}`,
  );
}

async function currentRelease(session: DeviceSession): Promise<string | undefined> {
  const result = await session.exec(`readlink ${shellQuote(session.path(`${BASE}/current`))}`);
  const target = result.code === 0 ? result.stdout.trim() : '';
  return /^releases\/([^/]+)$/.exec(target)?.[1];
}

export const deployCommand = defineCommand({
  summary: 'deploy a release bundle of lookout-edge to a device: unpack, switch current atomically, restart, wait for the hello, roll back on failure',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed, EXIT.rolledBack],
  ssh: true,
  bus: true,
  options: {
    bundle: { type: 'string' },
    arch: { type: 'string' },
    'service-command': { type: 'string', default: DEFAULT_SERVICE_COMMAND },
    keep: { type: 'string', default: '3' },
  },
  async run({ values, positionals, connect }) {
    const [device] = positionals;
    if (!device || positionals.length > 1) throw new LookoutError('config_invalid', `deploy takes one device: ${USAGE}`, { details: { usage: true } });
    const keep = Number(values.keep);
    if (!Number.isInteger(keep) || keep < 2)
      throw new LookoutError('config_invalid', `--keep: at least 2 (the active release and the previous), not "${values.keep}"`, { details: { usage: true } });
    const waitMs = waitSeconds(values) * 1000;
    const scratch = await mkdtemp(join(tmpdir(), 'lookout-deploy-'));
    let session: DeviceSession | undefined;
    let watch: HelloWatch | undefined;
    try {
      const bundle = values.bundle ?? (await buildBundle(values.arch, scratch));
      const manifest = await readManifest(bundle);
      const { version } = manifest;
      if (!values.mqtt && !process.env.LOOKOUT_MQTT_URL) {
        throw new LookoutError('config_invalid', 'deploy waits for the hello of the new version: --mqtt <url> (or LOOKOUT_MQTT_URL)', {
          details: { usage: true },
        });
      }
      session = await connect(device);
      const releases = session.path(`${BASE}/releases`);
      const previous = await currentRelease(session);

      const incoming = `${releases}/.incoming/${version}.tar.gz`;
      await uploadResumable(session, bundle, incoming, { progress: progressFor(values.json), checksumTimeoutMs: commandTimeoutMs(values) + 60_000 });
      const target = `${releases}/${version}`;
      const staging = `${target}.unpacking`;
      const unpack = session.run(
        [
          `rm -rf ${shellQuote(staging)}`,
          `mkdir -p ${shellQuote(staging)}`,
          `tar -xzf ${shellQuote(incoming)} -C ${shellQuote(staging)}`,
          `test -f ${shellQuote(`${staging}/bin/lookout-edge.js`)}`,
          // The release being replaced may be the active one (a redeploy): current points at it by name and follows.
          `rm -rf ${shellQuote(`${target}.old`)}`,
          `if [ -e ${shellQuote(target)} ]; then mv ${shellQuote(target)} ${shellQuote(`${target}.old`)}; fi`,
          `mv ${shellQuote(staging)} ${shellQuote(target)}`,
          `rm -rf ${shellQuote(`${target}.old`)} ${shellQuote(incoming)}`,
        ].join(' && '),
        `unpacking ${version} into ${target}`,
        commandTimeoutMs(values) + 120_000,
      );
      try {
        await unpack;
      } catch (err) {
        // A half-unpacked release is removed, so that it holds no space and is never switched to.
        await session.exec(`rm -rf ${shellQuote(staging)} ${shellQuote(incoming)}`).catch(() => undefined);
        throw await session.explainFull(err, releases);
      }
      // Subscribed before the restart, so the new version's hello cannot be missed.
      watch = await watchHello(session.deviceId, values);
      await switchCurrent(session, version);

      const restartAndWait = async (want: string): Promise<string> => {
        const since = Date.now();
        await session!.run(values['service-command'], `restarting the service (${values['service-command']})`);
        const hello = await watch!.next(since, (h) => h.versions.runtime === want, waitMs, `runtime ${want}`);
        return hello.timestamp;
      };
      let helloAt: string;
      try {
        helloAt = await restartAndWait(version);
      } catch (err) {
        if (!previous || previous === version) throw err;
        const why = (err as Error).message;
        await switchCurrent(session, previous);
        let back: string;
        try {
          back = `${previous} is back (hello at ${await restartAndWait(previous)})`;
        } catch (again) {
          back = `and ${previous} did not come back either: ${(again as Error).message}`;
        }
        throw new LookoutError('deploy_rolled_back', `${session.deviceId}: ${version} did not come up (${why}); rolled back to ${previous}: ${back}`, {
          details: { device_id: session.deviceId, version, previous },
        });
      }

      // Older releases go, the active and the previous stay.
      const listing = await session.exec(`ls -1t ${shellQuote(releases)}`);
      const stale = listing.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('.') && l !== version && l !== previous)
        .slice(Math.max(0, keep - 2));
      if (stale.length > 0) await session.exec(`cd ${shellQuote(releases)} && rm -rf -- ${stale.map(shellQuote).join(' ')}`);

      const result = { device: session.deviceId, version, previous: previous ?? null, release: target, hello_at: helloAt, removed_releases: stale };
      if (values.json) console.log(JSON.stringify(result));
      else console.log(`${session.deviceId}: ${version} is running (hello at ${helloAt}); previous ${previous ?? '(none)'}; ${target}`);
      return 0;
    } finally {
      await watch?.close();
      session?.close();
      await rm(scratch, { recursive: true, force: true });
    }
  },
});
