import type { MqttClient } from 'mqtt';

/**
 * Sends the acknowledgements of one read from the broker in one write. MQTT.js handles one packet
 * per tick and mqtt-packet corks the socket only until the next tick, so every PUBACK was a write
 * system call of its own: at 20 000 QoS 1 messages a second that was the largest single cost of the
 * hub's ingest (a third of its CPU, measured with --cpu-prof). The socket stays corked from the
 * first packet received until the event loop's next turn, when everything written meanwhile (the
 * acknowledgements of the whole read) leaves together; an acknowledgement waits at most that turn.
 */
export function coalesceAcks(client: MqttClient): void {
  let corked = false;
  client.on('packetreceive', () => {
    const stream = client.stream;
    if (corked || !stream || stream.destroyed) return;
    corked = true;
    stream.cork();
    setImmediate(() => {
      corked = false;
      stream.uncork();
    });
  });
}
