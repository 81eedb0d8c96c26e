import { definePlugin } from '../../../../core/src/plugin/context.js';
import { OnvifServiceToken } from '../../../../plugins/onvif/src/service.js';

/**
 * A test plugin named as what it is: it provides OnvifServiceToken (no SOAP server behind it), so
 * the ws-discovery plugin runs without the whole ONVIF plugin and its encoder. Its scopes leave
 * Profile/T, type/video_encoder and location out, which discovery fills in.
 */
export function onvifServiceStub(port: number): ReturnType<typeof definePlugin> {
  return definePlugin({
    name: 'onvif-service-stub',
    version: '1.0.0',
    core: '^1',
    layer: 'layer0',
    provides: [OnvifServiceToken],
    start(ctx) {
      ctx.services.provide(OnvifServiceToken, {
        port,
        xaddr: (host: string) => `http://${host}:${port}/onvif/device_service`,
        scopes: ['onvif://www.onvif.org/Profile/Streaming', `onvif://www.onvif.org/name/${ctx.runtime.id}`, 'onvif://www.onvif.org/hardware/Lookout-Sim'],
      });
    },
  });
}
