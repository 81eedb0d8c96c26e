/** `lookout/hub`: the services the hub host gives its plugins (info, metrics, routes, state, shared state across replicas). */
export * from './hub-services.js';
/** The spec's hub port, which the operator's commands default to as well. */
export { DEFAULT_HUB_PORT } from '../hub-options.js';
