import { z } from 'zod';
import { definePlugin, isLookoutError, type RouteRequest } from 'lookout/core';
import { PeerHelloAckSchema } from 'lookout/core/contracts';
import { HUB_SHARED } from 'lookout/hub';
import { hubTlsPaths } from 'lookout/lib/tls';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { A2A_ERRORS, a2aError } from './a2a-errors.js';
import { a2aKey } from './a2a-key.js';
import { busyReply } from './busy-reply.js';
import { HubClientMaterial } from './client-material.js';
import { HubPeerQueries } from './peer-queries.js';
import { A2A_PEERS } from './service.js';
import { SIGN_ROUTE_SIGNER, SignBody, SignResponse, signDescribedRequest, type SignInput } from './sign-request.js';
import { claimNonce, DEFAULT_NONCES_PER_SIGNER, verifySignedRequest } from './signed-request.js';

const QUERY_PATH = '/a2a/query';

const PeerQuery = z.object({
  q: z.enum(['peer_hello']).describe('the peer query: peer_hello (the target’s sidecar acknowledges the hub)'),
  target: z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary": a registered device'),
});

const QueryResponse = PeerHelloAckSchema.extend({
  target: z.string().describe('the target as asked'),
  rtt_ms: z.number().nonnegative().describe('from the hub dialling the sidecar to its answer (mutual TLS handshake included)'),
  sidecar: z.string().describe('the sidecar address the hub reached (host:port)'),
  tls_fingerprint: z
    .string()
    .describe('SHA-256 fingerprint (colon hex) of the certificate the sidecar presented to the hub over TLS; cert_fingerprint is what the device says'),
});

/**
 * Signed peer queries (docs/a2a.md). POST /a2a/sign gives a bearer-
 * authenticated client the signature headers for a request to an A2A route (and nothing else);
 * POST /a2a/query needs no bearer token but an HMAC-SHA256 signature (verified in constant time,
 * within the timestamp window), then the target (registered, contactable, a sidecar announced) and
 * the hub's certificate are checked, and only then is its nonce claimed once in HUB_SHARED, within
 * its signer's bound, so that every replica refuses a replay and queries that would fail anyway
 * take no place in the cache (a 503/429 with Retry-After when it cannot be claimed); it is forwarded
 * to the target device's sidecar over mutual TLS with the hub's certificate of the fleet CA.
 */
export default definePlugin({
  name: 'a2a',
  version: '1.0.0',
  core: '^1',
  description: 'Signed peer queries: POST /a2a/sign, POST /a2a/query (HMAC-SHA256, forwarded to the target’s mTLS sidecar)',
  requires: [DEVICE_REGISTRY, HUB_SHARED],
  optionalRequires: [DEBUG_RING],
  provides: [A2A_PEERS],
  config: z.object({
    /** The fleet's A2A signing key (at least 16 characters); without it the key derives from the fleet secret. Never logged. */
    A2A_HMAC_KEY: z.string().min(16).optional(),
    /** The hub sets it; the A2A key derives from it when A2A_HMAC_KEY is not set. */
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
    /** A peer query (dial, handshake, answer) may take this long. */
    A2A_PEER_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
    /** Live nonces (600 s each) one signer may hold: a signer's flood is refused (429 a2a.signer_busy) for that signer only. */
    A2A_NONCES_PER_SIGNER: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_NONCES_PER_SIGNER),
  }),
  errors: [...A2A_ERRORS],
  routes: [
    {
      method: 'POST',
      path: '/a2a/sign',
      errors: ['no_key'],
      summary:
        'The signature headers (X-Lookout-Timestamp, X-Lookout-Nonce, X-Lookout-Signature, X-Lookout-Key-Id) for a request {method, path, query, body} to an A2A route (POST /a2a/query; anything else is 400), with the canonical string signed',
      body: SignBody,
      response: SignResponse,
    },
    {
      method: 'POST',
      path: QUERY_PATH,
      errors: [...A2A_ERRORS.map((e) => e.code), 'target_unknown', 'target_not_allowed'],
      summary:
        'A signed peer query (HMAC-SHA256 headers, no bearer token): the hub verifies it, checks the target, claims the nonce and forwards it to the target’s sidecar over mutual TLS; answers the peer’s acknowledgement. Each bad signature is its own 401 (a2a.signature_*); a signer over its nonce bound is 429 a2a.signer_busy, a nonce the hub cannot record (cache full, Redis down) 503 a2a.busy, both with Retry-After',
      query: PeerQuery,
      response: QueryResponse,
      public: true,
      rawBody: true,
    },
  ],
  start(ctx) {
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const shared = ctx.services.get(HUB_SHARED);
    const ring = ctx.services.optional(DEBUG_RING);
    const key = a2aKey(ctx.config);
    const material = new HubClientMaterial(hubTlsPaths(ctx.runtime.dataDir), () => ctx.clock.now());
    const peers = new HubPeerQueries({ material, timeoutMs: ctx.config.A2A_PEER_TIMEOUT_MS, ring });
    ctx.services.provide(A2A_PEERS, peers);
    if (key === null) ctx.health.set('degraded', 'no A2A key: set A2A_HMAC_KEY (or the fleet secret); signed queries are refused');
    const signingKey = (): string => {
      if (key === null) throw a2aError('no_key', 'the hub has no A2A key: set A2A_HMAC_KEY, or give the hub its fleet secret');
      return key;
    };
    const problem = peers.problem();
    if (problem) ctx.log.warn({ problem }, 'the hub cannot make peer queries until it has a client certificate of the fleet CA');

    ctx.routes.handle<unknown, SignInput>('POST', '/a2a/sign', ({ body }) => signDescribedRequest(signingKey(), body, ctx.clock.now(), SIGN_ROUTE_SIGNER));

    ctx.routes.handle<z.output<typeof PeerQuery>>('POST', QUERY_PATH, async (req: RouteRequest<z.output<typeof PeerQuery>>) => {
      const verified = verifySignedRequest(
        { key: signingKey(), now: () => ctx.clock.now() },
        { method: 'POST', path: QUERY_PATH, query: req.rawQuery ?? req.query, body: req.rawBody ?? Buffer.alloc(0) },
        req.headers,
      );
      // What would refuse the query anyway is checked before its nonce takes a place in the cache:
      // signed queries for a device that does not exist (or is not contacted) cannot fill it.
      const device = registry.resolve(req.query.target);
      peers.check(device);
      try {
        await claimNonce({ shared, noncesPerSigner: ctx.config.A2A_NONCES_PER_SIGNER }, verified);
      } catch (err) {
        if (!isLookoutError(err, 'a2a.busy') && !isLookoutError(err, 'a2a.signer_busy')) throw err;
        ctx.log.warn({ code: err.code, details: err.details }, err.message);
        return busyReply(err);
      }
      const ack = await peers.peerHello(device, req.signal);
      return { ...ack, target: req.query.target };
    });
  },
});
