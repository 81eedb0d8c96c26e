/**
 * A child process for last-will tests: connects an MqttBus with a will, publishes its retained
 * `online` status, prints `ready` and waits to be killed. Run as
 * `node will-client.js <url> <clientId> <willTopic> <willPayload> <onlinePayload>`.
 */
import { MqttBus } from '../../lib/mqtt/mqtt-bus.js';

const [url, clientId, willTopic, willPayload, onlinePayload] = process.argv.slice(2);
if (!url || !clientId || !willTopic || willPayload === undefined || onlinePayload === undefined) {
  process.stderr.write('usage: will-client <url> <clientId> <willTopic> <willPayload> <onlinePayload>\n');
  process.exit(2);
}

const bus = await MqttBus.connect({
  url,
  clientId,
  will: { topic: willTopic, payload: willPayload, qos: 1, retain: true },
  reconnect: { initialMs: 50, maxMs: 200 },
  connectTimeoutMs: 5_000,
});
await bus.publish(willTopic, onlinePayload, { qos: 1, retain: true });
process.stdout.write('ready\n');
// Stays connected until the parent kills it.
setInterval(() => undefined, 60_000);
