/**
 * The one table of error codes. Every failure the runtime, the hub or a plugin reports carries one
 * of these codes; the hub turns it into `{ error: { code, message, details? } }` with `status`.
 * Codes are lower snake_case like the spec's own (`live_jpeg_unavailable_mcp_and_ssh_failed`).
 */
export const ERROR_CODES = {
  // plugin contract and loader
  plugin_manifest_invalid: { status: 500, message: 'a plugin manifest is invalid' },
  plugin_dependency_missing: { status: 500, message: 'a plugin depends on a plugin that is not loaded' },
  plugin_dependency_cycle: { status: 500, message: 'plugins depend on each other in a cycle' },
  plugin_conflict: { status: 500, message: 'two plugins claim the same topic, tool, route or service' },
  plugin_start_timeout: { status: 500, message: 'a plugin did not start in time' },
  plugin_start_failed: { status: 500, message: 'a plugin failed to start' },
  plugin_stop_failed: { status: 500, message: 'a plugin failed to stop cleanly' },
  plugin_not_found: { status: 500, message: 'an image names a plugin that cannot be found' },
  plugin_core_incompatible: { status: 500, message: 'a plugin needs another version of the core' },
  topic_not_declared: { status: 500, message: 'a plugin published to a topic it did not declare' },
  tool_not_declared: { status: 500, message: 'a plugin registered a tool it did not declare' },
  route_not_declared: { status: 500, message: 'a plugin handled a route it did not declare' },
  service_not_declared: { status: 500, message: 'a plugin used or provided a service it did not declare' },
  service_unavailable: { status: 503, message: 'a service is not available: its plugin is not running' },
  dependency_failed: { status: 503, message: 'a plugin was skipped because a plugin it needs failed' },
  plugin_unknown: { status: 404, message: 'no plugin of that name on this device' },
  plugin_not_restartable: { status: 409, message: 'the plugin is running, or cannot start while a plugin it needs has failed' },
  plugin_restart_backoff: { status: 429, message: 'the plugin failed again recently; retry after the backoff' },
  plugin_failed: { status: 503, message: 'the plugin that serves this failed' },
  subscription_not_declared: { status: 500, message: 'a plugin subscribed to a topic it did not declare' },
  message_invalid: { status: 400, message: 'a message does not match its wire contract' },
  // configuration
  layer_unknown: { status: 400, message: 'unknown configuration layer' },
  config_invalid: { status: 400, message: 'a configuration key has an invalid value' },
  env_file_invalid: { status: 400, message: 'an env file cannot be parsed' },
  image_invalid: { status: 400, message: 'a device image file is invalid' },
  // tools
  tool_unknown: { status: 404, message: 'no such tool' },
  tool_arguments_invalid: { status: 400, message: 'tool arguments are invalid' },
  tool_failed: { status: 500, message: 'the tool failed' },
  tool_output_invalid: { status: 500, message: "a tool's result does not match its declared output schema" },
  // models and packages
  model_package_invalid: { status: 400, message: 'a model package cannot be read' },
  model_shape_mismatch: { status: 400, message: 'export, compile and runtime input shapes disagree' },
  model_class_map_unmapped: { status: 400, message: 'model classes are not mapped to production ids' },
  backend_unavailable: { status: 501, message: 'this inference back-end is not available here' },
  // hub HTTP surface
  bad_request: { status: 400, message: 'the request is invalid' },
  unauthorized: { status: 401, message: 'a valid bearer token is required' },
  forbidden: { status: 403, message: 'not allowed' },
  not_found: { status: 404, message: 'no such route' },
  method_not_allowed: { status: 405, message: 'the route does not accept this method' },
  unsupported_media_type: { status: 415, message: 'the request body must be JSON' },
  target_not_allowed: { status: 403, message: 'the target announced no address inside the allowed device networks' },
  target_unknown: { status: 404, message: 'the target is not a registered device' },
  payload_too_large: { status: 413, message: 'the request body is too large' },
  device_unreachable: { status: 502, message: 'the device could not be reached' },
  device_timeout: { status: 504, message: 'the device did not answer in time' },
  live_jpeg_unavailable_mcp_and_ssh_failed: {
    status: 503,
    message: 'no snapshot: the tool server and SSH both failed',
  },
  // message bus (MQTT client and embedded broker)
  bus_unreachable: { status: 503, message: 'the message broker could not be reached' },
  bus_auth_refused: { status: 503, message: 'the message broker refused the credentials' },
  bus_closed: { status: 503, message: 'the bus connection is closed' },
  bus_publish_failed: { status: 503, message: 'the broker did not accept a publish' },
  bus_subscribe_refused: { status: 503, message: 'the broker refused a subscription' },
  bus_topic_invalid: { status: 400, message: 'an MQTT topic or topic filter is invalid' },
  broker_start_failed: { status: 500, message: 'the embedded broker could not start' },
  device_id_reserved: { status: 400, message: "the id is reserved for the hub's and the operator's own bus clients" },
  // algorithms (tracker, fusion, governor)
  argument_invalid: { status: 400, message: 'a function was given an invalid argument' },
  internal: { status: 500, message: 'internal error' },
  // tool calls (limits, device credentials)
  tool_not_found: { status: 404, message: 'the device has no tool of that name' },
  device_busy: { status: 429, message: 'the device has as many tool calls running and waiting as it takes; retry later (the call did not run)' },
  device_auth_refused: { status: 502, message: 'the device refused the credential sent to its tool server' },
  device_tls_mismatch: {
    status: 502,
    message:
      "the device's TLS certificate is not the one the hub trusts for it (not of the fleet CA, naming another device, or not the fingerprint it announced)",
  },
  // configuration layers
  tool_disabled_at_layer: { status: 409, message: 'the tool belongs to a plugin the active configuration layer leaves off' },
  // device commands and health
  command_invalid: { status: 400, message: 'a command on the bus is invalid' },
  storage_unmeasurable: { status: 503, message: 'the recordings storage cannot be measured' },
  // video: recordings, playback, live stream and SSH fallbacks
  recording_not_found: { status: 404, message: 'no such recording chunk on the device' },
  recording_unreadable: { status: 422, message: 'the recording chunk is truncated or corrupt and cannot be played' },
  recordings_unavailable: { status: 502, message: 'recordings could not be listed: the tool server and SSH both failed' },
  transcode_failed: { status: 502, message: 'the recording could not be turned into an mp4' },
  range_not_satisfiable: { status: 416, message: 'the requested byte range is outside the file' },
  signed_url_expired: { status: 401, message: 'the signed URL has expired; ask the hub for a new one' },
  signed_url_invalid: { status: 403, message: 'the URL signature does not match its method, path and query (forged, altered, or made for another clip)' },
  live_stream_unavailable: { status: 503, message: 'the device has no live video right now' },
  encoder_unavailable: { status: 503, message: 'the encoder is not running' },
  ssh_not_configured: { status: 503, message: 'no SSH credentials are configured for devices (DEVICE_PASSWORD or a key file)' },
  ssh_host_key_unknown: { status: 502, message: 'the device presented an SSH host key that is not pinned in the known-hosts file' },
  ssh_host_key_changed: { status: 502, message: 'the device presented an SSH host key other than the pinned one' },
  ssh_auth_failed: { status: 502, message: 'the device refused the SSH credentials' },
  ssh_failed: { status: 502, message: 'the SSH connection or command failed' },
  log_not_found: { status: 404, message: 'no such log file (or logs folder) on the device' },
  ssh_timeout: { status: 504, message: 'the device did not answer over SSH in time' },
  // operator CLI over SSH (lookout apply-layer, push-models, deploy, soak-gate)
  device_storage_full: { status: 507, message: 'the device has not enough free space for the copy' },
  transfer_corrupt: { status: 502, message: 'the copy on the device does not match the local file (SHA-256)' },
  device_not_back: { status: 504, message: 'the device did not report back with the expected hello after a restart' },
  deploy_rolled_back: { status: 502, message: 'the new release did not come up; the previous one was restored' },
  soak_gate_failed: { status: 409, message: 'the soak gate failed: temperature or encoder growth out of bounds' },
  bundle_invalid: { status: 400, message: 'a release bundle cannot be read' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A core error code (a key of ERROR_CODES). */
export type ErrorCode = keyof typeof ERROR_CODES;
