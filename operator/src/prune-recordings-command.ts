import { LookoutError, recordingsRoot } from 'lookout/core';
import { localChunkStore, pruneStore, type ManualPruneReport } from 'lookout/plugins/recorder';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { sftpChunkStore } from './remote/remote-prune.js';

/**
 * `lookout prune-recordings`: spec 02's prune script on a device data root: it keeps exactly KEEP_CHUNKS,
 * the first step of the recorder's prune at CRITICAL storage (plugins/recorder/src/prune.ts), never the
 * recorder's cautious removals below KEEP_CHUNKS. KEEP_CHUNKS and DRY_RUN=1 from the environment work
 * as the script's did; the flags win over them.
 */
export const pruneRecordingsCommand = defineCommand({
  summary: 'prune recording chunks: keep the KEEP_CHUNKS (30) newest, unjustified ones go first; --dry-run (or DRY_RUN=1) only reports',
  usage: 'lookout prune-recordings [<device>] [--data-dir <dir>] [--recordings-dir <dir>] [--keep N] [--dry-run] [--json]',
  synopsis: 'lookout prune-recordings [<device>] [--keep N] [--dry-run] [--recordings-dir <dir>] [--json]',
  about: `Spec 02's prune script: keeps exactly KEEP_CHUNKS (default 30) recording chunks, the oldest
unjustified ones going first and justified ones last; a chunk goes with its sidecar and detection
log, and the manifest loses its line. With <device>, over SSH (SFTP) on the device; without, under a
local data root (--data-dir, default /). --dry-run (or DRY_RUN=1) only reports.

Options:
  --keep <n>                 chunks to keep (default KEEP_CHUNKS, else 30)
  --dry-run                  report what would go; remove nothing (also DRY_RUN=1)
  --recordings-dir <dir>     the recordings folder (default <root>/data/recordings, or RECORDINGS_DIR)
  --data-dir <dir>           local mode: the data root`,
  examples: [
    `DEVICE_PASSWORD=… KEEP_CHUNKS=30 lookout prune-recordings cam-1 --registry hub/registry.json`,
    `DRY_RUN=1 lookout prune-recordings root@10.0.0.21 --json`,
    `lookout prune-recordings --data-dir ./dev-device --keep 5`,
  ],
  exits: SSH_EXITS,
  ssh: true,
  options: {
    'data-dir': { type: 'string', default: '/' },
    'recordings-dir': { type: 'string' },
    keep: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
  async run({ values, positionals, connect }) {
    if (positionals.length > 1) throw new LookoutError('config_invalid', 'prune-recordings takes at most one device', { details: { usage: true } });
    const keepText = values.keep ?? process.env.KEEP_CHUNKS ?? '30';
    const keep = Number(keepText);
    if (!/^\d+$/.test(keepText) || keep < 1) {
      throw new LookoutError('config_invalid', `--keep (or KEEP_CHUNKS) must be a whole number of at least 1, not "${keepText}"`, { details: { usage: true } });
    }
    const dryRun = values['dry-run'] || process.env.DRY_RUN === '1';
    let report: ManualPruneReport;
    let dir: string;
    const device = positionals[0];
    if (device) {
      const session = await connect(device);
      try {
        dir = session.path(values['recordings-dir'] ?? process.env.RECORDINGS_DIR ?? '/data/recordings');
        report = await pruneStore(sftpChunkStore(session), dir, { keep, dryRun });
      } finally {
        session.close();
      }
    } else {
      dir = recordingsRoot(values['data-dir'], values['recordings-dir'] ?? process.env.RECORDINGS_DIR);
      report = await pruneStore(localChunkStore, dir, { keep, dryRun });
    }
    if (values.json) {
      console.log(JSON.stringify(report));
      return 0;
    }
    const verb = dryRun ? 'would remove' : 'removed';
    console.log(
      `${dir}: ${verb} ${report.removed.length} of ${report.total_chunks} chunks (${(report.freed_bytes / 1e6).toFixed(1)} MB), keeping ${report.kept_chunks}${dryRun ? ' (dry run: nothing changed)' : ''}`,
    );
    for (const r of report.removed) console.log(`  ${verb} ${r.name}${r.justified ? ' (justified)' : ''}`);
    return 0;
  },
});
