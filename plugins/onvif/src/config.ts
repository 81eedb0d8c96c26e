import { z } from 'lookout/core';

/** Keys of the ONVIF plugin. */
export const OnvifConfigSchema = z.object({
  ONVIF_USER: z.string().min(1).max(64).default('admin').describe('user name ONVIF clients sign in with'),
  /**
   * The ONVIF password (WS-Security UsernameToken digest and HTTP Digest). Without one the surface
   * answers without credentials and listens on loopback only.
   */
  ONVIF_PASSWORD: z.string().min(1).max(256).optional().describe('ONVIF password; unset: no credentials, loopback only'),
  ONVIF_HTTPS: z
    .enum(['auto', '1', '0'])
    .default('auto')
    .describe(
      'the ONVIF services over HTTPS too, with the device certificate, beside HTTP (auto: when the certificate and key are there; 1: required; 0: off)',
    ),
  ONVIF_HTTPS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('HTTPS port of the ONVIF services (default 443; a free one under --source sim)'),
  ONVIF_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .max(4 * 1024 * 1024)
    .default(256 * 1024)
    .describe('largest SOAP request body; more is refused with a fault (413)'),
  ONVIF_PREAUTH_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024)
    .default(16 * 1024)
    .describe('largest body read from a request its headers did not authenticate (no or a wrong HTTP Digest); more is 401 unread'),
  ONVIF_PREAUTH_MAX_ELEMENTS: z.coerce
    .number()
    .int()
    .min(16)
    .max(100_000)
    .default(512)
    .describe('most XML elements parsed from a request its headers did not authenticate; more is 401 unparsed'),
  ONVIF_PREAUTH_BODY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(5000)
    .describe('time a request its headers did not authenticate has to send its body; then the connection is closed'),
  ONVIF_REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(600_000)
    .default(30_000)
    .describe('time any request has to arrive whole (headers and body); then 408 and the connection is closed'),
  ONVIF_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(500).max(60_000).default(10_000).describe('time a request has to send its headers'),
  ONVIF_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(10_000).default(128).describe('open ONVIF connections in all; more are closed at once'),
  ONVIF_MAX_CONNECTIONS_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(16)
    .describe('open ONVIF connections from one remote address; more are closed at once'),
  ONVIF_CLOCK_SKEW_S: z.coerce.number().int().min(5).max(86_400).default(300).describe('how far a UsernameToken Created may be from the device clock'),
  ONVIF_NONCE_CACHE: z.coerce.number().int().min(64).max(1_000_000).default(10_000).describe('UsernameToken nonces remembered to refuse replays'),
  ONVIF_TOKEN_REPEAT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(5000)
    .default(1000)
    .describe(
      'how long the same UsernameToken may be sent again from the address that first used it (libonvif signs requests sent in one millisecond alike); 0 refuses every repeat',
    ),
  ONVIF_SNAPSHOT_CONCURRENCY: z.coerce.number().int().min(1).max(8).default(1).describe('snapshot decodes at once'),
  ONVIF_SNAPSHOT_QUEUE: z.coerce.number().int().min(0).max(64).default(4).describe('snapshot requests waiting for a decode; more get 503'),
  ONVIF_SNAPSHOT_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(8000).describe('one snapshot: waiting plus decoding'),
  ONVIF_MAX_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(256).default(16).describe('event pull-point subscriptions at once'),
  ONVIF_MAX_SUBSCRIPTIONS_PER_CLIENT: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(4)
    .describe('event pull-point subscriptions one client (user and remote address) may hold at once'),
  ONVIF_NOTIFY_NETWORKS: z
    .string()
    .max(1024)
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'an IPv4 CIDR such as 10.0.0.0/8')).max(16))
    .describe('IPv4 networks (comma-separated CIDRs) Notify may be sent to beside loopback and the networks of the device interfaces'),
  ONVIF_NOTIFY_RETRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe('Notify tries after a failed one, per batch of messages; then the batch is dropped'),
  ONVIF_NOTIFY_RETRY_DELAY_MS: z.coerce.number().int().min(10).max(60_000).default(500).describe('delay before the first Notify retry, doubled at each'),
  ONVIF_NOTIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000).describe('one Notify POST to a consumer'),
});
export type OnvifConfig = z.output<typeof OnvifConfigSchema>;
