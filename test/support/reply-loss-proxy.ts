import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server (here redis-server), for tests of a write whose
 * reply is lost: `loseReplies()` keeps passing what clients send but drops what the server answers
 * on the connections open now (the commands run, their replies never arrive), `cut()` then ends
 * those connections as a failing network does, and `refuseFor(ms)` stops listening for a while
 * (reconnects are refused, as by a host whose server is down, before one succeeds), and
 * `delayReplies(ms)` makes the connections opened from then on a slow link (each reply late).
 */
export class ReplyLossProxy {
  port = 0;
  private readonly server: Server;
  private readonly links = new Set<{ client: Socket; upstream: Socket; mute: boolean }>();
  private replyDelayMs = 0;

  private constructor(targetPort: number) {
    this.server = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      const link = { client, upstream, mute: false };
      this.links.add(link);
      client.on('data', (chunk: Buffer) => upstream.write(chunk));
      const delay = this.replyDelayMs;
      upstream.on('data', (chunk: Buffer) => {
        if (link.mute) return;
        // Timers of one delay fire in the order they were set: the replies keep theirs.
        if (delay > 0) setTimeout(() => client.writable && client.write(chunk), delay);
        else client.write(chunk);
      });
      const end = () => {
        this.links.delete(link);
        client.destroy();
        upstream.destroy();
      };
      for (const s of [client, upstream]) {
        s.on('error', end);
        s.on('close', end);
      }
    });
  }

  static async start(targetPort: number): Promise<ReplyLossProxy> {
    const proxy = new ReplyLossProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.server.address() as { port: number }).port;
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The connections open now pass requests on and drop every reply from now on. */
  loseReplies(): void {
    for (const link of this.links) link.mute = true;
  }

  /** Ends the connections open now (both sides). */
  cut(): void {
    for (const link of [...this.links]) {
      link.client.destroy();
      link.upstream.destroy();
    }
  }

  /** Connections opened from now on deliver each reply `ms` late. */
  delayReplies(ms: number): void {
    this.replyDelayMs = ms;
  }

  /** Stops listening for `ms` (connections are refused), then listens again on the same port. */
  refuseFor(ms: number): void {
    setTimeout(this.refuse(), ms);
  }

  /** Stops listening until the returned function is called. */
  refuse(): () => void {
    this.server.close();
    return () => this.server.listen(this.port, '127.0.0.1');
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
