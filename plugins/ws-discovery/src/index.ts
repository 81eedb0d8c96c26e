import { definePlugin, deviceInfo, toLookoutError, type RuntimeInfo } from 'lookout/core';
import { endpointAddress, OnvifServiceToken } from '../../onvif/src/service.js';
import { WsDiscoveryConfigSchema } from './config.js';
import { discoveryScopes } from './discovery-scopes.js';
import { networkPlan } from './network-plan.js';
import { WsDiscoveryResponder } from './responder.js';

/** WS-Discovery's well-known port. */
export const WS_DISCOVERY_PORT = 3702;

/**
 * The discovery port: the one asked for (--ws-discovery-port), else 3702 even under --source sim,
 * where surfacePort would pick a free port: probes go to 3702 and nowhere else, and several devices
 * share it by address reuse, so a free port would only make a simulated camera undiscoverable.
 */
export function discoveryPort(runtime: RuntimeInfo): number {
  return deviceInfo(runtime).requestedPorts.ws_discovery ?? WS_DISCOVERY_PORT;
}

/**
 * WS-Discovery for the ONVIF device (layer 0): answers Probes for NetworkVideoTransmitter or Device
 * with one unicast ProbeMatch carrying the ONVIF service's XAddrs and scopes, and announces Hello on
 * start and Bye on stop. Several devices on one machine share UDP 3702. A simulated device speaks
 * through loopback only, so nothing it sends leaves the machine.
 */
export default definePlugin({
  name: 'ws-discovery',
  version: '1.0.0',
  core: '^1',
  description: 'WS-Discovery on UDP 3702: ProbeMatch for the ONVIF device service, Hello on start, Bye on stop',
  layer: 'layer0',
  requires: [OnvifServiceToken],
  config: WsDiscoveryConfigSchema,
  async start(ctx) {
    const { config, log, runtime } = ctx;
    const info = deviceInfo(runtime);
    if (info.oneShot) {
      ctx.health.set('ok', 'one-shot mode: discovery does not run');
      return;
    }
    const onvif = ctx.services.get(OnvifServiceToken);
    const port = discoveryPort(runtime);
    const plan = networkPlan(info);
    const scopes = discoveryScopes(onvif.scopes, {
      name: runtime.id,
      hardware: `Lookout-${info.roles[0] ?? 'camera'}`,
      location: config.WS_DISCOVERY_LOCATION ?? info.labels[0] ?? runtime.id,
    });
    const responder = new WsDiscoveryResponder({
      port,
      plan,
      endpoint: { address: endpointAddress(runtime.id), metadataVersion: 1, scopes },
      xaddr: (host) => onvif.xaddr(host),
      dedupMs: config.WS_DISCOVERY_DEDUP_MS,
      maxDatagramBytes: config.WS_DISCOVERY_MAX_DATAGRAM_BYTES,
      sourceRate: config.WS_DISCOVERY_SOURCE_RATE,
      answerRate: config.WS_DISCOVERY_ANSWER_RATE,
      monotonicNow: () => performance.now(),
      now: () => ctx.clock.now(),
      log,
    });
    let bound: number;
    try {
      bound = await responder.start();
    } catch (err) {
      await responder.close().catch(() => undefined);
      const e = toLookoutError(err);
      // Discovery is a convenience: a camera added by address still works, so the plugin says why and the device runs on.
      ctx.health.set('degraded', `WS-Discovery could not listen on UDP ${port}: ${e.message}`);
      log.error({ code: e.code }, 'ws-discovery could not listen');
      return;
    }
    ctx.ports.announce('ws_discovery', bound);
    // Hello once every plugin runs: a client reacting to it finds the ONVIF service answering.
    ctx.onStarted(() => responder.hello());
    ctx.health.set('ok', `WS-Discovery on UDP ${bound} (${plan.kind === 'loopback' ? 'loopback only' : 'network'})`);
    log.info({ port: bound, plan: plan.kind, onvif_port: onvif.port }, 'ws-discovery listening');
    return {
      stop: () => responder.close(),
    };
  },
});

export { WsDiscoveryResponder } from './responder.js';
