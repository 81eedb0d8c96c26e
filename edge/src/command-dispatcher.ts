import { setMaxListeners } from 'node:events';
import { MAX_REQUEST_JSON_DEPTH, type BusPort, type ToolRegistry } from 'lookout/core/host';
import { jsonDeeperThan, toLookoutError, type Logger, MAX_TOOL_MESSAGE_BYTES } from 'lookout/core';
import { ResponseMessageSchema, type ResponseMessage, PingCommandSchema, ToolCommandSchema } from 'lookout/core/contracts';
import { z } from 'zod';
import { AdmissionQueue, KeyedRateLimiter } from 'lookout/lib/limits';

export interface CommandStats {
  received: number;
  handled: number;
  /** Not JSON, not an object, too large, unknown command or invalid fields. */
  invalid: number;
  /** Retained messages on cmd topics: never executed (they would run again at every resubscribe). */
  ignoredRetained: number;
  /** Tool commands refused because as many were running and waiting as the device takes. */
  busy: number;
  lastInvalid?: { topic: string; reason: string; at: string };
}

export interface CommandDispatcherOptions {
  bus: BusPort;
  deviceId: string;
  tools: ToolRegistry;
  logger: Logger;
  /** Largest command payload (default: one tool call at the shared limit, 68 KiB). */
  maxPayloadBytes?: number;
  /** How long a tool called over the bus may run (default 30 s). */
  toolTimeoutMs?: number;
  /** Tool commands run at once (default 4). */
  maxConcurrentTools?: number;
  /** Tool commands that may wait for one of those; past that each is answered busy (default 16). */
  maxQueuedTools?: number;
  /** Commands plugins subscribe to themselves (`data_manifest` for cmd/data_manifest): left to them, never called unknown. */
  pluginCommands?: ReadonlySet<string>;
}

export interface CommandDispatcher {
  stats(): CommandStats;
  stop(): Promise<void>;
}

/**
 * The device's ingress, `devices/<id>/cmd/#` (spec 01 leaves the payloads open; ours are JSON).
 * `cmd/tool` {tool, arguments, request_id} calls a tool, `cmd/ping` answers; the reply goes to
 * `devices/<id>/responses`. Anything else is counted and logged, never a crash; error replies and
 * warnings are rate-limited so that a flood of garbage cannot become a flood of replies. Tool
 * commands go through a bounded queue: a flood of valid ones is answered `device_busy` (the command
 * did not run) instead of running every tool at once or holding them all in memory.
 */
