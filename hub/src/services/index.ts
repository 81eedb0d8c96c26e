/** `lookout/hub`: the services the hub host gives its plugins (info, metrics, routes, state, shared state across replicas). */
export * from './hub-services.js';
/** The spec's hub port, which the operator's commands default to as well. */
export { DEFAULT_HUB_PORT } from '../hub-options.js';
/** The hub's HTTP composition (error bodies, bearer check, body limits, metrics), which the builder host serves its routes with too. */
export { createHubApp } from '../http/create-app.js';
export { answerClientError } from '../http/client-error.js';
export { HubMetrics } from '../hub-metrics.js';
