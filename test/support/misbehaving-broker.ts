import { createServer, type Server, type Socket } from 'node:net';
import { parser as mqttParser, type Packet, type Parser } from 'mqtt-packet';

/**
 * A broker that misbehaves the way a real one does only under faults (a test peer at the edge:
 * mosquitto cannot be made to do these): `onConnection(socket, n, packets, parser)` decides what the
 * n-th connection hears; `packets` are what it said so far, `parser` tells each as it comes.
 */
export async function misbehavingBroker(
  onConnection: (socket: Socket, n: number, packets: Packet[], parser: Parser) => void,
): Promise<{ url: string; connections: () => number; server: Server }> {
  let n = 0;
  const server = createServer((socket) => {
    const packets: Packet[] = [];
    const parser = mqttParser({ protocolVersion: 5 });
    parser.on('packet', (p: Packet) => packets.push(p));
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('error', () => undefined);
    onConnection(socket, ++n, packets, parser);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `mqtt://127.0.0.1:${port}`, connections: () => n, server };
}
