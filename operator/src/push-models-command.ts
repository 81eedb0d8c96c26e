import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { LookoutError, DEVICE_PATHS } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { commandTimeoutMs } from './remote/device-target.js';
import { progressFor } from './remote/progress.js';
import { uploadResumable, type UploadReport } from './remote/resumable-upload.js';

const MODEL_EXTENSIONS = new Set(['.dlc', '.onnx', '.tar']);
const USAGE = 'lookout push-models <device> [files…] [--from <dir>] [--bandwidth <KB/s>] [--root <dir>] [--json]';

const ABOUT = `Copies model files (.dlc, .onnx, .tar) to /data/models on a device over SFTP (spec 02's push script).
Each file goes to .<name>.partial first: an interrupted copy continues where it stopped when the
command runs again; the free space is checked before a byte is sent (refused with the figures);
the SHA-256 is checked on the device; then the file is renamed into place in one step, so the
runtime never loads a half-copied model. A progress bar shows on a terminal.

Options:
  [files…]                 model files; none: every .dlc, .onnx and .tar in --from
  --from <dir>             where the models are when no files are named (default ./models)
  --bandwidth <KB/s>       at most this many kilobytes per second (like scp -l, in KB)
  --json                   one JSON line per file, then a summary line`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout push-models cam-1 build/rfdetr_640.dlc --registry hub/registry.json`,
  `LOOKOUT_SSH_KEY_FILE=~/.ssh/fleet lookout push-models root@10.0.0.21 --from out/models --json`,
];

/** `lookout push-models`: model files to a device's /data/models, resumable, checked, renamed into place. */
export const pushModelsCommand = defineCommand({
  summary: 'copy .dlc/.onnx/.tar models to a device /data/models over SFTP: free-space check, resume, SHA-256 on the device, atomic rename',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed],
  ssh: true,
  options: { from: { type: 'string', default: 'models' }, bandwidth: { type: 'string' } },
  async run({ values, positionals, connect }) {
    const [device, ...named] = positionals;
    if (!device) throw new LookoutError('config_invalid', `push-models needs a device: ${USAGE}`, { details: { usage: true } });
    let bandwidth: number | undefined;
    if (values.bandwidth !== undefined) {
      if (!/^\d+$/.test(values.bandwidth) || Number(values.bandwidth) < 1) {
        throw new LookoutError('config_invalid', `--bandwidth: kilobytes per second, a whole number of at least 1, not "${values.bandwidth}"`, {
          details: { usage: true },
        });
      }
      bandwidth = Number(values.bandwidth) * 1000;
    }
    const files = named.length > 0 ? named.map((f) => resolve(f)) : await modelsIn(values.from);
    for (const f of files) {
      if (!MODEL_EXTENSIONS.has(extname(f).toLowerCase())) {
        throw new LookoutError('config_invalid', `${f}: push-models copies .dlc, .onnx and .tar files`, { details: { usage: true, file: f } });
      }
    }
    if (files.length === 0) throw new LookoutError('config_invalid', `no .dlc, .onnx or .tar files in ${resolve(values.from)}`, { details: { usage: true } });

    const session = await connect(device);
    const reports: UploadReport[] = [];
    try {
      const dest = session.path(DEVICE_PATHS.models);
      for (const file of files) {
        const report = await uploadResumable(session, file, `${dest}/${basename(file)}`, {
          progress: progressFor(values.json),
          bandwidthBytesPerSecond: bandwidth,
          // sha256sum reads at a few hundred MB/s at worst on a device; a slow card gets the command timeout on top.
          checksumTimeoutMs: commandTimeoutMs(values) + 60_000,
        });
        reports.push(report);
        if (values.json) console.log(JSON.stringify({ event: 'copied', ...report }));
        else
          console.log(
            `${session.deviceId}: ${basename(file)} → ${report.remote} (${(report.bytes / 1e6).toFixed(1)} MB${report.resumed_from > 0 ? `, resumed at ${(report.resumed_from / 1e6).toFixed(1)} MB` : ''}, sha256 ${report.sha256.slice(0, 12)}… checked on the device)`,
          );
      }
    } finally {
      session.close();
    }
    const bytes = reports.reduce((sum, r) => sum + r.bytes, 0);
    if (values.json) console.log(JSON.stringify({ event: 'done', device: session.deviceId, files: reports.length, bytes }));
    return 0;
  },
});

async function modelsIn(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new LookoutError('config_invalid', `--from ${dir} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      details: { usage: true },
    });
  }
  return names
    .filter((n) => MODEL_EXTENSIONS.has(extname(n).toLowerCase()))
    .sort()
    .map((n) => join(resolve(dir), n));
}
