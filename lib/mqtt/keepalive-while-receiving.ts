import type { MqttClient } from 'mqtt';

/**
 * MQTT.js ends a connection whose PINGRESP is late, even when the PINGRESP is only queued behind
 * PUBLISH packets the client is still working through. A hub catching up on a backlog so dropped its
 * connection; the broker then sent every unacknowledged message again, the acknowledgements queued on
 * the dead socket each failed with an error of their own (8 s of the hub's loop in the fleet-load
 * bench at 20 000 msg/s) and the hub fell 40 s behind. A packet received since the last PINGREQ shows
 * the broker alive: the check starts again instead. A connection on which nothing arrives for a whole
 * keepalive check still ends as before.
 */
export function keepAliveWhileReceiving(client: MqttClient): void {
  let received = 0;
  let receivedAtPing = 0;
  client.on('packetreceive', () => void received++);
  const sendPing = client.sendPing.bind(client);
  client.sendPing = () => {
    receivedAtPing = received;
    sendPing();
  };
  const timeout = client.onKeepaliveTimeout.bind(client);
  client.onKeepaliveTimeout = () => {
    if (received !== receivedAtPing) client.reschedulePing(true);
    else timeout();
  };
}
