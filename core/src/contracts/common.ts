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
export type Timestamp = z.infer<typeof TimestampSchema>;

export const NonNegativeIntSchema = z.number().int().nonnegative();

/** A listening TCP/UDP port as announced; 0 ("pick one") is never announced. */
export const PortSchema = z.number().int().min(1).max(65535);

export const IpAddressSchema = z.union([z.ipv4(), z.ipv6()]).describe('an IPv4 or IPv6 address');

export const DeviceIdSchema = z
  .string()
  .min(1)
  .regex(/^[^/+#\s]+$/, 'must be one MQTT topic level (no /, +, # or spaces)')
  .describe('`<device_id>`, used as one topic level in devices/<device_id>/...');

/** `<role_label>`: a device's role label, used as `camera_id` and for canary resolution. */
export const RoleLabelSchema = z.string().min(1).describe('`<role_label>`');

export const STORAGE_HEALTH_VALUES = ['OK', 'WARNING', 'CRITICAL'] as const;
export const StorageHealthSchema = z.enum(STORAGE_HEALTH_VALUES);
export type StorageHealth = z.infer<typeof StorageHealthSchema>;

export const THERMAL_STATE_VALUES = ['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL'] as const;
export const ThermalStateSchema = z.enum(THERMAL_STATE_VALUES);

export const PRESENCE_VALUES = ['online', 'offline'] as const;
export const PresenceSchema = z.enum(PRESENCE_VALUES);

/** Degrees Celsius; finite (zod refuses NaN and Infinity), no range: sensors differ. */
export const CelsiusSchema = z.number().describe('degrees Celsius');
/** A temperature that may be unknown (a sensor that cannot be read is null, never a made-up number). */
export const MaybeCelsiusSchema = CelsiusSchema.nullable();

export const PercentSchema = z.number().min(0).max(100);
