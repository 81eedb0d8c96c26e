import { timingSafeEqual, createHash } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, openSync, readSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, posix } from 'node:path';
import ssh2, { type Attributes, type Connection, type SFTPWrapper } from 'ssh2';

const { Server, utils } = ssh2;
const { STATUS_CODE } = utils.sftp;

/**
 * TEST DOUBLE of a device's sshd with password authentication, built on ssh2's Server: a test
 * cannot set a system password for the real OpenSSH server (test/support/sshd.ts does keys). It
 * accepts one user and password and serves SFTP read-only on one folder: realpath, opendir/readdir,
 * lstat/stat, open/fstat/read/close; every path outside the folder is refused, nothing is written.
 * Options make it misbehave: stalled reads, a slow SFTP start, malformed SFTP packets, data after
 * EOF on an exec channel.
 */
export interface PasswordServerOptions {
  user: string;
  password: string;
  /** The folder served (its absolute path is the path a client asks for). */
  root: string;
  /** Never answer READ requests (a device that hangs mid-transfer). */
  stallReads?: boolean;
  /** Answer READDIR and LSTAT with a packet of an unknown SFTP type (a broken or hostile device). */
  malformedSftp?: boolean;
  /** Start the SFTP subsystem only after this long (a slow device). */
  sftpStartDelayMs?: number;
  /** Accept exec: print a line, send EOF, then stderr data after the EOF (a protocol violation); else exec is refused. */
  execDataAfterEof?: boolean;
}

export interface PasswordServer {
  readonly host: string;
  readonly port: number;
  /** `[127.0.0.1]:<port> ssh-ed25519 AAAA…`. */
  readonly knownHostsLine: string;
  /** Password attempts seen (accepted or not), for assertions. */
  readonly attempts: number;
  /** TCP connections accepted so far. */
  readonly connections: number;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

export async function startPasswordServer(options: PasswordServerOptions): Promise<PasswordServer> {
  const keys = hostKeyPair();
  const publicKey = keys.public.trim().split(/\s+/).slice(0, 2).join(' ');
  const root = realpathSync(options.root);
  const connections = new Set<Connection>();
  let attempts = 0;
  let accepted = 0;

  const server = new Server({ hostKeys: [keys.private] }, (client) => {
    accepted++;
    connections.add(client);
    client.on('close', () => connections.delete(client));
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'password') return ctx.reject(['password']);
      attempts++;
      if (ctx.username === options.user && same(ctx.password, options.password)) return ctx.accept();
      ctx.reject(['password']);
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('sftp', (acceptSftp) => {
          const start = () => serveSftp(acceptSftp(), root, options);
          if (options.sftpStartDelayMs) setTimeout(start, options.sftpStartDelayMs);
          else start();
        });
        session.on('exec', (acceptExec, reject) => {
          if (!options.execDataAfterEof) return reject();
          const stream = acceptExec();
          stream.write('x\t1\t1\n');
          stream.eof();
          // Raw stderr data after the EOF: what a well-behaved server never sends.
          const raw = stream as unknown as {
            _client: { _protocol: { channelExtData(id: number, data: Buffer, type: number): void } };
            outgoing: { id: number };
          };
          raw._client._protocol.channelExtData(raw.outgoing.id, Buffer.from('late\n'), 1);
        });
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host: HOST,
    port,
    knownHostsLine: `[${HOST}]:${port} ${publicKey}`,
    get attempts() {
      return attempts;
    },
    get connections() {
      return accepted;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) c.end();
        server.close(() => resolve());
      }),
  };
}

/**
 * An ed25519 host key pair. ssh2's generator now and then (about 1 in 200) writes a private key its
 * own parser refuses ("Malformed OpenSSH private key"): such a pair is drawn again.
 */
function hostKeyPair(): { private: string; public: string } {
  for (let i = 0; ; i++) {
    const keys = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(keys.private) instanceof Error) || i >= 20) return keys;
  }
}

