import type { SafetyState } from './safety-state.js';

const WORDS: Record<string, number> = {
  no: 0,
  none: 0,
  nobody: 0,
  zero: 0,
  one: 1,
  single: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  dozen: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  a: 1,
  an: 1,
};

/** Nouns a count is stated about, by what the device counts them as. */
const NOUNS: [kind: Kind, re: RegExp][] = [
  ['person', /^(people|persons?|individuals?|humans?|men|women|pedestrians?|visitors?|intruders?)$/],
  ['weapon', /^(weapons?|guns?|handguns?|knives|knife|rifles?|shotguns?|firearms?)$/],
  ['track', /^(tracks?|tracked|objects?)$/],
  ['other', /^(vehicles?|cars?|trucks?|bus(es)?|bicycles?|bikes?|detections?)$/],
];
type Kind = 'person' | 'weapon' | 'track' | 'other';

/**
 * The counts a text states: a number (digits or a word) followed, within two words, by a counted
 * noun ("3 people", "two armed persons", "no weapons"). Numbers about anything else (a temperature,
 * a time) are not counts and are left alone.
 */
export function statedCounts(text: string): { value: number; phrase: string; kind: Kind }[] {
  const words = text.toLowerCase().match(/[a-z]+|\d+/g) ?? [];
  const out: { value: number; phrase: string; kind: Kind }[] = [];
  for (let i = 0; i < words.length; i++) {
    const value = /^\d+$/.test(words[i]) ? Number(words[i]) : WORDS[words[i]];
    if (value === undefined) continue;
    for (let j = i + 1; j <= i + 3 && j < words.length; j++) {
      const kind = NOUNS.find(([, re]) => re.test(words[j]))?.[0];
      if (kind) {
        out.push({ value, phrase: words.slice(i, j + 1).join(' '), kind });
        break;
      }
      if (/^\d+$/.test(words[j]) || WORDS[words[j]] !== undefined) break;
    }
  }
  return out;
}

/**
 * Whether a describer's text keeps to the device's counts (spec 01, "What the service does" 7:
 * models describe, never override). Every count it states must be one the device has; a count
 * stated that the device does not have is the first contradiction, returned with why.
 */
export function contradiction(text: string, s: SafetyState): string | null {
  const allowed: Record<Kind, Set<number>> = {
    person: new Set([s.person_count]),
    weapon: new Set([s.weapons.count]),
    track: new Set([s.track_count]),
    other: new Set([0, ...s.counts.map((c) => c.count)]),
  };
  // "a person" when nobody is there, "no people" when someone is: the articles count too.
  for (const stated of statedCounts(text)) {
    if (!allowed[stated.kind].has(stated.value))
      return `the describer stated "${stated.phrase}" (${stated.value}); the device counts ${s.person_count} people, ${s.track_count} tracks, ${s.weapons.count} weapons`;
  }
  return null;
}
