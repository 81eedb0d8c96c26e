import { mkdir, readdir, readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server as TusServer } from '@tus/server';

/**
 * A real tus upload server (@tus/server with its file store) on 127.0.0.1, for tests of the hub's
 * uploads, reached through a TCP relay that cuts the next `cutsLeft` upload requests (PATCH) after
 * `cutAfter` bytes of the request, as a link that drops mid-upload does; the server keeps the bytes
 * that came, so the upload resumes from there. It keeps each PATCH's Upload-Offset header, and
 * answers `refuse` (a status) to every request while set, or nothing while `stall` is.
 */
export class TusDestination {
  cutsLeft = 0;
  cutsMade = 0;
  cutAfter = 4000;
  /** Answer every request with this status (a destination that refuses the hub). */
  refuse: number | undefined;
  /** Answer no request while set (a destination that hangs: the upload stays running). */
  stall = false;
  /** Upload-Offset of each PATCH relayed, in order. */
  readonly patchOffsets: number[] = [];
  relayPort = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly dir: string,
    private readonly http: HttpServer,
    private readonly relay: Server,
  ) {}

  /** The creation URL through the relay. */
  get url(): string {
    return `http://127.0.0.1:${this.relayPort}/files`;
  }

  static async start(dir: string): Promise<TusDestination> {
    await mkdir(dir, { recursive: true });
    const tus = new TusServer({ path: '/files', datastore: new FileStore({ directory: dir }) });
    // The servers are made before the instance that steers them.
    const ref: { self?: TusDestination } = {};
    const http = createHttpServer((req, res) => {
      if (ref.self?.stall) return;
      if (ref.self?.refuse !== undefined) {
        res.writeHead(ref.self.refuse).end('refused');
        return;
      }
      void tus.handle(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const target = (http.address() as { port: number }).port;
    const relay = createServer((client) => ref.self!.link(client, target));
    const self = new TusDestination(dir, http, relay);
    ref.self = self;
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    self.relayPort = (relay.address() as { port: number }).port;
    return self;
  }

  /** The bytes of each complete upload at the destination, by the filename its metadata named. */
  async uploads(): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const info = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as { id: string; size?: number; metadata?: Record<string, string> };
      // The file store keeps the offset as the data file's length.
      const bytes = await readFile(join(this.dir, info.id));
      if (info.size === bytes.length) out.set(info.metadata?.filename ?? info.id, bytes);
    }
    return out;
  }

  private link(client: Socket, target: number): void {
    const server = connect(target, '127.0.0.1');
    this.sockets.add(client).add(server);
    let armed = false;
    let sent = 0;
    client.on('data', (data: Buffer) => {
      const head = data.toString('latin1', 0, Math.min(data.length, 4000));
      if (head.startsWith('PATCH ')) {
        const offset = /^upload-offset: *(\d+)\r$/im.exec(head)?.[1];
        if (offset !== undefined) this.patchOffsets.push(Number(offset));
        if (this.cutsLeft > 0) {
          this.cutsLeft--;
          armed = true;
          sent = 0;
        }
      }
      if (!armed) return void server.write(data);
      const room = this.cutAfter - sent;
      sent += data.length;
      if (room > data.length) return void server.write(data);
      armed = false;
      this.cutsMade++;
      // What came before the cut reaches the server, then both sides drop (as a link that fails does).
      client.removeAllListeners('data');
      server.write(data.subarray(0, room), () =>
        setTimeout(() => {
          client.destroy();
          server.destroy();
        }, 300),
      );
    });
    server.on('data', (data: Buffer) => client.write(data));
    const close = () => {
      client.destroy();
      server.destroy();
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.relay.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
