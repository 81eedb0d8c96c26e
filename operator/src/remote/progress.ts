import cliProgress from 'cli-progress';

/** Progress of one long piece of work: a bar on a terminal, nothing when stdout is a pipe or --json. */
export interface Progress {
  start(total: number, done: number, label: string): void;
  update(done: number): void;
  stop(): void;
}

const silent: Progress = { start() {}, update() {}, stop() {} };

export function progressFor(json: boolean): Progress {
  if (json || !process.stdout.isTTY) return silent;
  const bar = new cliProgress.SingleBar(
    { format: '{label} [{bar}] {percentage}% | {value}/{total} bytes | {speed} MB/s | eta {eta_formatted}', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let startedAt = 0;
  let startDone = 0;
  return {
    start(total, done, label) {
      startedAt = Date.now();
      startDone = done;
      bar.start(total, done, { label, speed: '0.0' });
    },
    update(done) {
      const seconds = (Date.now() - startedAt) / 1000;
      bar.update(done, { speed: seconds > 0 ? ((done - startDone) / 1e6 / seconds).toFixed(1) : '0.0' });
    },
    stop() {
      bar.stop();
    },
  };
}
