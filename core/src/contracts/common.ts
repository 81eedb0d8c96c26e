import { z } from 'zod';

/**
 * Building blocks shared by the wire contracts. Objects are loose (unknown fields pass through)
 * so that an older reader accepts a newer writer's messages (forward compatibility).
 */

/**
 * `<timestamp>` of the spec: ISO 8601 in UTC. Writers emit `Date#toISOString()` (`…Z`); readers
 * also take a zero offset (`+00:00`, what Python's isoformat writes) because other fleet tools
 * publish on the same bus. Any other offset is refused: the spec says UTC.
 */
export const TimestampSchema = z.iso
  .datetime({ offset: true })
  .regex(/(?:Z|[+-]00:?00)$/, 'must be in UTC (Z or +00:00)')
  // The second pattern hides zod's own `format` in JSON Schema; say it again for readers of the files.
  .meta({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
/** A `<timestamp>` as parsed (see TimestampSchema). */
export type Timestamp = z.infer<typeof TimestampSchema>;

/** A count or size: an integer, 0 or more. */
export const NonNegativeIntSchema = z.number().int().nonnegative();

/** A listening TCP/UDP port as announced; 0 ("pick one") is never announced. */
export const PortSchema = z.number().int().min(1).max(65535);

/** An IPv4 or IPv6 address, as hello and the registry's shadows list them (`ips`). */
export const IpAddressSchema = z.union([z.ipv4(), z.ipv6()]).describe('an IPv4 or IPv6 address');

/** `<device_id>` of spec 01: one MQTT topic level, since it names the device in `devices/<device_id>/...`. */
export const DeviceIdSchema = z
  .string()
  .min(1)
  .regex(/^[^/+#\s]+$/, 'must be one MQTT topic level (no /, +, # or spaces)')
  .describe('`<device_id>`, used as one topic level in devices/<device_id>/...');

/** `<role_label>`: a device's role label, used as `camera_id` and for canary resolution. */
export const RoleLabelSchema = z.string().min(1).describe('`<role_label>`');

/** The values of `storage_health` (spec 01, health message and get_recording_status): CRITICAL can become WARNING after a prune. */
export const STORAGE_HEALTH_VALUES = ['OK', 'WARNING', 'CRITICAL'] as const;
/** Validates a `storage_health` value (see STORAGE_HEALTH_VALUES). */
export const StorageHealthSchema = z.enum(STORAGE_HEALTH_VALUES);
/** A `storage_health` value as parsed (see StorageHealthSchema). */
export type StorageHealth = z.infer<typeof StorageHealthSchema>;

/** The thermal governor's states, `thermal_state` of the status message (spec 01). */
export const THERMAL_STATE_VALUES = ['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL'] as const;
/** Validates a `thermal_state` value (see THERMAL_STATE_VALUES). */
export const ThermalStateSchema = z.enum(THERMAL_STATE_VALUES);

/** A device's presence (spec 01 "States and transitions"): offline comes from the last will on status. */
export const PRESENCE_VALUES = ['online', 'offline'] as const;
/** Validates a presence value (see PRESENCE_VALUES). */
export const PresenceSchema = z.enum(PRESENCE_VALUES);

/** Degrees Celsius; finite (zod refuses NaN and Infinity), no range: sensors differ. */
export const CelsiusSchema = z.number().describe('degrees Celsius');
/** A temperature that may be unknown (a sensor that cannot be read is null, never a made-up number). */
export const MaybeCelsiusSchema = CelsiusSchema.nullable();

/** A percentage, 0 to 100 (e.g. `storage_used_pct`). */
export const PercentSchema = z.number().min(0).max(100);
