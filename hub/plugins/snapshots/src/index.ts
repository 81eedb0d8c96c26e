import { z } from 'zod';
import { DeviceTlsAgents, fleetCaDeviceTls, hubTlsPaths } from 'lookout/lib/tls';
import { LIVE_JPEG_LIMITS, queryInteger } from 'lookout/core/contracts';
import { definePlugin, reply, setOwn } from 'lookout/core';
import { deviceToolToken } from 'lookout/lib/auth';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_SSH } from '../../device-ssh/src/service.js';
import { DEVICE_REGISTRY, type RegisteredDevice } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { devicesOf, snapshotsOf, type DeviceSnapshotResult } from './fleet-snapshots.js';
import { LiveTail } from './live-tail.js';
import { LiveTails } from './live-tails.js';
import { runChain, type SnapshotStep } from './snapshot-chain.js';
import { snapshotOverSsh } from './ssh-step.js';
import { snapshotFromTail } from './tail-step.js';
import { snapshotFromTool } from './tool-step.js';
import type { Snapshot } from './snapshot-types.js';

const L = LIVE_JPEG_LIMITS;
const Width = queryInteger(L.minWidth, L.maxWidth).default(L.defaultWidth).describe(`width in pixels (${L.minWidth}-${L.maxWidth})`);
const Quality = queryInteger(L.minQuality, L.maxQuality).default(L.defaultQuality).describe(`JPEG quality (${L.minQuality}-${L.maxQuality})`);

const SnapshotQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary"'),
  w: Width,
  q: Quality,
});

const FleetQuery = z.object({
  shadow: z.string().min(1).max(128).optional().describe('role label of the devices; all devices without it'),
  w: Width,
  q: Quality,
});

const DeviceSnapshotSchema = z.union([
  z.object({
    ok: z.literal(true),
    source: z.enum(['tool', 'live_tail', 'ssh']),
    content_type: z.literal('image/jpeg'),
    jpeg_base64: z.string(),
    bytes: z.number().int(),
    captured_at: z.string().nullable(),
  }),
  z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
]);

const FleetResponse = z.object({
  shadow: z.string().nullable(),
  device_count: z.number().int(),
  ok_count: z.number().int(),
  left_out: z.number().int().describe('devices of the label past LOOKOUT_HUB_SNAPSHOT_FLEET_MAX_DEVICES (by id), not taken'),
  devices: z.record(z.string(), DeviceSnapshotSchema),
  generated_at: z.string(),
});

/**
 * GET /stream/snapshot: a JPEG from the device's get_live_jpeg tool; else from the hub's tail of the
 * device's live H.265 stream; else from the newest chunk over SSH; else 503
 * live_jpeg_unavailable_mcp_and_ssh_failed (spec 01). GET /fleet/snapshots: one per device of a label.
 */
