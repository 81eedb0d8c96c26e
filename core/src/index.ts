/**
 * The public surface of Lookout's core (`lookout/core`): what a third-party plugin may import.
 * Anything not exported here is internal and may change without notice.
 */
export {
  /** zod, re-exported so that a plugin's schemas use the same zod (v4) as the core that checks them. */
  z,
} from 'zod';
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
export { resolveLayer, layersUpTo } from './layers/layers.js';
export { parseEnv } from './layers/env-file.js';
export { devicePath, DEVICE_PATHS } from './paths/device-path.js';
export { toLookoutError } from './errors/lookout-error.js';
export type {
  /** pino's logger, the type of `ctx.log`. */
  Logger,
} from './log/logger.js';
export { LastWillToken, type LastWill } from './plugin/last-will.js';
export {
  deviceInfo,
  surfacePort,
  type DeviceInfo,
  type AutomationEntry,
  type PluginReport,
  type PluginRestart,
  type PluginState,
} from './plugin/device-info.js';
export { packageRoot, packageVersion } from './paths/package-root.js';
export { writeFileAtomic } from './paths/atomic-write.js';
export { setOwn } from './json/own-key.js';
export { isObject } from './json/is-object.js';
export { reply, isRouteReply, ROUTE_REPLY, type TaggedRouteReply } from './hub-routes/route-reply.js';
export type { RouteEntry } from './hub-routes/route-registry.js';
export { TOOL_LIMITS, MAX_TOOL_MESSAGE_BYTES, argumentBytes } from './tools/tool-limits.js';
export { TOOL_ERROR_META_KEY, toolOutcomeOf, isToolCallAnswer, type ToolCallAnswer, type ToolOutcome } from './tools/tool-result.js';
export { jsonDeeperThan } from './json/json-depth.js';
export { recordingsRoot } from './paths/recordings-root.js';
export { PEER_DIRECTORY_FILTER } from './bus/peer-directory.js';
