import { LookoutError } from 'lookout/core';

/**
 * Topic checks done before anything reaches the client library, so a caller gets a typed error
 * naming the topic instead of a broker disconnect (brokers drop a client that publishes to `a/#`).
 */
export function assertPublishTopic(topic: string): void {
  if (typeof topic !== 'string' || topic.length === 0) throw invalid(topic, 'a topic must be a non-empty string');
  if (topic.includes('+') || topic.includes('#')) throw invalid(topic, 'wildcards are not allowed in a publish topic');
  if (topic.includes('\u0000')) throw invalid(topic, 'a topic cannot contain NUL');
  if (Buffer.byteLength(topic) > 65535) throw invalid(topic, 'a topic is at most 65535 bytes');
}

export function assertTopicFilter(filter: string): void {
  if (typeof filter !== 'string' || filter.length === 0) throw invalid(filter, 'a filter must be a non-empty string');
  if (filter.includes('\u0000')) throw invalid(filter, 'a filter cannot contain NUL');
  if (Buffer.byteLength(filter) > 65535) throw invalid(filter, 'a filter is at most 65535 bytes');
  const levels = filter.split('/');
  levels.forEach((level, i) => {
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) {
      throw invalid(filter, '`#` must be a whole level and the last one');
    }
    if (level.includes('+') && level !== '+') throw invalid(filter, '`+` must be a whole level');
  });
}

function invalid(topic: unknown, reason: string): LookoutError {
  return new LookoutError('bus_topic_invalid', `${reason}: ${JSON.stringify(topic)}`, { details: { topic, reason } });
}
