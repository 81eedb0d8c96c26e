import { parseArgs } from 'node:util';
import { LookoutError } from '../../core/src/errors/lookout-error.js';
import { dropGoneFromManifest } from '../../plugins/recorder/src/manifest-file.js';
import { pruneRecordings } from '../../plugins/recorder/src/prune.js';
import { recordingsRoot } from '../../core/src/paths/recordings-root.js';
import type { OperatorCommand } from './lookout-cli.js';

/**
 * `lookout prune-recordings`: spec 02's prune script on a device data root: it keeps exactly KEEP_CHUNKS,
 * the first step of the recorder's prune at CRITICAL storage (plugins/recorder/src/prune.ts), never the
 * recorder's cautious removals below KEEP_CHUNKS. KEEP_CHUNKS and DRY_RUN=1 from the environment work
 * as the script's did; the flags win over them.
 */
export const pruneRecordingsCommand: OperatorCommand = {
  summary: 'prune recording chunks: keep the KEEP_CHUNKS (30) newest, unjustified ones go first; --dry-run (or DRY_RUN=1) only reports',
  usage: 'lookout prune-recordings --data-dir <dir> [--recordings-dir <dir>] [--keep N] [--dry-run] [--json]',
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        'data-dir': { type: 'string', default: '/' },
        'recordings-dir': { type: 'string' },
        keep: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const keepText = values.keep ?? process.env.KEEP_CHUNKS ?? '30';
    const keep = Number(keepText);
    if (!/^\d+$/.test(keepText) || keep < 1) {
      throw new LookoutError('config_invalid', `--keep (or KEEP_CHUNKS) must be a whole number of at least 1, not "${keepText}"`, { details: { usage: true } });
    }
    const dryRun = values['dry-run'] || process.env.DRY_RUN === '1';
    const dir = recordingsRoot(values['data-dir'], values['recordings-dir'] ?? process.env.RECORDINGS_DIR);
    const report = await pruneRecordings(dir, { keep, dryRun });
    const manifestDropped = dryRun ? 0 : await dropGoneFromManifest(dir);
    if (values.json) {
      console.log(JSON.stringify({ ...report, manifest_lines_dropped: manifestDropped }));
      return 0;
    }
    const verb = dryRun ? 'would remove' : 'removed';
    console.log(
      `${dir}: ${verb} ${report.removed.length} of ${report.total_chunks} chunks (${(report.freed_bytes / 1e6).toFixed(1)} MB), keeping ${report.kept_chunks}${dryRun ? ' (dry run: nothing changed)' : ''}`,
    );
    for (const r of report.removed) console.log(`  ${verb} ${r.name}${r.justified ? ' (justified)' : ''}`);
    return 0;
  },
};
