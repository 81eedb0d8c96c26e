/**
 * The public surface of Lookout's core (`lookout/core`): what a third-party plugin may import.
 * Anything not exported here is internal and may change without notice.
 */
export { z } from 'zod';
export { definePlugin } from './plugin/context.js';
export type {
  Plugin,
  PluginContext,
  PluginInstance,
  PluginBus,
  PluginTools,
  PluginRoutes,
  PluginServices,
  PluginClock,
  PluginHealth,
  PluginPorts,
  RuntimeInfo,
  ToolHandler,
  RouteHandler,
  RouteRequest,
  RouteReply,
  HealthState,
} from './plugin/context.js';
export type { PluginManifest, PluginErrorDecl, TopicDecl, ToolDecl, RouteDecl, LayerId, HttpMethod } from './plugin/manifest.js';
export { LAYER_IDS } from './plugin/manifest.js';
export { serviceToken, type ServiceToken } from './plugin/service-token.js';
export { CORE_VERSION } from './plugin/core-version.js';
export { LookoutError, isLookoutError, type ErrorBody } from './errors/lookout-error.js';
export { ERROR_CODES, type ErrorCode } from './errors/codes.js';
export { errorTable, errorInfo, type AnyErrorCode, type PluginErrorCode, type ErrorTableEntry } from './errors/error-table.js';
export { ANY_ROUTE_ERRORS, BODY_ROUTE_ERRORS, DEVICE_CALL_ERRORS, routeErrorCode } from './errors/route-errors.js';
export { redactSecrets } from './log/logger.js';
export { topicMatches } from './bus/bus-port.js';
export { sampleFromMessages, type DeviceGaugeSample } from './metrics/device-gauges.js';
export * from './contracts/index.js';
export { resolveLayer, layersUpTo } from './layers/layers.js';
export { parseEnv } from './layers/env-file.js';
export { devicePath, DEVICE_PATHS } from './paths/device-path.js';
export { toLookoutError } from './errors/lookout-error.js';
export type { Logger } from './log/logger.js';
export { LastWillToken, type LastWill } from './plugin/last-will.js';
export { deviceInfo, surfacePort, type DeviceInfo, type PluginReport, type PluginState } from './plugin/device-info.js';
export { packageRoot, packageVersion } from './paths/package-root.js';
export { writeFileAtomic } from './paths/atomic-write.js';
export * from './ssh/index.js';
export { setOwn } from './json/own-key.js';
export { reply, isRouteReply, ROUTE_REPLY, type TaggedRouteReply } from './hub-routes/route-reply.js';
export type { RouteEntry } from './hub-routes/route-registry.js';
export { DeviceNetworks, unmapIpv4 } from './net/device-networks.js';
export { lanAddress } from './net/lan-address.js';
export { isLoopbackHost, isLoopbackHostHeader } from './net/is-loopback.js';
export {
  HUB_INFO,
  HUB_METRICS,
  HUB_ROUTES,
  HUB_STATE,
  HUB_SHARED,
  STATE_JSON,
  type SharedStateStatus,
  type ClaimOutcome,
  type ClaimHolder,
  type HubSharedState,
  type HubInfo,
  type HubMetricsPort,
  type HubRouteCatalog,
  type HubStateStore,
  type StateKeeper,
  type StateLoad,
} from './host/hub-services.js';
export { SerialQueue } from './util/serial-queue.js';
export { AdmissionQueue, type AdmissionLimits, type ReleaseSlot } from './util/admission-queue.js';
export { deviceToolToken, TOOL_TOKEN_PURPOSE } from './auth/tool-token.js';
export { TOOL_LIMITS, MAX_TOOL_MESSAGE_BYTES, argumentBytes } from './tools/tool-limits.js';
export { TOOL_ERROR_META_KEY, toolOutcomeOf, isToolCallAnswer, type ToolCallAnswer, type ToolOutcome } from './tools/tool-result.js';
export { seededRandom, hashSeed, type Random } from './util/seeded-random.js';
export { jsonDeeperThan } from './json/json-depth.js';
export * from './media/index.js';
export { sameSecret } from './auth/device-credentials.js';
export { DigestServer, parseDigestHeader } from './auth/http-digest-server.js';
export type { DigestServerOptions, DigestRequest, DigestVerdict } from './auth/http-digest-server.js';
export { recordingsRoot } from './paths/recordings-root.js';
export { parseRange, type ByteRange } from './net/byte-range.js';
export {
  isRecordingFileName,
  MAX_RECORDING_FILE_NAME_LENGTH,
  RECORDINGS_INDEX_FILES,
  RecordingFilesToken,
  type RecordingFiles,
} from './recordings/recording-files.js';
export { storageHealth, volumeUsage, type StorageThresholds, type VolumeUsage } from './storage/volume-usage.js';
export { mapBounded } from './util/map-bounded.js';
export { KeyedRateLimiter, type KeyedRateLimits } from './util/keyed-rate-limiter.js';
export { PEER_DIRECTORY_FILTER } from './auth/bus-acl.js';
export { checkIssuedBy, keyMatchesCertificate, commonNameOf, type CertificateCheck } from './tls/certificate-check.js';
export { createSelfSignedCertificate, type SelfSignedCertificate } from './tls/self-signed-lazy.js';
export { deviceTlsPaths, hubServerTlsPaths, hubTlsPaths, HUB_CERT_COMMON_NAME, type TlsPaths } from './tls/tls-paths.js';
export { certificateExpiry, expiryWarning, EXPIRY_WARNING_DAYS, type CertificateExpiry } from './tls/certificate-expiry.js';
export {
  checkDeviceCertificate,
  deviceTlsOptions,
  deviceTlsRefusalOf,
  fleetCaDeviceTls,
  DeviceTlsMismatchError,
  type DevicePin,
  type DeviceTlsRefusal,
} from './tls/device-pin.js';
export { DeviceTlsAgents } from './tls/device-agents.js';
export { decideSurfaceTransport, type SurfaceTlsOptions, type SurfaceTransport } from './tls/surface-transport.js';
export { readServedPair, reloadOnSighup, servedPairAtStart, SERVED_TLS_CONTEXT, type ServedPair } from './tls/served-pair.js';
export { fleetMeshKey, fleetA2aKey } from './auth/fleet-keys.js';
export { signedUrlKey, signUrl, verifySignedUrl, SIGNED_URL_MAX_TTL_S, SIGNED_URL_DEFAULT_TTL_S } from './auth/signed-url.js';
export {
  signA2a,
  verifyA2a,
  canonicalA2aString,
  canonicalQuery,
  a2aSignerKey,
  A2A_FLEET_SIGNER,
  A2A_HEADERS,
  A2A_SCHEME,
  A2A_WINDOW_S,
} from './auth/a2a-signature.js';
export type { A2aRequest, A2aHeaders, A2aRefusal, A2aVerdict } from './auth/a2a-signature.js';
export * from './native/index.js';
