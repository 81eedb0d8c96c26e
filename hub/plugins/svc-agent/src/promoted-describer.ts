import { z } from 'zod';

/** The promoted Track L model's endpoint as the builder answers it (GET /api/track-l/promoted, field describer). */
export interface PromotedEndpoint {
  url: string;
  model: string;
  artifact: string;
}

const MAX_ANSWER_BYTES = 64 * 1024;
const Answer = z.looseObject({
  describer: z.object({ url: z.url({ protocol: /^https?$/ }), model: z.string().min(1).max(256), artifact: z.string().max(256) }).nullable(),
});

/**
 * The describer the builder has promoted (spec 02: a promoted Track L model is what the hub's
 * describers use), asked of the builder at most once per `ttlMs` so that a resolve costs no builder
 * round trip and a new promotion shows within that time. No builder, no promoted model, a builder
 * that does not answer: null, with why (the rules resolve then, and the answer's note says so).
 */
export class PromotedDescriber {
  private cached: { at: number; value: PromotedEndpoint | null; why: string | null } | undefined;
  private pending: Promise<{ value: PromotedEndpoint | null; why: string | null }> | undefined;

  constructor(private readonly o: { builderUrl?: string; builderToken?: string; ttlMs: number; timeoutMs: number; now: () => number }) {}

  async current(): Promise<{ value: PromotedEndpoint | null; why: string | null }> {
    if (!this.o.builderUrl) return { value: null, why: null };
    if (this.cached && this.o.now() - this.cached.at < this.o.ttlMs) return this.cached;
    // Resolves at once share one question to the builder.
    this.pending ??= this.ask().then(
      (r) => {
        this.cached = { at: this.o.now(), ...r };
        this.pending = undefined;
        return r;
      },
      () => {
        this.pending = undefined;
        return { value: null, why: 'the builder gave no promoted model' };
      },
    );
    return this.pending;
  }

  private async ask(): Promise<{ value: PromotedEndpoint | null; why: string | null }> {
    const url = `${this.o.builderUrl!.replace(/\/+$/, '')}/api/track-l/promoted`;
    let res: Response;
    try {
      res = await fetch(url, {
        headers: this.o.builderToken ? { authorization: `Bearer ${this.o.builderToken}` } : {},
        signal: AbortSignal.timeout(this.o.timeoutMs),
      });
    } catch (err) {
      const e = err as Error;
      return { value: null, why: `the builder at ${new URL(url).origin} did not answer (${e.name === 'TimeoutError' ? `${this.o.timeoutMs} ms` : e.message})` };
    }
    // 404: nothing promoted yet, the usual case before Track L.
    if (res.status === 404) {
      await res.body?.cancel().catch(() => undefined);
      return { value: null, why: null };
    }
    const text = res.ok && Number(res.headers.get('content-length') ?? 0) <= MAX_ANSWER_BYTES ? await res.text() : undefined;
    if (text === undefined) await res.body?.cancel().catch(() => undefined);
    if (text === undefined || text.length > MAX_ANSWER_BYTES) return { value: null, why: `the builder answered ${res.status} for the promoted model` };
    try {
      return { value: Answer.parse(JSON.parse(text)).describer, why: null };
    } catch {
      return { value: null, why: 'the builder’s promoted model names no usable endpoint' };
    }
  }
}
