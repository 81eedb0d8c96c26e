import { z } from 'zod';

/**
 * The device's inbound commands (spec 01 leaves their payloads open; ours are JSON): what a hub,
 * an operator or an agent may publish on `devices/<device_id>/cmd/…`. Strict, unlike the outbound
 * messages: a command with a misspelt field must be refused, not half-run. The device's dispatcher
 * parses with these, and the JSON Schemas written from them are what other publishers validate against.
 */

/** `devices/<device_id>/cmd/tool`: call a device tool over the bus; the answer goes to `responses`. */
export const ToolCommandSchema = z
  .strictObject({
    tool: z.string().min(1).max(100).describe('name of the device tool'),
    arguments: z.record(z.string(), z.unknown()).default({}).describe('the tool’s arguments (an empty object when left out)'),
    request_id: z.string().min(1).max(200).optional().describe('echoed in the answer on responses'),
  })
  .describe('cmd/tool command');
/** A cmd/tool command as parsed (see ToolCommandSchema). */
export type ToolCommand = z.output<typeof ToolCommandSchema>;

/** `devices/<device_id>/cmd/ping`: answered with a pong on `responses`. */
export const PingCommandSchema = z
  .strictObject({ request_id: z.string().min(1).max(200).optional().describe('echoed in the pong') })
  .describe('cmd/ping command');
/** A cmd/ping command as parsed (see PingCommandSchema). */
export type PingCommand = z.output<typeof PingCommandSchema>;

/**
 * `devices/<device_id>/cmd/data_manifest`: publish the recording index now (the recorder answers on
 * `data_manifest` with `reason: "request"`, echoing request_id).
 */
export const DataManifestCommandSchema = z
  .strictObject({
    request_id: z.string().min(1).max(200).optional().describe('echoed in the data_manifest message'),
    limit: z.number().int().min(1).max(200).optional().describe('newest chunks to list (default the recorder’s DATA_MANIFEST_CHUNKS)'),
  })
  .describe('cmd/data_manifest command');
/** A cmd/data_manifest command as parsed (see DataManifestCommandSchema). */
export type DataManifestCommand = z.output<typeof DataManifestCommandSchema>;

/** Inbound command topics (relative to `devices/<device_id>/`) and the schema of their payloads. */
export const COMMAND_TOPICS = { 'cmd/tool': ToolCommandSchema, 'cmd/ping': PingCommandSchema, 'cmd/data_manifest': DataManifestCommandSchema } as const;
