import type { z } from 'zod';
import type { TopicDecl } from '../plugin/manifest.js';
import { WIRE_LIMITS } from './limits.js';
import { CanTelemetryMessageSchema } from './telemetry-can-message.js';
import { DataManifestMessageSchema } from './data-manifest-message.js';
import { DetsMessageSchema } from './dets-message.js';
import { EventMessageSchema } from './event-message.js';
import { HealthMessageSchema } from './health-message.js';
import { HelloMessageSchema } from './hello-message.js';
import { ResponseMessageSchema } from './responses-message.js';
import { StatusMessageSchema } from './status-message.js';
import { TelemetryMessageSchema } from './telemetry-message.js';
import { WifiTelemetryMessageSchema } from './telemetry-wifi-message.js';

/** What the spec's bus table says of one topic suffix, plus the schema its payloads obey. */
export interface BusContract<S extends z.ZodType = z.ZodType> {
  schema: S;
  qos: 0 | 1;
  retain: boolean;
  /** The spec's rate, in its words. */
  rate: string;
  /** Measurable rate bounds where the spec gives them (telemetry and dets). */
  rateHz?: { nominal: number; min: number; max: number };
  /** Also published under `shadow/<device_id>/<suffix>` (the spec's telemetry mirror). */
  mirror: boolean;
  /** The spec's purpose column. */
  purpose: string;
}

const measuredRate = {
  nominal: WIRE_LIMITS.nominalRateHz,
  min: WIRE_LIMITS.acceptedRateHz.min,
  max: WIRE_LIMITS.acceptedRateHz.max,
};

/**
 * The spec's telemetry bus table, keyed by topic suffix: the one source that publishers, the hub's
 * ingest and the contract verifier use. `events/+` stands for every `events/<type>`; the spec
 * allows QoS 0 or 1 there, 1 is the default.
 */
export const BUS_CONTRACTS = {
  status: {
    schema: StatusMessageSchema,
    qos: 1,
    retain: true,
    rate: 'on change and last-will',
    mirror: false,
    purpose: 'Online/offline, thermal governor',
  },
  health: {
    schema: HealthMessageSchema,
    qos: 1,
    retain: false,
    rate: `about ${WIRE_LIMITS.healthPeriodSec} s`,
    mirror: false,
    purpose: 'Fleet health',
  },
  telemetry: {
    schema: TelemetryMessageSchema,
    qos: 1,
    retain: false,
    rate: 'about 10 Hz',
    rateHz: measuredRate,
    mirror: true,
    purpose: 'Die temperature, fps, embedded detections',
  },
  'telemetry/wifi': {
    schema: WifiTelemetryMessageSchema,
    qos: 1,
    retain: false,
    rate: 'periodic',
    mirror: true,
    purpose: 'RSSI, SSID, failover state',
  },
  'telemetry/can': {
    schema: CanTelemetryMessageSchema,
    qos: 1,
    retain: false,
    rate: 'periodic',
    mirror: true,
    purpose: 'Decoded CAN (J1939) frames',
  },
  dets: {
    schema: DetsMessageSchema,
    qos: 1,
    retain: false,
    rate: 'about 10 Hz',
    rateHz: measuredRate,
    mirror: false,
    purpose: 'Detection batches',
  },
  data_manifest: {
    schema: DataManifestMessageSchema,
    qos: 1,
    retain: false,
    rate: 'on boot and on request',
    mirror: false,
    purpose: 'Recording index',
  },
  responses: {
    schema: ResponseMessageSchema,
    qos: 1,
    retain: false,
    rate: 'on command',
    mirror: false,
    purpose: 'Upload, plugin and error replies',
  },
  'events/+': {
    schema: EventMessageSchema,
    qos: 1,
    retain: false,
    rate: 'event-driven',
    mirror: false,
    purpose: 'Incidents, automation logs, plugin events',
  },
  hello: {
    schema: HelloMessageSchema,
    qos: 1,
    retain: false,
    rate: 'on connect',
    mirror: false,
    purpose: 'Registration handshake',
  },
} as const satisfies Record<string, BusContract>;

