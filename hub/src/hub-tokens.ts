import type { DependencyContainer } from 'tsyringe';
import type { RouteRegistry } from '../../core/src/hub-routes/route-registry.js';
import type { BusPort } from '../../core/src/bus/bus-port.js';
import { serviceToken, type ServiceToken } from '../../core/src/plugin/service-token.js';
import type { HubMetrics } from './hub-metrics.js';

/** Facts about the running hub that its plugins show (no secrets: the broker URL has no credentials). */
export interface HubInfo {
  id: string;
  version: string;
  startedAt: number;
  /** Broker URL without credentials, e.g. `mqtt://127.0.0.1:1883`. */
  brokerUrl: string;
  embeddedBroker: boolean;
  tokenRequired: boolean;
  /** Set once the HTTP server listens. */
  httpUrl?: string;
  bus: Pick<BusPort, 'connected'>;
}

/**
 * What the hub core puts in the root DI container before loading its plugins: hub plugins resolve
 * them from `ctx.container` (child containers fall back to the root), by these explicit tokens.
 */
export const HUB_METRICS: ServiceToken<HubMetrics> = serviceToken('hub.metrics');
export const HUB_ROUTES: ServiceToken<RouteRegistry> = serviceToken('hub.routes');
export const HUB_INFO: ServiceToken<HubInfo> = serviceToken('hub.info');

export function resolveHub<T>(container: DependencyContainer, token: ServiceToken<T>): T {
  return container.resolve<T>(token.name);
}
