import { pino } from 'pino';
import { MemoryBus, createLogger } from 'lookout/core/host';
import { urlForLog } from 'lookout/lib/mqtt';
import { toLookoutError, type Logger } from 'lookout/core';
import { startDevice, type DeviceHandle, type DeviceOptions } from './device-runtime.js';
import { EDGE_USAGE, isUsageError, parseEdgeArgs, type EdgeArgs } from './edge-args.js';
import { toolTokenFromEnv } from './tool-credential.js';
import { busSettingsFromEnv } from './bus-env.js';
import { busTlsOptions } from './bus-tls.js';

export interface EdgeIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Resolves on the first SIGTERM/SIGINT (run mode). */
  shutdownSignal: () => Promise<string>;
  logger?: Logger;
}

/** The ready line: what a supervisor or a test needs to find the device. */
export interface ReadyLine {
  event: 'ready';
  device_id: string;
  image: string;
  layer: string;
  role: string;
  ports: Record<string, number>;
  tool_url: string | null;
  mqtt: string;
  /** Whether the broker was reached by then: the device works without it and joins when it answers. */
  bus: 'connected' | 'down';
  data_dir: string;
  pid: number;
}

/**
 * `lookout-edge`: returns the exit status (0 ok, 1 failure, 2 usage). stdout carries only JSON (the
 * ready line, or the one-shot answer); logs go to stderr.
 */
export async function runEdge(argv: string[], io: EdgeIo): Promise<number> {
  let args: EdgeArgs;
  try {
    args = parseEdgeArgs(argv, io.env);
  } catch (err) {
    io.stderr(`lookout-edge: ${toLookoutError(err).message}\n\n${EDGE_USAGE}`);
    return 2;
  }
  if (args.mode === 'help') {
    io.stdout(EDGE_USAGE);
    return 0;
  }
  const oneShot = args.mode !== 'run';
  const logger =
    io.logger ??
    createLogger({
      name: 'lookout-edge',
      level: args.logLevel ?? io.env.LOOKOUT_LOG_LEVEL ?? (oneShot ? 'warn' : 'info'),
      destination: pino.destination({ fd: 2, sync: true }),
    });
  const common: DeviceOptions = {
    deviceId: args.deviceId,
    image: args.image,
    dataDir: args.dataDir,
    ...(args.layer ? { layer: args.layer } : {}),
    ...(args.layerEnv ? { layerEnvPath: args.layerEnv } : {}),
    ...(args.role ? { role: args.role } : {}),
    ...(args.source ? { source: args.source } : {}),
    ports: args.ports,
    env: io.env,
    logger,
  };
  return oneShot ? runOneShot(args, common, io) : runDevice(args, common, io, logger);
}

async function runDevice(args: EdgeArgs, common: DeviceOptions, io: EdgeIo, logger: Logger): Promise<number> {
  let device: DeviceHandle;
  try {
    const toolToken = toolTokenFromEnv(io.env, args.deviceId);
    const busEnv = busSettingsFromEnv(io.env);
    const tls = busTlsOptions(args.mqtt, args.dataDir, args.mqttTls);
    device = await startDevice({
      ...common,
      ...busEnv,
      ...(tls ? { mqttOptions: { ...busEnv.mqttOptions, tls } } : {}),
      mqttUrl: args.mqtt,
      ...(args.mqttUsername !== undefined ? { mqttUsername: args.mqttUsername } : {}),
      ...(io.env.LOOKOUT_MQTT_PASSWORD !== undefined ? { mqttPassword: io.env.LOOKOUT_MQTT_PASSWORD } : {}),
      toolPort: args.toolPort,
      toolHost: args.toolHost,
      toolTls: { tls: args.toolTls, insecureHttp: args.insecureToolHttp },
      ...(toolToken !== undefined ? { toolToken } : {}),
    });
  } catch (err) {
    const e = toLookoutError(err);
    logger.error({ code: e.code, details: e.details }, `device did not start: ${e.message}`);
    io.stderr(`lookout-edge: ${e.message}\n`);
    return isUsageError(err) ? 2 : 1;
  }
  const ready: ReadyLine = {
    event: 'ready',
    device_id: device.id,
    image: device.image,
    layer: device.layer,
    role: device.role,
    ports: device.ports,
    tool_url: device.toolUrl ?? null,
    mqtt: urlForLog(args.mqtt),
    bus: device.bus.connected ? 'connected' : 'down',
    data_dir: device.dataDir,
    pid: process.pid,
  };
  io.stdout(`${JSON.stringify(ready)}\n`);
  const signal = await io.shutdownSignal();
  logger.info({ signal }, 'shutting down');
  try {
    await device.stop();
    return 0;
  } catch (err) {
    logger.error({ code: toLookoutError(err).code }, `device did not stop cleanly: ${toLookoutError(err).message}`);
    return 1;
  }
}

/** --health, --check-update, --tool: plugins in-process on a MemoryBus, nothing listens. */
async function runOneShot(args: EdgeArgs, common: DeviceOptions, io: EdgeIo): Promise<number> {
  const print = (value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  const bus = new MemoryBus();
  let device: DeviceHandle | undefined;
  try {
    device = await startDevice({ ...common, bus, toolServer: false, oneShot: true });
    if (args.mode === 'tool') {
      const tool = args.tool!;
      try {
        const result = await device.tools.call(tool, args.args);
        print({ tool, target: device.id, status: 'ok', result });
        return 0;
      } catch (err) {
        const e = toLookoutError(err);
        print({ tool, target: device.id, status: 'error', error: { code: e.code, message: e.message } });
        return 1;
      }
    }
    const tool = args.mode === 'health' ? 'get_system_health' : 'check_firmware_update';
    const result = await device.tools.call(tool, {});
    print(result);
    return args.mode === 'health' && (result as { status?: string }).status === 'critical' ? 1 : 0;
  } catch (err) {
    const e = toLookoutError(err);
    print({ error: { code: e.code, message: e.message } });
    return isUsageError(err) ? 2 : 1;
  } finally {
    await device?.stop();
    await bus.close();
  }
}

/** The process entry of `bin/lookout-edge.js`. */
export async function main(argv = process.argv.slice(2)): Promise<never> {
  let signalled: ((signal: string) => void) | undefined;
  const first = new Promise<string>((resolve) => (signalled = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      signalled(signal);
      signalled = undefined;
    } else {
      // A second signal while stopping: the operator wants out now.
      process.stderr.write(`lookout-edge: ${signal} again, exiting without a clean stop\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const code = await runEdge(argv, {
    stdout: (line) => process.stdout.write(line),
    stderr: (line) => process.stderr.write(line),
    env: process.env,
    shutdownSignal: () => first,
  });
  // stdout may be a pipe: exit only once what we wrote has left.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
