import { DEVICE_CALL_ERRORS } from 'lookout/core';
import { DEVICE_SSH_ERRORS } from '../../device-ssh/src/service.js';

/**
 * What finding and fetching a device's recording may answer (chunk-discovery.ts, chunk-fetcher.ts,
 * recordings-access.ts): the device's tool server and HTTP, then SSH; the routes that serve chunks
 * declare them (OpenAPI).
 */
export const MEDIA_FETCH_ERRORS: readonly string[] = [
  ...DEVICE_CALL_ERRORS,
  ...DEVICE_SSH_ERRORS,
  'tool_failed',
  'recording_unreadable',
  'recordings_unavailable',
  'payload_too_large',
];
