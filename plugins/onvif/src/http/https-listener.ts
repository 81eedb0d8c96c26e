import { LookoutError, type PluginContext } from 'lookout/core';
import { readHttpsMaterial } from './https-material.js';
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
 * The ONVIF services over HTTPS with the device certificate, beside HTTP (clients that need HTTP
 * keep it), Digest as on HTTP. Reloads the certificate on SIGHUP (the operator's, after `lookout certs
 * --renew`). Resolves to the port it listens on, or undefined when it does not run.
 */
export async function startOnvifHttps(ctx: Pick<PluginContext, 'log' | 'onStop'>, o: OnvifHttpsOptions): Promise<number | undefined> {
  if (o.mode === '0') return undefined;
  const material = await readHttpsMaterial(o.certPath, o.keyPath);
  if (!material.ok && o.mode === '1') {
    throw new LookoutError('config_invalid', `ONVIF_HTTPS=1: ${material.reason}`, { details: { key: 'ONVIF_HTTPS', cert: o.certPath } });
  }
  if (!material.ok) {
    ctx.log.info({ cert: o.certPath }, `ONVIF over HTTPS off: ${material.reason}`);
    return undefined;
  }
  const secure = new OnvifServer({ ...o.server, port: o.port, tls: material });
  const port = await secure.listen();
  ctx.onStop(() => secure.close());
  const onHup = (): void =>
    void readHttpsMaterial(o.certPath, o.keyPath).then((next) => {
      if (next.ok) secure.setCertificate(next.cert, next.key);
      else ctx.log.warn(`ONVIF HTTPS certificate not reloaded, the one served stays: ${next.reason}`);
    });
  process.on('SIGHUP', onHup);
  ctx.onStop(() => process.off('SIGHUP', onHup));
  return port;
}
