import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LookoutError, writeFileAtomic } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { snapshotOverSsh } from './visual/device-snapshot.js';
import { compareImages, decodeRgba, encodePng } from './visual/image-diff.js';

const USAGE = 'lookout visual-gate <device> --baseline <dir> [--threshold 0.1] [--max-diff 0.02] [--update] [--root <dir>] [--json]';

const ABOUT = `The snapshot regression gate (spec 02's visual_soak_gate): takes a snapshot of the device over SSH
(the last picture of its newest complete recording chunk) and compares it with the baseline
<dir>/<device>.png (or .jpg) with pixelmatch: pixels whose perceptual colour distance is below
--threshold count as equal, and the gate passes when at most --max-diff of the pixels differ. The
snapshot (<device>.current.jpg) and the diff image (<device>.diff.png, differing pixels in red) are
written beside the baseline. A failed gate exits 7. With --update the snapshot becomes the baseline.

Options:
  --baseline <dir>           the folder of baselines
  --threshold <t>            pixelmatch's matching threshold, 0 to 1 (default 0.1)
  --max-diff <ratio>         the largest share of differing pixels that passes (default 0.02)
  --width <px>               snapshot width (default 640; the comparison is at the baseline's size)
  --recordings-dir <path>    the recordings on the device (default /data/recordings)
  --update                   write the snapshot as the baseline (the first run, or an accepted change)
  --json                     the verdict and figures as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout visual-gate cam-1 --baseline baselines/ --update`,
  `DEVICE_PASSWORD=… lookout visual-gate cam-1 --baseline baselines/ --max-diff 0.05 --json`,
];

function ratio(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new LookoutError('config_invalid', `${flag}: a number from 0 to 1, not "${text}"`, { details: { usage: true } });
  return n;
}

export const visualGateCommand = defineCommand({
  summary: 'snapshot regression gate: a snapshot over SSH against a baseline with pixelmatch, the diff image written beside',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed],
  ssh: true,
  options: {
    baseline: { type: 'string' },
    threshold: { type: 'string', default: '0.1' },
    'max-diff': { type: 'string', default: '0.02' },
    width: { type: 'string', default: '640' },
    'recordings-dir': { type: 'string', default: '/data/recordings' },
    update: { type: 'boolean', default: false },
  },
  async run({ values, positionals, connect }) {
    const [device] = positionals;
    if (!device || positionals.length > 1 || !values.baseline)
      throw new LookoutError('config_invalid', `visual-gate needs a device and --baseline: ${USAGE}`, { details: { usage: true } });
    const threshold = ratio(values.threshold, '--threshold');
    const maxDiff = ratio(values['max-diff'], '--max-diff');
    const width = Number(values.width);
    if (!Number.isInteger(width) || width < 16 || width > 4096)
      throw new LookoutError('config_invalid', `--width: 16 to 4096 pixels, not "${values.width}"`, { details: { usage: true } });
    const dir = resolve(values.baseline);

    const session = await connect(device);
    let snapshot: Awaited<ReturnType<typeof snapshotOverSsh>>;
    try {
      snapshot = await snapshotOverSsh(session, session.path(values['recordings-dir']), width);
    } finally {
      session.close();
    }
    const name = session.deviceId.replace(/[^A-Za-z0-9._-]/g, '_');
    await mkdir(dir, { recursive: true });
    const currentPath = join(dir, `${name}.current.jpg`);
    await writeFile(currentPath, snapshot.jpeg);
    const baselinePath = [join(dir, `${name}.png`), join(dir, `${name}.jpg`)].find((p) => existsSync(p));

    if (values.update) {
      const target = join(dir, `${name}.png`);
      await writeFileAtomic(target, await encodePng(await decodeRgba(snapshot.jpeg)));
      const result = { device: session.deviceId, updated: target, chunk: snapshot.chunk };
      console.log(values.json ? JSON.stringify(result) : `${session.deviceId}: baseline ${target} from ${snapshot.chunk}`);
      return 0;
    }
    if (!baselinePath) {
      throw new LookoutError('config_invalid', `no baseline ${join(dir, `${name}.png`)} (or .jpg): take one with --update`, { details: { baseline: dir } });
    }
    const baseline = await decodeRgba(await readFile(baselinePath));
    const current = await decodeRgba(snapshot.jpeg, { width: baseline.width, height: baseline.height });
    const comparison = compareImages(baseline, current, threshold);
    const diffPath = join(dir, `${name}.diff.png`);
    await writeFile(diffPath, await encodePng(comparison.diff));
    const passed = comparison.mismatched_ratio <= maxDiff;
    const result = {
      device: session.deviceId,
      passed,
      chunk: snapshot.chunk,
      baseline: baselinePath,
      current: currentPath,
      diff: diffPath,
      width: comparison.width,
      height: comparison.height,
      mismatched_pixels: comparison.mismatched_pixels,
      mismatched_ratio: Number(comparison.mismatched_ratio.toFixed(5)),
      max_diff: maxDiff,
      threshold,
    };
    if (values.json) console.log(JSON.stringify(result));
    else
      console.log(
        `${session.deviceId}: ${(result.mismatched_ratio * 100).toFixed(2)}% of the pixels differ (at most ${(maxDiff * 100).toFixed(2)}%): ${passed ? 'passed' : 'FAILED'}; diff ${diffPath}`,
      );
    if (!passed) {
      throw new LookoutError(
        'soak_gate_failed',
        `${session.deviceId}: the snapshot differs from ${baselinePath} in ${(result.mismatched_ratio * 100).toFixed(2)}% of its pixels (at most ${(maxDiff * 100).toFixed(2)}%); see ${diffPath}`,
        {
          details: result,
        },
      );
    }
    return 0;
  },
});
