import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topicMatches } from '../../../../core/src/bus/bus-port.js';

/** The rule as MQTT states it, level by level on split strings: what topicMatches must agree with. */
function byLevels(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

describe('topicMatches', () => {
  it('matches as MQTT says, `#` taking the parent level too', () => {
    const cases: [string, string, boolean][] = [
      ['devices/+/dets', 'devices/cam-1/dets', true],
      ['devices/+/dets', 'devices/cam-1/dets/x', false],
      ['devices/+/dets', 'devices/cam-1', false],
      ['devices/+/telemetry/#', 'devices/cam-1/telemetry', true],
      ['devices/+/telemetry/#', 'devices/cam-1/telemetry/a/b', true],
      ['devices/+/telemetry/#', 'devices/cam-1/telemetryx', false],
      ['#', 'anything/at/all', true],
      ['+', 'one', true],
      ['+', 'one/two', false],
      ['+/+', '/x', true],
      ['a//b', 'a//b', true],
      ['a//b', 'a/x/b', false],
      ['', '', true],
      ['a', 'ab', false],
      ['ab', 'a', false],
      ['devices/cam-1/dets', 'devices/cam-1/dets', true],
    ];
    for (const [filter, topic, expected] of cases) assert.equal(topicMatches(filter, topic), expected, `${filter} ~ ${topic}`);
  });

  it('agrees with the rule on split levels for every filter of up to three levels and topic of up to four over a small alphabet', () => {
    // Wildcards inside longer levels too (`a+`, `#a`, `++`): only a whole level is one.
    const levels = ['a', 'b', 'ab', '', 'a+', '#a'];
    const all = (n: number, alphabet: string[]): string[] => (n === 1 ? alphabet : all(n - 1, alphabet).flatMap((head) => alphabet.map((l) => `${head}/${l}`)));
    const topics = [1, 2, 3, 4].flatMap((n) => all(n, levels));
    const filters = [1, 2, 3].flatMap((n) => all(n, [...levels, '+', '#', '++']));
    for (const filter of filters) for (const topic of topics) assert.equal(topicMatches(filter, topic), byLevels(filter, topic), `${filter} ~ ${topic}`);
  });
});
