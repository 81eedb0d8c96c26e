import type { z } from 'zod';
import { BUS_CONTRACTS, type BusSuffix } from './bus-contracts.js';
import { CacheEntrySchema, FleetLatestResponseSchema } from './cache-entry.js';
import { DataManifestMessageSchema } from './data-manifest-message.js';
import { DetectionSchema } from './detection.js';
import { DetsMessageSchema } from './dets-message.js';
import { DevicePortsSchema } from './device-ports.js';
import { ErrorBodySchema } from './error-body.js';
import { AutomationLogEventSchema, EventMessageSchema } from './event-message.js';
import { EnrichedHealthResponseSchema, HealthEnrichmentSchema } from './health-enrichment.js';
import { HealthMessageSchema } from './health-message.js';
import { HelloMessageSchema } from './hello-message.js';
import { LatestDetsResultSchema } from './latest-dets-result.js';
import { PlaybackReadyResultSchema } from './playback-ready-result.js';
import { ChunkRefSchema, ChunkSidecarSchema, ManifestChunkSchema } from './recording-chunk.js';
import { RecordingStatusResultSchema } from './recording-status-result.js';
import { RegistryRecordSchema } from './registry-record.js';
import { ResponseMessageSchema } from './responses-message.js';
import { StatusMessageSchema } from './status-message.js';
import { StorageSummarySchema } from './storage-summary.js';
import { CanTelemetryMessageSchema } from './telemetry-can-message.js';
import { TelemetryMessageSchema } from './telemetry-message.js';
import { WifiTelemetryMessageSchema } from './telemetry-wifi-message.js';
import { ToolCallRequestSchema, ToolCallResponseSchema } from './tool-call.js';
import { ListRecordingChunksResultSchema, LiveJpegResultSchema, VideoUnderstandResultSchema } from './recording-tools.js';
import { COMMAND_TOPICS, DataManifestCommandSchema, PingCommandSchema, ToolCommandSchema } from './command-messages.js';

/** Every wire contract by its file name (`<name>.schema.json`): what the JSON Schema writer emits. */
export const CONTRACT_SCHEMAS = {
  detection: DetectionSchema,
  'dets-message': DetsMessageSchema,
  'telemetry-message': TelemetryMessageSchema,
  'telemetry-wifi-message': WifiTelemetryMessageSchema,
  'telemetry-can-message': CanTelemetryMessageSchema,
  'health-message': HealthMessageSchema,
  'status-message': StatusMessageSchema,
  'hello-message': HelloMessageSchema,
  'data-manifest-message': DataManifestMessageSchema,
  'responses-message': ResponseMessageSchema,
  'event-message': EventMessageSchema,
  'automation-log-event': AutomationLogEventSchema,
  'storage-summary': StorageSummarySchema,
  'device-ports': DevicePortsSchema,
  'chunk-ref': ChunkRefSchema,
  'manifest-chunk': ManifestChunkSchema,
  'recording-status-result': RecordingStatusResultSchema,
  'latest-dets-result': LatestDetsResultSchema,
  'health-enrichment': HealthEnrichmentSchema,
  'enriched-health-response': EnrichedHealthResponseSchema,
  'registry-record': RegistryRecordSchema,
  'cache-entry': CacheEntrySchema,
  'fleet-latest-response': FleetLatestResponseSchema,
  'tool-call-request': ToolCallRequestSchema,
  'tool-call-response': ToolCallResponseSchema,
  'playback-ready-result': PlaybackReadyResultSchema,
  'error-body': ErrorBodySchema,
  'tool-command': ToolCommandSchema,
  'ping-command': PingCommandSchema,
  'data-manifest-command': DataManifestCommandSchema,
  'chunk-sidecar': ChunkSidecarSchema,
  'list-recording-chunks-result': ListRecordingChunksResultSchema,
  'live-jpeg-result': LiveJpegResultSchema,
  'video-understand-result': VideoUnderstandResultSchema,
} as const satisfies Record<string, z.ZodType>;

/** The name of a contract, a key of CONTRACT_SCHEMAS (its JSON Schema file is `<name>.schema.json`). */
export type ContractName = keyof typeof CONTRACT_SCHEMAS;

/**
 * The topic suffixes whose payloads a named contract describes (for the schema index): the bus
 * table's outbound topics and the device's inbound commands (`cmd/tool`, `cmd/ping`).
 */
export function busSuffixesOf(schema: z.ZodType): string[] {
  const outbound: string[] = (Object.keys(BUS_CONTRACTS) as BusSuffix[]).filter((k) => BUS_CONTRACTS[k].schema === schema);
  const inbound = Object.entries(COMMAND_TOPICS)
    .filter(([, s]) => s === schema)
    .map(([suffix]) => suffix);
  return [...outbound, ...inbound];
}
