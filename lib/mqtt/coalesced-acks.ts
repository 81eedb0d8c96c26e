import type { Writable } from 'node:stream';
import type { MqttClient } from 'mqtt';

const corked = new WeakSet<Writable>();

/**
 * Holds what is written on `stream` until the event loop's next turn, when it leaves in one write.
 * Acknowledgements written one by one (MQTT.js handles a packet per tick, a replica resolves a
 * batch's messages together) were a write system call each; this costs an acknowledgement at
 * most that turn. Nested corks (mqtt-packet corks per packet) stay balanced.
 */
function corkUntilNextTurn(stream: Writable): void {
  if (corked.has(stream) || stream.destroyed) return;
  corked.add(stream);
  stream.cork();
  setImmediate(() => {
    corked.delete(stream);
    stream.uncork();
  });
}

/**
 * Sends the acknowledgements of one read from the broker in one write. MQTT.js handles one packet
 * per tick and mqtt-packet corks the socket only until the next tick, so every PUBACK was a write
 * system call of its own: at 20 000 QoS 1 messages a second that was the largest single cost of the
 * hub's ingest (a third of its CPU, measured with --cpu-prof). The socket stays corked from the
 * first packet received until the event loop's next turn.
 */
export function coalesceAcks(client: MqttClient): void {
  client.on('packetreceive', () => {
    if (client.stream) corkUntilNextTurn(client.stream);
  });
}

/**
 * Acknowledgements of QoS 1 messages taken on one connection, gathered over an event-loop turn and
 * written as one buffer: a success PUBACK without properties is the same four bytes in MQTT 3.1.1
 * and 5 (type, remaining length 2, packet id). Encoding each with mqtt-packet and writing it to the
 * corked socket was an allocation and a stream write per message.
 */
export class PubackBatch {
  private ids: number[] = [];
  private socket: Writable | undefined;

  /** Queues the acknowledgement of `messageId` on `socket`; those still queued for an earlier socket are dropped (the broker sends them again). */
  add(socket: Writable, messageId: number): void {
    if (socket !== this.socket) {
      this.socket = socket;
      this.ids = [];
    }
    if (this.ids.push(messageId) === 1) setImmediate(() => this.flush());
  }

  /** Writes what is queued now (a close sends it before its DISCONNECT). */
  flush(): void {
    const { socket, ids } = this;
    this.ids = [];
    if (!socket || ids.length === 0 || socket.destroyed || socket.writableEnded) return;
    const out = Buffer.allocUnsafe(ids.length * 4);
    for (let i = 0; i < ids.length; i++) {
      out[i * 4] = PUBACK_FIRST_BYTE;
      out[i * 4 + 1] = 2;
      out.writeUInt16BE(ids[i], i * 4 + 2);
    }
    socket.write(out);
  }
}

const PUBACK_FIRST_BYTE = 0x40;