export default definePlugin({
  name: 'snapshots',
  version: '1.0.0',
  core: '^1',
  description: 'Snapshots (GET /stream/snapshot, GET /fleet/snapshots): device tool, then the hub\u2019s live H.265 tail, then SSH',
  requires: [DEVICE_REGISTRY, DEBUG_RING, DEVICE_TOOLS],
  optionalRequires: [DEVICE_SSH],
  config: z.object({
    /** How long the device's get_live_jpeg may take before the next step is tried. */
    LOOKOUT_HUB_SNAPSHOT_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(5000),
    /** Live tails kept open at once (each holds one connection and one GOP). */
    LOOKOUT_HUB_SNAPSHOT_TAILS: z.coerce.number().int().min(0).max(1024).default(16),
    /** A tail with no snapshot for this long is closed. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS: z.coerce.number().int().min(1000).max(86_400_000).default(120_000),
    /** How long a cold tail may take to its first keyframe before the SSH step. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_WARM_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(4000),
    /** The tail's newest picture must be this recent to serve. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_AGE_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
    /** Bound on one tail's GOP in memory. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(65_536)
      .max(256 * 1024 * 1024)
      .default(16 * 1024 * 1024),
    /** Reconnect delays of a tail: doubling from the first to the second. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MS: z.coerce.number().int().min(10).max(60_000).default(500),
    LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MAX_MS: z.coerce.number().int().min(10).max(600_000).default(15_000),
    /** A live connection silent this long is made again. */
    LOOKOUT_HUB_SNAPSHOT_TAIL_STALL_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    /** One ffmpeg decode of a GOP. */
    LOOKOUT_HUB_SNAPSHOT_DECODE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** The SSH step as a whole (listing, download, decode). */
    LOOKOUT_HUB_SNAPSHOT_SSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** The newest chunk is fetched over SSH only up to this size. */
    LOOKOUT_HUB_SNAPSHOT_SSH_MAX_CHUNK_BYTES: z.coerce
      .number()
      .int()
      .min(65_536)
      .max(4 * 1024 * 1024 * 1024)
      .default(128 * 1024 * 1024),
    /** GET /fleet/snapshots: snapshots taken at once, and devices per answer. */
    LOOKOUT_HUB_SNAPSHOT_FLEET_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    LOOKOUT_HUB_SNAPSHOT_FLEET_MAX_DEVICES: z.coerce.number().int().min(1).max(10_000).default(64),
    /** Devices' tool tokens derive from it; the live stream wants the same bearer as the tool server. */
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
  }),
  routes: [
    {
      method: 'GET',
      path: '/stream/snapshot',
      errors: ['target_unknown', 'target_not_allowed', 'live_jpeg_unavailable_mcp_and_ssh_failed'],
      summary:
        'JPEG of a device: its get_live_jpeg tool, else the hub\u2019s live H.265 tail, else the newest chunk over SSH (X-Lookout-Snapshot-Source says which); 503 live_jpeg_unavailable_mcp_and_ssh_failed when all fail',
      query: SnapshotQuery,
      produces: 'image/jpeg',
    },
    {
      method: 'GET',
      path: '/fleet/snapshots',
      summary: 'A JPEG (base64) per device of a role label, or of every device, taken a few at a time; a device that fails has its error instead',
      query: FleetQuery,
      response: FleetResponse,
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const ring = ctx.services.get(DEBUG_RING);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const secret = c.LOOKOUT_FLEET_SECRET;

    // A live stream over TLS is dialled trusting the fleet CA only, its certificate pinned to what the device announced.
    const agents = new DeviceTlsAgents(fleetCaDeviceTls(hubTlsPaths(ctx.runtime.dataDir).caPath));
    const tails = new LiveTails({
      max: c.LOOKOUT_HUB_SNAPSHOT_TAILS,
      idleMs: c.LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS,
      create: (deviceId, url, fingerprint) =>
        new LiveTail({
          deviceId,
          url,
          ...(url.startsWith('https:') ? { agent: agents.agentOf({ deviceId, fingerprint: fingerprint ?? null }), fingerprint: fingerprint ?? null } : {}),
          ...(secret !== undefined ? { token: deviceToolToken(secret, deviceId) } : {}),
          maxBytes: c.LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_BYTES,
          backoffMinMs: c.LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MS,
          backoffMaxMs: Math.max(c.LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MS, c.LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MAX_MS),
          stallMs: c.LOOKOUT_HUB_SNAPSHOT_TAIL_STALL_MS,
          onWarm: (reconnected) =>
            ring.record({
              kind: 'live/warm_ready',
              device_id: deviceId,
              message: `live tail of ${deviceId} has a keyframe${reconnected ? ' (reconnected)' : ''}`,
              details: { url, reconnected },
            }),
        }),
    });
    ctx.clock.setInterval(() => tails.sweep(), Math.min(10_000, Math.max(250, Math.floor(c.LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS / 4))));
    ctx.onStop(() => {
      tails.closeAll();
      agents.close();
    });

    const decodeTimeoutMs = c.LOOKOUT_HUB_SNAPSHOT_DECODE_TIMEOUT_MS;
    const steps: SnapshotStep[] = [
      { source: 'tool', run: (req) => snapshotFromTool(tools, req, c.LOOKOUT_HUB_SNAPSHOT_TOOL_TIMEOUT_MS) },
      ...(c.LOOKOUT_HUB_SNAPSHOT_TAILS > 0
        ? [
            {
              source: 'live_tail' as const,
              run: (req: Parameters<SnapshotStep['run']>[0]) =>
                snapshotFromTail(tails, req, {
                  warmTimeoutMs: c.LOOKOUT_HUB_SNAPSHOT_TAIL_WARM_TIMEOUT_MS,
                  maxAgeMs: c.LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_AGE_MS,
                  decodeTimeoutMs,
                }),
            },
          ]
        : []),
      {
        source: 'ssh',
        run: (req) =>
          snapshotOverSsh(ctx.services.optional(DEVICE_SSH), req, {
            maxChunkBytes: c.LOOKOUT_HUB_SNAPSHOT_SSH_MAX_CHUNK_BYTES,
            tailMaxBytes: c.LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_BYTES,
            timeoutMs: c.LOOKOUT_HUB_SNAPSHOT_SSH_TIMEOUT_MS,
            decodeTimeoutMs,
          }),
      },
    ];
    const take = (device: RegisteredDevice, width: number, quality: number, signal: AbortSignal): Promise<Snapshot> =>
      runChain(steps, { device, width, quality, signal }, ring);

    ctx.routes.handle<z.output<typeof SnapshotQuery>>('GET', '/stream/snapshot', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      const s = await take(device, query.w, query.q, signal);
      const headers: Record<string, string> = {
        'X-Lookout-Snapshot-Source': s.source,
        'X-Lookout-Device-Id': device.deviceId,
        'Cache-Control': 'no-store',
      };
      if (s.capturedAt) headers['X-Lookout-Captured-At'] = s.capturedAt;
      if (s.tail) headers['X-Lookout-Snapshot-Tail'] = s.tail;
      if (s.chunk) headers['X-Lookout-Snapshot-Chunk'] = s.chunk;
      return reply({ status: 200, body: s.jpeg, type: 'image/jpeg', headers });
    });

    ctx.routes.handle<z.output<typeof FleetQuery>>('GET', '/fleet/snapshots', async ({ query, signal }) => {
      const matching = devicesOf(registry.list(), query.shadow);
      const devices = matching.slice(0, c.LOOKOUT_HUB_SNAPSHOT_FLEET_MAX_DEVICES);
      const results = await snapshotsOf(devices, c.LOOKOUT_HUB_SNAPSHOT_FLEET_CONCURRENCY, (d) => take(d, query.w, query.q, signal));
      const out: Record<string, DeviceSnapshotResult> = {};
      for (const d of devices) setOwn(out, d.deviceId, results.get(d.deviceId)!);
      return {
        shadow: query.shadow ?? null,
        device_count: devices.length,
        ok_count: [...results.values()].filter((r) => r.ok).length,
        left_out: matching.length - devices.length,
        devices: out,
        generated_at: new Date().toISOString(),
      };
    });
  },
});
