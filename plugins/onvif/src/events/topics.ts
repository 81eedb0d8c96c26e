import { declare, NS } from '../soap/namespaces.js';

/** The topics this device raises (tns1 = http://www.onvif.org/ver10/topics). */
export const TOPIC = {
  /** Home Assistant's people sensor: Data IsPeople. */
  people: 'tns1:RuleEngine/PeopleDetector/People',
  /** Home Assistant's motion sensor: Data IsMotion. */
  motion: 'tns1:RuleEngine/CellMotionDetector/Motion',
  /** One per person detection per processed frame: Data b, p, conf, track_id. */
  person: 'tns1:RuleEngine/ObjectDetection/Person',
  /** Source Token and Type (ONVIF Media2). */
  configurationChanged: 'tns1:Media/ConfigurationChanged',
} as const;

/** Namespaces the topic set needs beyond the shared table (soap/namespaces.ts). */
export const WSTOP = 'http://docs.oasis-open.org/wsn/t-1';
export const XS = 'http://www.w3.org/2001/XMLSchema';

interface TopicDescription {
  topic: string;
  isProperty: boolean;
  source: Array<[string, string]>;
  data: Array<[string, string]>;
}

const RULE_SOURCE: Array<[string, string]> = [
  ['VideoSourceConfigurationToken', 'tt:ReferenceToken'],
  ['VideoAnalyticsConfigurationToken', 'tt:ReferenceToken'],
  ['Rule', 'xs:string'],
];

const DESCRIPTIONS: TopicDescription[] = [
  { topic: TOPIC.people, isProperty: true, source: RULE_SOURCE, data: [['IsPeople', 'xs:boolean']] },
  { topic: TOPIC.motion, isProperty: true, source: RULE_SOURCE, data: [['IsMotion', 'xs:boolean']] },
  {
    topic: TOPIC.person,
    isProperty: false,
    source: RULE_SOURCE,
    data: [
      ['b', 'xs:string'],
      ['p', 'xs:float'],
      ['conf', 'xs:float'],
      ['track_id', 'xs:int'],
    ],
  },
  {
    topic: TOPIC.configurationChanged,
    isProperty: false,
    source: [
      ['Token', 'tt:ReferenceToken'],
      ['Type', 'xs:string'],
    ],
    data: [],
  },
];

function itemDescriptions(tag: 'Source' | 'Data', items: Array<[string, string]>): string {
  if (!items.length) return '';
  return `<tt:${tag}>${items.map(([n, t]) => `<tt:SimpleItemDescription Name="${n}" Type="${t}"/>`).join('')}</tt:${tag}>`;
}

interface TopicNode {
  children: Map<string, TopicNode>;
  description?: TopicDescription;
}

function renderNode(name: string, node: TopicNode): string {
  const d = node.description;
  const leaf = d
    ? `<tt:MessageDescription IsProperty="${d.isProperty}">${itemDescriptions('Source', d.source)}${itemDescriptions('Data', d.data)}</tt:MessageDescription>`
    : '';
  const inner = [...node.children].map(([n, c]) => renderNode(n, c)).join('');
  return `<${name}${d ? ' wstop:topic="true"' : ''}>${leaf}${inner}</${name}>`;
}

/**
 * The wstop:TopicSet of GetEventProperties: the first level is a tns1 element, deeper levels are
 * unqualified (as the ONVIF topic namespace document writes them). Needs wstop, tt, tns1 and xs
 * declared and the default namespace undeclared on an ancestor.
 */
export function topicSetXml(): string {
  const root: TopicNode = { children: new Map() };
  for (const d of DESCRIPTIONS) {
    const [first, ...rest] = d.topic.split('/');
    let node = root;
    for (const seg of [first, ...rest]) {
      if (!node.children.has(seg)) node.children.set(seg, { children: new Map() });
      node = node.children.get(seg)!;
    }
    node.description = d;
  }
  return `<wstop:TopicSet>${[...root.children].map(([n, c]) => renderNode(n, c)).join('')}</wstop:TopicSet>`;
}

/** Root-element declarations for a response carrying a TopicSet. */
export function topicSetDeclarations(): string {
  return `${declare('tt', 'tns1')} xmlns:wstop="${WSTOP}" xmlns:xs="${XS}" xmlns=""`;
}

const TOPIC_DIALECTS = new Set([
  'http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet',
  'http://docs.oasis-open.org/wsn/t-1/TopicExpression/Concrete',
  'http://docs.oasis-open.org/wsn/t-1/TopicExpression/Simple',
]);

/** Which topics a subscription wants; built from its wsnt:Filter TopicExpression. */
export type TopicFilter = (topic: string) => boolean;

/**
 * A filter from a TopicExpression's text (`tns1:RuleEngine//.|tns1:Media/ConfigurationChanged`):
 * alternatives separated by `|`, a `//.` suffix selects a subtree, prefixes are resolved with
 * `lookupPrefix` against the request's own declarations. Undefined for an unknown dialect.
 */
export function topicFilter(expression: string, dialect: string | undefined, lookupPrefix: (prefix: string) => string | null): TopicFilter | undefined {
  if (dialect !== undefined && !TOPIC_DIALECTS.has(dialect)) return undefined;
  const wanted: Array<{ path: string; subtree: boolean }> = [];
  for (const raw of expression.split('|')) {
    const alt = raw.trim();
    const colon = alt.indexOf(':');
    if (colon < 0) return undefined;
    if (lookupPrefix(alt.slice(0, colon)) !== NS.tns1) continue; // a topic namespace this device has no topics in
    const subtree = alt.endsWith('//.');
    wanted.push({ path: alt.slice(colon + 1, subtree ? -3 : undefined), subtree });
  }
  return (topic) => {
    const path = topic.slice(topic.indexOf(':') + 1);
    return wanted.some((w) => path === w.path || (w.subtree && path.startsWith(`${w.path}/`)));
  };
}
