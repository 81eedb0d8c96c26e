import type { HttpStats } from './http-stats.js';

export interface ToolTally {
  ok: number;
  busy: number;
  /** 200 with status "error": the tool itself failed. */
  toolError: number;
  /** Another 4xx (the soak's calls are well-formed: none expected). */
  other4xx: number;
  fiveXx: number;
  /** No answer (transport failure or timeout). */
  noAnswer: number;
  bursts: number;
  samples: string[];
  /** Milliseconds of the calls answered ok, bounded. */
  okMs: number[];
}

export const TOOL = 'get_firmware_status';

/**
 * Bursts of concurrent `POST /tools/call` of an idempotent read tool on each real device: all the
 * devices' bursts at once, then nothing until the next. 429 (the hub bounds concurrent calls per
 * device) is a correct answer; a 5xx is not.
 */
export class ToolBursts {
  readonly tally: ToolTally = { ok: 0, busy: 0, toolError: 0, other4xx: 0, fiveXx: 0, noAnswer: 0, bursts: 0, samples: [], okMs: [] };
  private current: Promise<void> | null = null;

  constructor(
    private readonly http: HttpStats,
    private readonly targets: string[],
    private readonly perDevice: number,
  ) {}

  /** Starts a burst unless one is still running; resolves when it is over. */
  burst(): Promise<void> {
    if (this.current || this.perDevice === 0 || this.targets.length === 0 || !this.http.isOpen) return this.current ?? Promise.resolve();
    this.tally.bursts++;
    this.current = Promise.all(this.targets.flatMap((target) => Array.from({ length: this.perDevice }, () => this.callOnce(target)))).then(() => {
      this.current = null;
    });
    return this.current;
  }

  /** Waits for the running burst, if any. */
  async settle(): Promise<void> {
    await this.current;
  }

  private async callOnce(target: string): Promise<void> {
    const started = Date.now();
    const answer = await this.http.request('tools', 'POST', `/tools/call?target=${encodeURIComponent(target)}`, {
      body: JSON.stringify({ tool: TOOL, arguments: {} }),
      headers: { 'content-type': 'application/json' },
      timeoutMs: 60_000,
    });
    const t = this.tally;
    if (!answer) {
      t.noAnswer++;
      return;
    }
    if (answer.status === 200 && answer.json?.status === 'ok') {
      t.ok++;
      if (t.okMs.length < 100_000) t.okMs.push(Date.now() - started);
    } else if (answer.status === 200) {
      t.toolError++;
      this.sample(`${target}: 200 ${answer.text.slice(0, 300)}`);
    } else if (answer.status === 429) t.busy++;
    else if (answer.status >= 500) {
      t.fiveXx++;
      this.sample(`${target}: ${answer.status} ${answer.text.slice(0, 300)}`);
    } else {
      t.other4xx++;
      this.sample(`${target}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  }

  private sample(text: string): void {
    if (this.tally.samples.length < 10) this.tally.samples.push(text);
  }
}

export function percentile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
