/**
 * Every HTTP request the soak makes goes through `request`: counted per category and status, each
 * 5xx kept (the first few in full), bounded in time. A gate closes while the hub restarts, so that
 * no request is sent to a hub the soak stopped on purpose.
 */
export interface HttpAnswer {
  status: number;
  text: string;
  json: any;
}

export interface FiveXx {
  at: string;
  category: string;
  method: string;
  path: string;
  status: number;
  body: string;
}

export class HttpStats {
  /** category → status (or "transport") → count */
  readonly byCategory = new Map<string, Map<string, number>>();
  readonly fiveXx: FiveXx[] = [];
  fiveXxCount = 0;
  /** `category METHOD path → status` → count and the first body. */
  readonly fiveXxGroups = new Map<string, { count: number; body: string }>();
  /** Transport failures while the hub was meant to be up. */
  transportErrors = 0;
  readonly transportSamples: string[] = [];
  skippedWhileClosed = 0;
  private open = true;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private baseUrl: string) {}

  get url(): string {
    return this.baseUrl;
  }

  /** Closes the gate: new requests are skipped until `reopen`. */
  close(): void {
    this.open = false;
  }

  reopen(baseUrl: string): void {
    this.baseUrl = baseUrl;
    this.open = true;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  count(category: string, key: string): void {
    let m = this.byCategory.get(category);
    if (!m) this.byCategory.set(category, (m = new Map()));
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  /** Counts the status of a request made outside `request` (a raw socket); returns it. */
  note(category: string, method: string, what: string, status: number | null): number | null {
    this.count(category, status === null ? 'none' : String(status));
    if (status !== null && status >= 500) {
      this.fiveXxCount++;
      this.recordFiveXx({ at: new Date().toISOString(), category, method, path: what, status, body: '' });
    }
    return status;
  }

  /** The request, or null when the gate is closed or the transport failed (counted either way). */
  async request(
    category: string,
    method: string,
    path: string,
    init: { body?: string | Buffer; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<HttpAnswer | null> {
    if (!this.open) {
      this.skippedWhileClosed++;
      return null;
    }
    this.inFlight++;
    try {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers: init.headers,
        ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : new Uint8Array(init.body) } : {}),
        signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
      });
      const text = await res.text();
      this.count(category, String(res.status));
      if (res.status >= 500) {
        this.fiveXxCount++;
        this.recordFiveXx({ at: new Date().toISOString(), category, method, path: path.slice(0, 200), status: res.status, body: text.slice(0, 500) });
      }
      let json: unknown = undefined;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) {
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
      }
      return { status: res.status, text, json };
    } catch (err) {
      this.count(category, 'transport');
      this.transportErrors++;
      const e = err as Error & { cause?: { code?: string } };
      if (this.transportSamples.length < 10) this.transportSamples.push(`${category} ${method} ${path.slice(0, 100)}: ${e.name} ${e.cause?.code ?? e.message}`);
      return null;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private recordFiveXx(f: FiveXx): void {
    if (this.fiveXx.length < 20) this.fiveXx.push(f);
    const key = `${f.category} ${f.method} ${f.path.replace(/\?.*$/, '')} → ${f.status}`;
    const g = this.fiveXxGroups.get(key);
    if (g) g.count++;
    else if (this.fiveXxGroups.size < 50) this.fiveXxGroups.set(key, { count: 1, body: f.body });
  }

  total(category: string): number {
    let n = 0;
    for (const v of this.byCategory.get(category)?.values() ?? []) n += v;
    return n;
  }

  /** `200:5 400:3 …` for a category. */
  summary(category: string): string {
    const m = this.byCategory.get(category);
    if (!m) return '-';
    return [...m.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}:${v}`)
      .join(' ');
  }
}
