import type { BusPort } from '../bus/bus-port.js';
import type { RouteEntry } from '../hub-routes/route-registry.js';
import type { ErrorTableEntry } from '../errors/error-table.js';
import { serviceToken, type ServiceToken } from '../plugin/service-token.js';

/**
 * Services the hub host (`lookout-hub`) provides to hub plugins, which name them in `requires`.
 * The host implements them; core only holds their contracts, so a hub plugin needs nothing else.
 */

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

/** The hub's Prometheus metrics as plugins feed and read them. */
export interface HubMetricsPort {
  /** Per bus message that reached ingest (`now` is the caller's clock reading). */
  ingested(topic: string, now?: number): void;
  invalid(topic: string, reason: string): void;
  toolCall(tool: string, outcome: string, seconds: number): void;
  /** Messages per second over the last seconds. */
  ingestRate(): number;
  /** The exposition for `GET /metrics`. */
  text(): Promise<{ body: string; contentType: string }>;
}

/** The routes the hub serves (those with a handler), for plugins that describe them (OpenAPI). */
export interface HubRouteCatalog {
  list(): RouteEntry[];
  /** Every error code the hub may answer with: the core's and those its plugins declare. */
  errorCodes(): ErrorTableEntry[];
}

export const HUB_INFO: ServiceToken<HubInfo> = serviceToken('hub.info');
export const HUB_METRICS: ServiceToken<HubMetricsPort> = serviceToken('hub.metrics');
export const HUB_ROUTES: ServiceToken<HubRouteCatalog> = serviceToken('hub.routes');
