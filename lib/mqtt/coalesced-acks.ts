import type { Writable } from 'node:stream';
import type { MqttClient } from 'mqtt';

const corked = new WeakSet<Writable>();

/**
 * Holds what is written on `stream` until the event loop's next turn, when it leaves in one write.
 * Acknowledgements written one by one (MQTT.js handles a packet per tick, a replica resolves a
 * batch's messages together) were a write system call each; this costs an acknowledgement at
 * most that turn. Nested corks (mqtt-packet corks per packet) stay balanced.
 */
export function corkUntilNextTurn(stream: Writable): void {
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
