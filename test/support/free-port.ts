import { rmSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for processes that must be told their port
 * (mosquitto). In-process servers should listen on port 0 instead: no window for a race.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/**
 * Starts a server that must be told its port: another process may take a free port between the
 * probe and the server's bind, so up to four are tried. `usePort` hands each to the caller before
 * its `launch`; a `fixedPort` is tried once. When the last try fails, the server's temp `dir` is
 * removed and the failure thrown.
 */
export async function launchOnFreePort(options: {
  host: string;
  fixedPort?: number;
  dir: string;
  usePort: (port: number) => void;
  launch: () => Promise<void>;
}): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    options.usePort(options.fixedPort ?? (await freePort(options.host)));
    try {
      return await options.launch();
    } catch (err) {
      if (options.fixedPort !== undefined || attempt >= 3) {
        rmSync(options.dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
}
