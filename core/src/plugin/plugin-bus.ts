import { LookoutError } from '../errors/lookout-error.js';
import { topicMatches, type BusPort } from '../bus/bus-port.js';
import type { PluginBus } from './context.js';
import type { TopicDecl } from './manifest.js';
import { PEER_DIRECTORY_FILTER } from '../bus/peer-directory.js';

/** Filters a device plugin declares as they are, outside its namespace: those the bus ACL lets a device read (the peer directory). */
const ABSOLUTE_DEVICE_FILTERS: readonly string[] = [PEER_DIRECTORY_FILTER];

/**
 * A plugin's view of the bus: it publishes only the topics its manifest declares (checked against
 * their schema first) and subscribes only to its declared filters, relative to the namespace but for
 * the peer directory (`devices/+/hello`), which a device plugin names as it is.
 */
export function createPluginBus(options: {
  plugin: string;
  port: BusPort;
  namespace: string;
  /** Prefix of the telemetry mirror (`shadow/<id>/`), for topics declared with `mirror`. */
  mirrorNamespace?: string;
  topics: TopicDecl[];
  subscriptions: string[];
  track: (release: () => Promise<void>) => void;
  /** A handler that throws (or rejects) reports here: the plugin is marked failed, the bus goes on. */
  fault?: (err: unknown) => void;
}): PluginBus {
  const { plugin, port, namespace, mirrorNamespace, topics, subscriptions, track } = options;
  const fault =
    options.fault ??
    ((err: unknown) => {
      throw err;
    });
  return {
    namespace,
    get connected() {
      return port.connected;
    },
    async publish(suffix, payload, publishOptions = {}) {
      const decl = topics.find((t) => topicMatches(t.suffix, suffix));
      if (!decl) {
        throw new LookoutError('topic_not_declared', `plugin "${plugin}" published to "${suffix}", which its manifest does not declare`, {
          details: { plugin, topic: suffix, declared: topics.map((t) => t.suffix) },
        });
      }
      if (decl.schema) {
        const parsed = decl.schema.safeParse(payload);
        if (!parsed.success) {
          throw new LookoutError('message_invalid', `plugin "${plugin}" published an invalid "${suffix}" message: ${parsed.error.issues[0]?.message}`, {
            details: { plugin, topic: suffix, issues: parsed.error.issues },
          });
        }
      }
      const body = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
      const opts = { qos: decl.qos, retain: publishOptions.retain ?? decl.retain ?? false };
      await port.publish(namespace + suffix, body, opts);
      if (decl.mirror && mirrorNamespace) await port.publish(mirrorNamespace + suffix, body, opts);
    },
    async subscribe(filter, handler) {
      if (!subscriptions.includes(filter)) {
        throw new LookoutError('subscription_not_declared', `plugin "${plugin}" subscribed to "${filter}", which its manifest does not declare`, {
          details: { plugin, filter, declared: subscriptions },
        });
      }
      const guarded: typeof handler = (topic, payload, meta) => {
        try {
          const result = handler(topic, payload, meta) as unknown;
          if (result instanceof Promise) result.catch(fault);
        } catch (err) {
          fault(err);
        }
      };
      const absolute = namespace !== '' && ABSOLUTE_DEVICE_FILTERS.includes(filter);
      const unsubscribe = await port.subscribe(absolute ? filter : namespace + filter, guarded, { qos: 1 });
      track(unsubscribe);
      return unsubscribe;
    },
    onConnect(listener) {
      const off = port.onConnect(listener);
      track(async () => off());
    },
  };
}
