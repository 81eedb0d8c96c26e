/** `lookout/lib/mqtt`: the one MQTT client library of the product. The MQTT.js adapter of the bus port (MQTT 5 with fallback to 3.1.1, reconnects with backoff, subscription identifiers), the device's disk-backed outbox, and the lean subscriber of the hub's ingest, its replicas' and its own (acknowledges each message when its handler is done, in any order): what the hosts connect with. Plugins see only the bus port of `lookout/core`. */
export * from './backoff.js';
export * from './bus-logger.js';
export * from './coalesced-acks.js';
export * from './identified-filters.js';
export * from './mqtt-bus-options.js';
export * from './mqtt-bus.js';
export * from './mqtt-topics.js';
export * from './outbox-bus.js';
export * from './outbox-log.js';
export * from './outbox.js';
export * from './shared-subscriber.js';
export * from './subscription-ids.js';
export * from './subscription-table.js';
export * from './tls-failure.js';
