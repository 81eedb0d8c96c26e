import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a device's tool server, for tests that break the hub's
 * connections under calls in flight: it knows which tool each connection last asked for (read from
 * the JSON-RPC body of the request) and whether its answer is still awaited, and cuts connections
 * on demand (both sockets destroyed, as a network failure or a device restart would).
 */
export interface CutProxy {
  readonly port: number;
  /** Connections whose request for `tool` awaits its answer. */
  awaiting(tool: string): number;
  /** Cuts the connections awaiting `tool`'s answer, at most `max`; answers how many were cut. */
  cut(tool: string, max?: number): number;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket;
  tool?: string;
  awaiting: boolean;
}

export async function startCutProxy(upstreamPort: () => number): Promise<CutProxy> {
  const links = new Set<Link>();
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort(), '127.0.0.1');
    const link: Link = { client, upstream, awaiting: false };
    links.add(link);
    client.on('data', (chunk: Buffer) => {
      const name = /"name":"([A-Za-z0-9_.-]+)"/.exec(chunk.toString('latin1'))?.[1];
      if (name !== undefined) {
        link.tool = name;
        link.awaiting = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      link.awaiting = false;
      client.write(chunk);
    });
    const end = (): void => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const awaitingLinks = (tool: string) => [...links].filter((l) => l.awaiting && l.tool === tool);
  return {
    port: (server.address() as { port: number }).port,
    awaiting: (tool) => awaitingLinks(tool).length,
    cut(tool, max = Infinity) {
      const chosen = awaitingLinks(tool).slice(0, max);
      for (const l of chosen) {
        l.client.destroy();
        l.upstream.destroy();
      }
      return chosen.length;
    },
    close: async () => {
      for (const l of links) {
        l.client.destroy();
        l.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
