/**
 * `lookout/core/host`: what the hosts (lookout-edge, lookout-hub, the operator CLI) use of the SDK beyond
 * `lookout/core`: the loader and supervisor, the tool registry, layer and image files, the logger's
 * factory. A plugin imports `lookout/core` only; the boundary rule refuses this entry in a plugin.
 */
export { BusHealth, BusPort, MessageHandler, OutboxStats, PublishOptions } from './bus/bus-port.js';
export { MemoryBus } from './bus/memory-bus.js';
export { RouteRegistry } from './hub-routes/route-registry.js';
export { firstPartyPlugins } from './images/first-party-plugins.js';
export { importPlugin, loadImage, readImage } from './images/load-image.js';
export { MAX_REQUEST_JSON_DEPTH } from './json/json-depth.js';
export { applyLayer, layerEnvPath, selectLayer } from './layers/layer-env.js';
export { LAYERS, LAYER_KEY, isLayerEnabled } from './layers/layers.js';
export { unknownEnvKeys } from './layers/unknown-keys.js';
export { createLogger } from './log/logger.js';
export { LogRing } from './log/log-ring.js';
export { LoadedRuntime, loadPlugins } from './plugin/loader.js';
export { declaredKeys, parsePluginConfig } from './plugin/plugin-config.js';
export { RestartPolicy } from './plugin/plugin-supervisor.js';
export { toolInputJsonSchema, toolOutputJsonSchema } from './tools/tool-json-schema.js';
export { ToolRegistry } from './tools/tool-registry.js';
export { toolFailure, toolSuccess } from './tools/tool-result.js';