function same(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function attrsOf(st: Stats): Attributes {
  return { mode: st.mode, uid: st.uid, gid: st.gid, size: st.size, atime: Math.floor(st.atimeMs / 1000), mtime: Math.floor(st.mtimeMs / 1000) };
}

/** Sends an SFTP packet of an unknown type (255) on the session's channel: ssh2's client takes it for a fatal protocol error. */
function sendMalformed(sftp: SFTPWrapper): void {
  const raw = sftp as unknown as { _protocol: { channelData(id: number, data: Buffer): void }; outgoing: { id: number } };
  raw._protocol.channelData(raw.outgoing.id, Buffer.from([0, 0, 0, 5, 255, 0, 0, 0, 1]));
}

function serveSftp(sftp: SFTPWrapper, root: string, options: PasswordServerOptions): void {
  const stallReads = options.stallReads === true;
  const files = new Map<string, number>();
  const dirs = new Map<string, { path: string; done: boolean }>();
  let next = 0;
  const newHandle = () => {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(next++);
    return h;
  };
  /** The local path of a request, or undefined outside the folder. */
  const inside = (path: string): string | undefined => {
    const normal = posix.normalize(path);
    return normal === root || normal.startsWith(`${root}/`) ? normal : undefined;
  };
  const fail = (reqId: number, err: unknown) =>
    sftp.status(reqId, (err as NodeJS.ErrnoException).code === 'ENOENT' ? STATUS_CODE.NO_SUCH_FILE : STATUS_CODE.FAILURE, (err as Error).message);

  sftp.on('REALPATH', (reqId, path) => {
    const p = inside(posix.resolve(root, path));
    if (!p) return sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED);
    sftp.name(reqId, [{ filename: p, longname: p, attrs: {} as Attributes }]);
  });
  const statOf = (reqId: number, path: string) => {
    if (options.malformedSftp) return sendMalformed(sftp);
    const p = inside(path);
    if (!p) return sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED);
    try {
      sftp.attrs(reqId, attrsOf(lstatSync(p)));
    } catch (err) {
      fail(reqId, err);
    }
  };
  sftp.on('LSTAT', statOf);
  sftp.on('STAT', statOf);
  sftp.on('OPENDIR', (reqId, path) => {
    const p = inside(path);
    if (!p) return sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED);
    const handle = newHandle();
    dirs.set(handle.toString('hex'), { path: p, done: false });
    sftp.handle(reqId, handle);
  });
  sftp.on('READDIR', (reqId, handle) => {
    if (options.malformedSftp) return sendMalformed(sftp);
    const dir = dirs.get(handle.toString('hex'));
    if (!dir) return sftp.status(reqId, STATUS_CODE.FAILURE);
    if (dir.done) return sftp.status(reqId, STATUS_CODE.EOF);
    dir.done = true;
    try {
      const names = readdirSync(dir.path).map((filename) => {
        const st = lstatSync(join(dir.path, filename));
        return { filename, longname: filename, attrs: attrsOf(st) };
      });
      sftp.name(reqId, names);
    } catch (err) {
      fail(reqId, err);
    }
  });
  sftp.on('OPEN', (reqId, filename, flags) => {
    const p = inside(filename);
    if (!p || flags !== (utils.sftp.OPEN_MODE.READ as number)) return sftp.status(reqId, STATUS_CODE.PERMISSION_DENIED);
    try {
      const fd = openSync(p, 'r');
      const handle = newHandle();
      files.set(handle.toString('hex'), fd);
      sftp.handle(reqId, handle);
    } catch (err) {
      fail(reqId, err);
    }
  });
  sftp.on('FSTAT', (reqId, handle) => {
    const fd = files.get(handle.toString('hex'));
    if (fd === undefined) return sftp.status(reqId, STATUS_CODE.FAILURE);
    sftp.attrs(reqId, attrsOf(fstatSync(fd)));
  });
  sftp.on('READ', (reqId, handle, offset, length) => {
    const fd = files.get(handle.toString('hex'));
    if (fd === undefined) return sftp.status(reqId, STATUS_CODE.FAILURE);
    if (stallReads) return;
    const buffer = Buffer.alloc(length);
    const got = readSync(fd, buffer, 0, length, offset);
    if (got === 0) return sftp.status(reqId, STATUS_CODE.EOF);
    sftp.data(reqId, buffer.subarray(0, got));
  });
  sftp.on('CLOSE', (reqId, handle) => {
    const key = handle.toString('hex');
    const fd = files.get(key);
    if (fd !== undefined) closeSync(fd);
    files.delete(key);
    dirs.delete(key);
    sftp.status(reqId, STATUS_CODE.OK);
  });
  sftp.on('close', () => {
    for (const fd of files.values()) closeSync(fd);
    files.clear();
  });
}
