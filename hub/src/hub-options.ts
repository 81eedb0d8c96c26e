import type { BusPort, LogRing } from 'lookout/core/host';
import type { Logger, Plugin } from 'lookout/core';
import type { HubSharedState, HubStateStore } from './services/hub-services.js';
import type { HubTlsOptions } from './http/hub-transport.js';
import type { BrokerTlsOptions } from './broker/broker-transport.js';

export const DEFAULT_HUB_PORT = 8788;
export const DEFAULT_BROKER_PORT = 1883;
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/** Replicas divide the apply by default: each applies a device another owns at most once a second (and when read). */
export const DEFAULT_MIRROR_INTERVAL_MS = 1000;

/**
 * HTTPS: `tlsCert`/`tlsKey`, `tls`, `insecureHttp` (hub/src/http/hub-transport.ts says what each does);
 * the embedded broker's TLS listener: `brokerTls*`, `insecureMqtt` (hub/src/broker/broker-transport.ts).
 */
export interface HubOptions extends HubTlsOptions, BrokerTlsOptions {
  /** HTTP port; default 8788, 0 picks a free one. */
  port?: number;
  /** Listen address. Without a token only a loopback address is allowed (default 127.0.0.1); with one, default 0.0.0.0. */
  host?: string;
  /** External broker (`mqtt://user:pass@host:1883`); without it the hub runs the embedded broker. */
  mqttUrl?: string;
  /** With an `mqtts://` mqttUrl: a PEM file of the CAs the broker must chain to (default Node's roots and the fleet CA). */
  mqttCa?: string;
  /** Embedded broker port; default 1883, 0 picks a free one. */
  brokerPort?: number;
  /** Embedded broker listen address; default follows `host` rules (loopback without a token). */
  brokerHost?: string;
  /** Embedded broker: connections held in all (default: the open-files limit less a reserve for HTTP and state). */
  brokerMaxConnections?: number;
  /** Embedded broker: connections one remote address may hold (default a quarter of the total, at most 1024). */
  brokerMaxConnectionsPerAddress?: number;
  /** Embedded broker: from accept to a complete CONNECT (default 10 000 ms). */
  brokerConnectTimeoutMs?: number;
  /** A bus to use as is (tests, embedders): no broker is started or connected, and it is not closed at stop. */
  bus?: BusPort;
  /** Registry file; must exist when given. Default `<dataDir>/registry.json`, used when present. */
  registryFile?: string;
  /** The model builder the hub passes `/api/*` through to (the builder-proxy plugin's LOOKOUT_BUILDER_URL). */
  builderUrl?: string;
  /** Hub data folder (default registry file). Default `.lookout-dev/hub` under the working directory. */
  dataDir?: string;
  /**
   * Where the hub keeps its state across restarts (latest cache, registry view, incidents, the
   * debug ring's tail). Default: files under `<dataDir>/state/`; tests give a memory store.
   */
  stateStore?: HubStateStore & { close?(): Promise<void> };
  /** State replicas share (nonces, readiness grades); default in this process. */
  sharedState?: HubSharedState;
  /**
   * `redis://…` (or `rediss://`): the hub state and the shared state in Redis. With `mqttUrl` the hub
   * runs as one replica of many: the device ingest through MQTT 5 shared subscriptions and one
   * Redis stream (docs/replicas.md). Default: files under the data dir, nothing shared.
   */
  stateUrl?: string;
  /** Prefix of every Redis key (one per fleet sharing a Redis). Default `lookout:`. */
  statePrefix?: string;
  /** Shared-subscription group of the replicas (`$share/<group>/devices/…`). Default `lookout-hub`. */
  mqttGroup?: string;
  /** How long the replicas' shared ingest stream keeps messages (seconds). Default 900. */
  streamRetentionS?: number;
  /**
   * Replicas: divide the apply, each holding a device another replica owns to its newest dets and
   * telemetry, applied at most this often (ms) and when read. Default DEFAULT_MIRROR_INTERVAL_MS; 0:
   * every replica applies every message.
   */
  mirrorIntervalMs?: number;
  /** Bearer token for every route but /health; also the password devices need on the embedded broker. */
  token?: string;
  /** Networks a device announced by hello may be contacted in (CIDR list). Default 127.0.0.0/8. */
  deviceNetworks?: readonly string[];
  /** Origins allowed by CORS (`*` for any); a state-changing request from any other origin is refused (403). */
  corsOrigins?: readonly string[];
  /**
   * Host names the hub answers to besides loopback ones (`Host` header). Without a token the hub
   * answers only to loopback names and these (DNS rebinding); with one, these are checked when given.
   */
  hostNames?: readonly string[];
  /** Plugin set file (default configs/hub/plugins.json), or the plugins themselves. */
  pluginSet?: string;
  plugins?: Plugin[];
  /** Every per-device credential derives from it; default LOOKOUT_FLEET_SECRET, else `<dataDir>/fleet-secret` (created once). */
  fleetSecret?: string;
  /**
   * Development only: the embedded broker takes anonymous clients with every right (no per-device
   * identity); loopback only. Default false: each client authenticates as itself (core/src/auth/bus-acl.ts).
   */
  anonymousBroker?: boolean;
  /** With `plugins`: those whose failure stops the hub (the plugin set file names its own). */
  essential?: string[];
  /** Plugin config keys (LOOKOUT_HUB_*), over the process environment. */
  env?: Record<string, string | undefined>;
  /** Shortcuts for plugin config keys. */
  staleSec?: number;
  maxMessageBytes?: number;
  ringSize?: number;
  /** Bound on the debug ring's bytes (LOOKOUT_HUB_RING_MAX_BYTES); default 4 MiB. */
  ringMaxBytes?: number;
  toolTimeoutMs?: number;
  /** Largest request body; default 1 MiB. */
  bodyLimitBytes?: number;
  /** Hub id: MQTT client id and runtime id. Default `lookout-hub-<host>-<pid>`. */
  hubId?: string;
  logger?: Logger;
  /**
   * The ring `logger` also writes to (createLogger's `ring`), read by GET /debug/log/tail. Without
   * `logger` the hub makes both; with a logger and no ring the hub keeps no log lines.
   */
  logRing?: LogRing;
  /** Default true; off in tests with several hubs in one process. */
  defaultMetrics?: boolean;
}
