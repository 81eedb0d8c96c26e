/** `lookout/lib/auth`: Fleet authentication shared by hosts and plugins: the fleet secret and the keys derived from it (mesh, A2A, signed URLs, tool tokens), device credentials, HTTP Digest (server and client) and request signatures. */
export * from './a2a-signature.js';
export * from './bus-acl.js';
export * from './device-bus-credentials.js';
export * from './device-credentials.js';
export * from './fleet-keys.js';
export * from './fleet-secret.js';
export * from './http-digest-client.js';
export * from './http-digest-server.js';
export * from './mosquitto-password.js';
export * from './signed-url.js';
export * from './tool-token.js';
