// The OpenAPI generator from route manifests, for other hosts that compose their HTTP surface the same way (the builder).
export { buildOpenApi, type OpenApiInfo } from './build-openapi.js';
