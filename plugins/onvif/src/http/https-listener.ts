import { LookoutError, type PluginContext } from 'lookout/core';
import { readServedPair, reloadOnSighup, type ServedPair } from 'lookout/lib/tls';
import { OnvifServer, type OnvifServerOptions } from './onvif-server.js';

export interface OnvifHttpsOptions {
  /** ONVIF_HTTPS: '1' requires it, 'auto' serves it when the device certificate is there, '0' never. */
  mode: string;
  port: number;
  certPath: string;
  keyPath: string;
  server: Omit<OnvifServerOptions, 'port'>;
}

/**
 * The ONVIF services over HTTPS with the device certificate (the identity plugin's, the one a client
 * pins from GetDeviceInformation's HardwareId), beside HTTP (clients that need HTTP keep it), Digest
 * as on HTTP. Reloads the certificate on SIGHUP (the operator's, after `lookout certs --renew`).
 * Resolves to the port it listens on, or undefined when it does not run.
 */
export async function startOnvifHttps(ctx: Pick<PluginContext, 'log' | 'onStop'>, o: OnvifHttpsOptions): Promise<number | undefined> {
  if (o.mode === '0') return undefined;
  let first: ServedPair;
  try {
    first = await readServedPair(o.certPath, o.keyPath);
  } catch (err) {
    const reason = (err as Error).message;
    if (o.mode === '1') throw new LookoutError('config_invalid', `ONVIF_HTTPS=1: ${reason}`, { details: { key: 'ONVIF_HTTPS', cert: o.certPath } });
    ctx.log.info({ cert: o.certPath }, `ONVIF over HTTPS off: ${reason}`);
    return undefined;
  }
  const secure = new OnvifServer({ ...o.server, port: o.port, tls: { cert: first.cert, key: first.key } });
  const port = await secure.listen();
  ctx.onStop(() => secure.close());
  ctx.onStop(reloadOnSighup(secure, o, first, ctx.log, 'ONVIF HTTPS'));
  return port;
}