export async function startCommandDispatcher(options: CommandDispatcherOptions): Promise<CommandDispatcher> {
  const { bus, deviceId, tools, logger } = options;
  const maxBytes = options.maxPayloadBytes ?? MAX_TOOL_MESSAGE_BYTES;
  const toolTimeoutMs = options.toolTimeoutMs ?? 30_000;
  const prefix = `devices/${deviceId}/cmd/`;
  const responses = `devices/${deviceId}/responses`;
  const stats: CommandStats = { received: 0, handled: 0, invalid: 0, ignoredRetained: 0, busy: 0 };
  // One key each: these bound the device's own output, whoever sent what caused it.
  const replyGate = new KeyedRateLimiter({ burst: 10, perSecond: 10 });
  const warnGate = new KeyedRateLimiter({ burst: 5, perSecond: 5 });
  // Busy answers go to callers that sent valid commands, so they get more room than garbage does.
  const busyGate = new KeyedRateLimiter({ burst: 50, perSecond: 50 });
  const maxQueued = options.maxQueuedTools ?? 16;
  const slots = new AdmissionQueue({ concurrency: options.maxConcurrentTools ?? 4, maxWaiting: maxQueued });
  const inFlight = new Set<AbortController>();
  const stopping = new AbortController();
  // Every waiting command listens on it; more than Node's default of 10 is expected, not a leak.
  setMaxListeners(maxQueued + 1, stopping.signal);
  let stopped = false;

  const reply = async (message: Omit<ResponseMessage, 'timestamp'>): Promise<void> => {
    if (stopped || !bus.connected) return;
    const body = ResponseMessageSchema.parse({ timestamp: new Date().toISOString(), ...message });
    try {
      await bus.publish(responses, JSON.stringify(body), { qos: 1 });
    } catch (err) {
      logger.warn({ code: toLookoutError(err).code }, 'command reply not published');
    }
  };

  const invalid = (topic: string, reason: string, requestId?: string): void => {
    stats.invalid++;
    stats.lastInvalid = { topic, reason, at: new Date().toISOString() };
    const suppressed = warnGate.take('warn');
    if (suppressed !== false) logger.warn({ topic, reason, invalid: stats.invalid, suppressed }, 'invalid command ignored');
    if (replyGate.take('reply') !== false) {
      void reply({
        kind: 'error',
        ok: false,
        error: { code: 'command_invalid', message: reason },
        command: topic.slice(prefix.length),
        ...(requestId ? { request_id: requestId } : {}),
      });
    }
  };

  const busy = (topic: string, command: z.output<typeof ToolCommandSchema>, id: { request_id?: string }): void => {
    stats.busy++;
    const suppressed = warnGate.take('warn');
    if (suppressed !== false) logger.warn({ topic, tool: command.tool, busy: stats.busy, suppressed }, 'tool command refused: device busy');
    if (busyGate.take('busy') !== false) {
      const message = `device busy: ${slots.active} tool commands running and ${slots.waiting} waiting; the command did not run, retry later`;
      void reply({ kind: 'tool', ok: false, tool: command.tool, error: { code: 'device_busy', message }, ...id });
    }
  };

  const runTool = async (topic: string, command: z.output<typeof ToolCommandSchema>): Promise<void> => {
    const id = command.request_id ? { request_id: command.request_id } : {};
    const slot = slots.admit(stopping.signal);
    if (!slot) return busy(topic, command, id);
    let releaseSlot: () => void;
    try {
      releaseSlot = await slot;
    } catch {
      return; // the dispatcher stopped while the command waited
    }
    const controller = new AbortController();
    inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), toolTimeoutMs);
    try {
      const result = await tools.call(command.tool, command.arguments, { signal: controller.signal });
      stats.handled++;
      await reply({ kind: 'tool', ok: true, tool: command.tool, result, ...id });
    } catch (err) {
      const e = toLookoutError(err);
      stats.handled++;
      logger.info({ topic, tool: command.tool, code: e.code }, `tool command failed: ${e.message}`);
      await reply({ kind: 'tool', ok: false, tool: command.tool, error: e.toBody().error, ...id });
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
      releaseSlot();
    }
  };

  const handle = (topic: string, payload: Buffer, meta: { retain: boolean }): void => {
    if (stopped) return;
    const command = topic.slice(prefix.length);
    if (options.pluginCommands?.has(command)) return; // a plugin's own command: the plugin checks and answers it
    stats.received++;
    if (meta.retain) {
      stats.ignoredRetained++;
      logger.debug({ topic }, 'retained command ignored');
      return;
    }
    if (payload.length > maxBytes) return invalid(topic, `payload of ${payload.length} bytes exceeds ${maxBytes}`);
    if (jsonDeeperThan(payload, MAX_REQUEST_JSON_DEPTH)) return invalid(topic, `payload nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);
    let body: unknown;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      return invalid(topic, 'payload is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid(topic, 'payload is not a JSON object');
    const requestId =
      typeof (body as { request_id?: unknown }).request_id === 'string' ? String((body as { request_id: string }).request_id).slice(0, 200) : undefined;
    if (command === 'tool') {
      const parsed = ToolCommandSchema.safeParse(body);
      if (!parsed.success) return invalid(topic, `invalid tool command: ${z.prettifyError(parsed.error)}`, requestId);
      void runTool(topic, parsed.data);
      return;
    }
    if (command === 'ping') {
      const parsed = PingCommandSchema.safeParse(body);
      if (!parsed.success) return invalid(topic, `invalid ping: ${z.prettifyError(parsed.error)}`, requestId);
      stats.handled++;
      void reply({ kind: 'pong', ok: true, ...(parsed.data.request_id ? { request_id: parsed.data.request_id } : {}) });
      return;
    }
    return invalid(topic, `unknown command "${command}"; known: tool, ping${[...(options.pluginCommands ?? [])].map((c) => `, ${c}`).join('')}`, requestId);
  };

  const release = await bus.subscribe(
    `${prefix}#`,
    (topic, payload, meta) => {
      try {
        handle(topic, payload, meta);
      } catch (err) {
        // A handler bug must not reach the bus client; it is counted like garbage.
        invalid(topic, `command handling failed: ${toLookoutError(err).message}`);
      }
    },
    { qos: 1 },
  );

  return {
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      stopping.abort();
      for (const c of inFlight) c.abort();
      await release();
    },
  };
}