/** A topic suffix with a contract, a key of BUS_CONTRACTS (`events/+` stands for every event type). */
export type BusSuffix = keyof typeof BUS_CONTRACTS;
/** The parsed payload type of the messages on a suffix. */
export type BusPayload<K extends BusSuffix> = z.infer<(typeof BUS_CONTRACTS)[K]['schema']>;

/** Every suffix of BUS_CONTRACTS, in table order. */
export const BUS_SUFFIXES = Object.keys(BUS_CONTRACTS) as BusSuffix[];

/** The namespaces a device topic lives in: primary, and the telemetry mirror. */
export const BUS_NAMESPACES = ['devices', 'shadow'] as const;
/** One of BUS_NAMESPACES. */
export type BusNamespace = (typeof BUS_NAMESPACES)[number];

/**
 * A plugin manifest's topic declaration for a suffix, straight from the bus table, so that a
 * plugin cannot drift from the spec: `topics: [busTopic('dets')]`. `suffix` may be a concrete
 * `events/<type>`, which takes the `events/+` contract.
 */
export function busTopic(suffix: BusSuffix | `events/${string}`, description?: string): TopicDecl {
  const key = contractKeyForSuffix(suffix);
  if (key === undefined) throw new TypeError(`no bus contract for suffix ${suffix}`);
  const c: BusContract = BUS_CONTRACTS[key];
  const decl: TopicDecl = { suffix, qos: c.qos, retain: c.retain, rate: c.rate, mirror: c.mirror, schema: c.schema };
  decl.description = description ?? c.purpose;
  return decl;
}

/** The BUS_CONTRACTS key that covers a topic suffix (`events/<type>` and bare `events` → `events/+`). */
export function contractKeyForSuffix(suffix: string): BusSuffix | undefined {
  if (Object.hasOwn(BUS_CONTRACTS, suffix)) return suffix as BusSuffix;
  // The proxy subscribes to both devices/+/events and devices/+/events/#: one contract for all.
  if (suffix === 'events') return 'events/+';
  if (suffix.startsWith('events/') && suffix.slice('events/'.length).split('/').every(isPlainLevel)) return 'events/+';
  return undefined;
}

function isPlainLevel(level: string): boolean {
  return level !== '' && !level.includes('+') && !level.includes('#');
}

/** A concrete device topic taken apart, with the contract its messages obey (see contractForTopic). */
export interface TopicContract {
  namespace: BusNamespace;
  deviceId: string;
  /** The topic's own suffix, e.g. `events/incident`. */
  suffix: string;
  /** The BUS_CONTRACTS key that applies, e.g. `events/+`. */
  key: BusSuffix;
  contract: BusContract;
}

/**
 * Which contract a concrete topic obeys: `devices/<id>/<suffix>` or `shadow/<id>/<suffix>`.
 * Undefined for anything else (cmd topics, unknown suffixes, wildcards, empty levels), so an ingest
 * can count it as unknown instead of guessing.
 */
export function contractForTopic(topic: string): TopicContract | undefined {
  const first = topic.indexOf('/');
  if (first <= 0) return undefined;
  const namespace = topic.slice(0, first);
  if (namespace !== 'devices' && namespace !== 'shadow') return undefined;
  const second = topic.indexOf('/', first + 1);
  if (second < 0) return undefined;
  const deviceId = topic.slice(first + 1, second);
  if (!isPlainLevel(deviceId)) return undefined;
  const suffix = topic.slice(second + 1);
  // A concrete topic never holds wildcards; `events/+` is a key, not a topic.
  if (suffix.includes('+') || suffix.includes('#')) return undefined;
  const key = contractKeyForSuffix(suffix);
  if (key === undefined) return undefined;
  return { namespace, deviceId, suffix, key, contract: BUS_CONTRACTS[key] };
}
