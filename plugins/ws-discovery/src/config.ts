import { z } from 'zod';

/** Keys of the ws-discovery plugin. */
export const WsDiscoveryConfigSchema = z.object({
  WS_DISCOVERY_DEDUP_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(10_000)
    .describe('a Probe MessageID seen again within this window is not answered again (clients send each probe up to 3 times)'),
  WS_DISCOVERY_MAX_DATAGRAM_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(65_507)
    .default(16_384)
    .describe('datagrams larger than this are dropped unread (a Probe is well under 2 KiB)'),
  WS_DISCOVERY_SOURCE_RATE: z.coerce
    .number()
    .min(0.01)
    .max(10_000)
    .default(5)
    .describe('datagrams per second read from one sender address (a burst of four times as many first); the rest are dropped unread'),
  WS_DISCOVERY_ANSWER_RATE: z.coerce
    .number()
    .min(0.01)
    .max(100_000)
    .default(50)
    .describe('ProbeMatches per second sent in all (a burst of four times as many first): forged senders cannot turn the device into an amplifier'),
  WS_DISCOVERY_LOCATION: z
    .string()
    .regex(/^[\w.~-]+$/, 'letters, digits, . _ ~ -')
    .optional()
    .describe('the onvif://www.onvif.org/location/… scope (default: the camera label), when the ONVIF scopes carry none'),
});
export type WsDiscoveryConfig = z.infer<typeof WsDiscoveryConfigSchema>;
