import { pino } from 'pino';
import { toLookoutError } from 'lookout/core';
import { LogRing, createLogger } from 'lookout/core/host';
import { HUB_USAGE, parseHubArgs, secretsOnCommandLine, type HubArgs } from './hub-args.js';
import { startHub, type RunningHub } from './start-hub.js';

export interface HubIo {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Resolves with the signal that asks the hub to stop. */
  shutdownSignal(): Promise<string>;
}

/** What the hub prints at start: where to look. */
export function banner(hub: RunningHub): string {
  const lines = [
    'lookout-hub listening',
    `  hub          ${hub.url}`,
    `  health       ${hub.url}/health`,
    `  fleet cache  ${hub.url}/fleet/mqtt/latest`,
    `  registry     ${hub.url}/fleet/registry`,
    `  fleet health ${hub.url}/fleet/health`,
    `  tool calls   POST ${hub.url}/tools/call?target=<device|address|canary>`,
    `  debug ring   ${hub.url}/debug/events`,
    `  openapi      ${hub.url}/openapi.json`,
    `  metrics      ${hub.url}/metrics`,
    `  broker       ${hub.brokerUrl}${hub.brokerPort !== undefined ? ' (embedded)' : ''}`,
    ...(hub.brokerListeners?.tls
      ? [
          `  broker TLS   mqtts://${hub.brokerListeners.tls.host}:${hub.brokerListeners.tls.port} (devices: --mqtt mqtts://<hub>:${hub.brokerListeners.tls.port})`,
        ]
      : []),
    `  access       ${hub.tokenRequired ? 'bearer token required (all routes but /health)' : 'no token: listening on 127.0.0.1 only'}`,
  ];
  return `${lines.join('\n')}\n`;
}

export function readyLine(hub: RunningHub): Record<string, unknown> {
  return {
    event: 'ready',
    url: hub.url,
    port: hub.port,
    host: hub.host,
    broker_url: hub.brokerUrl,
    broker_port: hub.brokerPort ?? null,
    broker_tls_url: hub.brokerListeners?.tls?.url ?? null,
    token_required: hub.tokenRequired,
    pid: process.pid,
  };
}

/** `lookout-hub`: exit status 0 after a clean stop, 1 when it cannot start, 2 on a usage mistake. */
export async function runHub(io: HubIo): Promise<number> {
  let args: HubArgs;
  try {
    args = parseHubArgs(io.argv, io.env);
  } catch (err) {
    io.stderr(`lookout-hub: ${toLookoutError(err).message}\n\n${HUB_USAGE}`);
    return 2;
  }
  if (args.help) {
    io.stdout(HUB_USAGE);
    return 0;
  }
  // GET /debug/log/tail and the debug export read the hub's recent lines from this ring.
  const logRing = new LogRing();
  const logger = createLogger({
    name: 'lookout-hub',
    ring: logRing,
    level: args.logLevel ?? io.env.LOOKOUT_LOG_LEVEL ?? 'info',
    destination: pino.destination({ fd: 2, sync: true }),
  });
  for (const { flag, env } of secretsOnCommandLine(io.argv)) {
    logger.warn(`${flag} on the command line carries a secret every local user sees in the process list: prefer ${env}`);
  }
  let hub: RunningHub;
  try {
    hub = await startHub({ ...args.options, logger, logRing });
  } catch (err) {
    const e = toLookoutError(err);
    logger.error({ code: e.code, details: e.details }, `hub did not start: ${e.message}`);
    io.stderr(`lookout-hub: ${e.message}\n`);
    return 1;
  }
  io.stdout(args.json ? `${JSON.stringify(readyLine(hub))}\n` : banner(hub));
  const signal = await io.shutdownSignal();
  logger.info({ signal }, 'shutting down');
  await hub.close();
  return 0;
}

export async function main(): Promise<void> {
  const code = await runHub({
    argv: process.argv.slice(2),
    env: process.env,
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    shutdownSignal: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      }),
  });
  process.exitCode = code;
}
