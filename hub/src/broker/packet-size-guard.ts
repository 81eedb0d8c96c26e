import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

export interface PacketSizeLimits {
  /** Before the first packet (CONNECT) is complete: nothing is authenticated yet. */
  beforeConnect: number;
  /** Afterwards, for an authenticated client. */
  afterConnect: number;
}

/**
 * The socket as aedes reads it, with each MQTT packet's declared length checked as its fixed header
 * arrives: aedes buffers a whole packet before it looks at it (and before it checks credentials),
 * so a client announcing a 200 MiB packet and streaming it slowly would hold that memory. A packet
 * over the limit closes the connection before its body is read. Bytes pass through unchanged.
 */
export function guardPacketSizes(socket: Socket, limits: PacketSizeLimits, onRefused: (declared: number) => void): Duplex {
  let state: 'header' | 'length' | 'body' = 'header';
  let length = 0;
  let multiplier = 1;
  let remaining = 0;
  let packets = 0;

  /** Walks the framing of `chunk`; false when a packet declared more than it may. */
  const check = (chunk: Buffer): boolean => {
    let i = 0;
    while (i < chunk.length) {
      if (state === 'header') {
        i++;
        state = 'length';
        length = 0;
        multiplier = 1;
      } else if (state === 'length') {
        const byte = chunk[i++];
        length += (byte & 0x7f) * multiplier;
        multiplier *= 128;
        if (byte & 0x80) continue;
        const limit = packets === 0 ? limits.beforeConnect : limits.afterConnect;
        if (length > limit) {
          onRefused(length);
          return false;
        }
        remaining = length;
        state = remaining === 0 ? 'header' : 'body';
        if (remaining === 0) packets++;
      } else {
        const take = Math.min(remaining, chunk.length - i);
        i += take;
        remaining -= take;
        if (remaining === 0) {
          state = 'header';
          packets++;
        }
      }
    }
    return true;
  };

  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  const conn = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      // aedes writes each packet on its own (a PUBACK per publish, each message forwarded to a
      // subscriber), in pieces (mqtt-packet), mostly from its setImmediate callbacks: what one turn
      // of the event loop writes goes out together, one write system call (one TLS record on the
      // TLS listener) rather than one per packet, which was the largest single cost of the embedded
      // broker (`npm run bench -- hub-ingest-tls`). The next piece is taken at once unless the
      // socket is full, so that a turn's pieces all reach the corked socket.
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(uncork);
      }
      if (socket.write(chunk)) callback();
      else socket.once('drain', () => callback());
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      // What was written this tick goes out first: aedes writes a refusing CONNACK and then destroys.
      if (corked) uncork();
      socket.destroy();
      callback(err);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    if (!check(chunk)) {
      // What aedes wrote before (the PUBACKs of publishes it accepted) leaves first, as in destroy().
      if (corked) uncork();
      socket.destroy();
      return;
    }
    if (!conn.push(chunk)) socket.pause();
  });
  socket.on('end', () => conn.push(null));
  socket.on('close', () => conn.destroy());
  socket.on('error', (err) => conn.destroy(err));
  return conn;
}
