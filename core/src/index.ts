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
export type { PluginManifest, TopicDecl, ToolDecl, RouteDecl, LayerId, HttpMethod } from './plugin/manifest.js';
export { LAYER_IDS } from './plugin/manifest.js';
export { serviceToken, type ServiceToken } from './plugin/service-token.js';
export { CORE_VERSION } from './plugin/core-version.js';
export { LookoutError, isLookoutError, type ErrorBody } from './errors/lookout-error.js';
export { ERROR_CODES, type ErrorCode } from './errors/codes.js';
export { redactSecrets } from './log/logger.js';
export { topicMatches } from './bus/bus-port.js';
export * from './contracts/index.js';
export { resolveLayer, layersUpTo } from './layers/layers.js';
export { parseEnv } from './layers/env-file.js';
export { devicePath, DEVICE_PATHS } from './paths/device-path.js';
