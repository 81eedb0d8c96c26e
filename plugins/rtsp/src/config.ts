import { z } from 'lookout/core';

/** Keys of the RTSP plugin. ONVIF_USER / ONVIF_PASSWORD are the ONVIF plugin's credentials: one sign-in for the whole camera surface. */
export const RtspConfigSchema = z.object({
  ONVIF_USER: z.string().min(1).max(64).default('admin').describe('user name RTSP clients sign in with (Digest), as for ONVIF'),
  ONVIF_PASSWORD: z.string().min(1).max(256).optional().describe('RTSP Digest password (the ONVIF one); unset: no credentials, loopback only'),
  RTSP_H264: z.enum(['on', 'off']).default('on').describe('on: also serve /preview_h264 (the encoder adds an H.264 output to its run); off: H.265 only'),
  RTSP_MAX_SESSIONS: z.coerce.number().int().min(1).max(256).default(16).describe('RTSP sessions at once; a SETUP beyond gets 453'),
  RTSP_MAX_CONNECTIONS: z.coerce
    .number()
    .int()
    .min(2)
    .max(4096)
    .optional()
    .describe('TCP connections at once, in all; unset: two per session and eight more for clients that only ask (OPTIONS, DESCRIBE)'),
  RTSP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1)
    .max(4096)
    .default(8)
    .describe('TCP connections at once from one remote address (kept below the total, so one address cannot lock the others out)'),
  RTSP_PRE_SESSION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(10_000)
    .describe(
      'how long a connection may stay without a session (idle, or sending a request slowly) before it is closed; time the server spends answering does not count',
    ),
  RTSP_MAX_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(64 * 1024 * 1024)
    .default(2 * 1024 * 1024)
    .describe('bytes a TCP viewer may lag behind (unsent in its socket) before it is dropped'),
  RTSP_SESSION_TIMEOUT_S: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .describe(
      'a session with no request (keep-alives included) and no RTCP from its client for this long ends (a TCP viewer that reads all it is sent counts as seen); announced as the Session timeout',
    ),
  RTSPS: z
    .enum(['auto', 'on', 'off'])
    .default('auto')
    .describe(
      'RTSPS (RTSP over TLS with the device certificate, same sign-in, RTP interleaved only) beside RTSP. auto: when RTSP listens beyond loopback and the device has its certificate; on: on loopback too; off: RTSP only',
    ),
  RTSPS_HANDSHAKE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe('an RTSPS connection that has not finished its TLS handshake by then is closed'),
  RTSP_MAX_PAYLOAD_BYTES: z.coerce.number().int().min(256).max(8192).default(1400).describe('largest RTP payload (UDP: keep the packet under the path MTU)'),
  RTSP_FIRST_KEYFRAME_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(10_000)
    .describe('how long DESCRIBE waits for the first keyframe (its parameter sets go into the SDP) before 503'),
});
export type RtspConfig = z.output<typeof RtspConfigSchema>;
