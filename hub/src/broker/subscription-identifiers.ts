import type { Client, PublishPacket } from 'aedes';
import { topicMatches } from 'lookout/core';

/** What aedes keeps of each subscription of a client; its types leave the field out. */
type HeldSubscriptions = Record<string, { si?: number } | undefined>;

/**
 * Makes a delivered copy name every subscription of the client it matches (MQTT 5, [MQTT-3.3.4-4]).
 * aedes 2 sends a client one copy of a message that matches several of its filters and names only
 * one of them; a client that routes copies by their Subscription Identifiers (our MqttBus, as
 * mosquitto sends one copy per filter) would miss the handlers of the others. Called per delivery,
 * and only for a copy that carries an identifier: the others pass unchanged.
 */
export function withEveryMatchingIdentifier<P extends PublishPacket>(client: Client, packet: P): P {
  if (packet.properties?.subscriptionIdentifier === undefined) return packet;
  const held = (client as Client & { subscriptions?: HeldSubscriptions }).subscriptions ?? {};
  // A filter starting with a wildcard never matches a `$` topic ([MQTT-4.7.2-1]).
  const system = packet.topic.startsWith('$');
  const ids: number[] = [];
  // A loop over the keys, not Object.entries: this runs for every copy forwarded.
  for (const filter in held) {
    const si = held[filter]?.si;
    if (si === undefined || (system && /^[+#]/.test(filter))) continue;
    if (topicMatches(filter, packet.topic)) ids.push(si);
  }
  if (ids.length <= 1) return packet;
  // A copy of its own: the packet and its properties are shared by every subscriber's delivery.
  return Object.assign(Object.create(Object.getPrototypeOf(packet) as object) as P, packet, {
    properties: { ...packet.properties, subscriptionIdentifier: ids },
  });
}
