import { contractForTopic, type TopicContract } from 'lookout/core/contracts';
import { jsonDeeperThan } from 'lookout/core';
import { cut, deviceOf, suffixOf } from './ingest-text.js';
import { Refusal } from './ingest-events.js';
import { MAX_TOPIC_CHARS } from './subscriptions.js';

/** A topic with its wire contract; `topic` is the one string kept downstream (ring, events), not each message's copy. */
export type KnownTopic = TopicContract & { topic: string };

/** Above this many distinct topics the memo starts again (a flood of new ones only resets it). */
const MAX_MEMO_TOPICS = 50_000;

/**
 * Stage (a), the topic: bounded in length, and one with a wire contract. Topics repeat (a few per
 * device): their contracts are looked up once.
 */
export class TopicStage {
  private readonly contracts = new Map<string, KnownTopic | null>();

  check(topic: string): KnownTopic | Refusal {
    if (topic.length > MAX_TOPIC_CHARS) {
      return new Refusal(cut(topic, 128), undefined, '(none)', 'unknown', 'unknown_topic', `topic of ${topic.length} characters (limit ${MAX_TOPIC_CHARS})`);
    }
    let c = this.contracts.get(topic);
    if (c === undefined) {
      const found = contractForTopic(topic);
      c = found ? { ...found, topic } : null;
      if (this.contracts.size >= MAX_MEMO_TOPICS) this.contracts.clear();
      this.contracts.set(topic, c);
    }
    return c ?? new Refusal(topic, deviceOf(topic), suffixOf(topic), 'unknown', 'unknown_topic', 'no wire contract for this topic');
  }
}

/**
 * Stage (a), the payload: bounded in bytes, not empty, nested no deeper than `maxDepth` (measured on
 * the bytes, before parsing), JSON. Returns the parsed value or the refusal.
 */
export function parsePayload(known: KnownTopic, payload: Buffer, limits: { maxMessageBytes: number; maxDepth: number }): unknown {
  const { deviceId, suffix, key, topic } = known;
  if (payload.length > limits.maxMessageBytes) {
    return new Refusal(topic, deviceId, suffix, key, 'oversized', `${payload.length} bytes, limit ${limits.maxMessageBytes}`);
  }
  if (payload.length === 0) return new Refusal(topic, deviceId, suffix, key, 'empty', 'empty payload (a cleared retained message)');
  if (jsonDeeperThan(payload, limits.maxDepth)) return new Refusal(topic, deviceId, suffix, key, 'too_deep', `nested deeper than ${limits.maxDepth}`);
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch (err) {
    return new Refusal(topic, deviceId, suffix, key, 'not_json', (err as Error).message);
  }
}
