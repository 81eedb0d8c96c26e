import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a device's tool server, for tests of the hub's fetch of
 * recording files: it cuts the answers of the next `cutsLeft` chunk transfers (`GET /recordings/…h265`)
 * after `cutAfter` bytes, as a link that drops mid-transfer does, and keeps the head of every
 * `GET`/`HEAD /recordings/…` request it relayed (to see the Range and If-Range of a resume).
 */
export class CuttingRelay {
  /** Chunk transfers still to cut; a test sets it before the fetch it means to break. */
  cutsLeft: number;
  /** Chunk transfers cut so far. */
  cutsMade = 0;
  /** Called just before each cut (a test replaces the file there, between the cut and the resume). */
  onCut: () => void = () => undefined;
  /** Request heads of `GET`/`HEAD /recordings/…`, in order (the first 2 000 bytes of each). */
  readonly heads: string[] = [];
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(target: number, cutAfter: number, cuts: number) {
    this.cutsLeft = cuts;
    this.server = createServer((client) => {
      const device = connect(target, '127.0.0.1');
      this.sockets.add(client).add(device);
      let armed = false;
      let sent = 0;
      client.on('data', (data: Buffer) => {
        const head = data.toString('latin1', 0, Math.min(data.length, 2000));
        if (/^(GET|HEAD) \/recordings\//.test(head)) this.heads.push(head);
        if (this.cutsLeft > 0 && /^GET \/recordings\/\S+\.h265 /.test(head)) armed = true;
        device.write(data);
      });
      device.on('data', (data: Buffer) => {
        if (!armed) return void client.write(data);
        const room = cutAfter - sent;
        sent += data.length;
        if (room > data.length) return void client.write(data);
        this.cutsLeft--;
        this.cutsMade++;
        armed = false;
        this.onCut();
        cutMidTransfer(client, device, data.subarray(0, room));
      });
      const close = () => {
        client.destroy();
        device.destroy();
      };
      client.on('error', close).on('close', close);
      device.on('error', close).on('close', close);
    });
  }

  /** A relay to `target` listening on a free port; `cuts`: chunk transfers to cut from the start. */
  static async start(target: number, cutAfter: number, cuts = 0): Promise<CuttingRelay> {
    const relay = new CuttingRelay(target, cutAfter, cuts);
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    relay.port = (relay.server.address() as { port: number }).port;
    return relay;
  }

  /** The Range header of each `GET /recordings/…` relayed ('' where it had none). */
  ranges(): string[] {
    return this.heads.filter((h) => h.startsWith('GET ')).map((h) => /^range: (.*)\r$/im.exec(h)?.[1] ?? '');
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Ends a relayed answer after `partial`: the bytes before the cut reach the client, then its
 * connection is reset. Ending both sockets at once let a loaded machine's client see the reset
 * before the bytes, so nothing was kept to resume from.
 */
function cutMidTransfer(client: Socket, device: Socket, partial: Buffer): void {
  device.removeAllListeners('close').on('error', () => undefined);
  device.destroy();
  client.write(partial, () => setTimeout(() => client.destroy(), 300));
}
