import { serviceToken } from './service-token.js';

/**
 * The message the broker publishes for the device when its connection drops without a goodbye
 * (DESIGN.md: a valid status message with state offline, retained). The plugin that owns the topic
 * provides it; the runtime reads it after the plugins started and before it connects.
 */
export interface LastWill {
  /** Topic suffix under `devices/<id>/`. */
  suffix: string;
  /** The payload as of the moment of connecting. */
  payload(): unknown;
  qos: 0 | 1;
  retain: boolean;
}

/** The service through which the plugin that owns the status topic provides the last will. */
export const LastWillToken = serviceToken<LastWill>('device-last-will');
