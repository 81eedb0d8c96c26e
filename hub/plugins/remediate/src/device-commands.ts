import { randomUUID } from 'node:crypto';
import { LookoutError, type PluginBus } from 'lookout/core';
import { ResponseMessageSchema, type ResponseMessage } from 'lookout/core/contracts';

/** The topic filter the answers come on (the plugin's manifest declares it). */
export const RESPONSES_FILTER = 'devices/+/responses';

/**
 * Device tools called through the bus (`devices/<id>/cmd/tool`, answered on `devices/<id>/responses`
 * with the request id): the way the spec gives the hub to command a device, which works wherever the
 * device is on the bus, even when its tool server is not reachable or not registered (the case the
 * re-announce remedies). Answers are matched by request id; one that never comes is a device_timeout.
 */
export class DeviceCommands {
  private readonly waiting = new Map<string, { deviceId: string; resolve: (m: ResponseMessage) => void }>();
  private release: (() => Promise<void>) | undefined;

  constructor(
    private readonly bus: PluginBus,
    private readonly timeoutMs: number,
  ) {}

  async start(): Promise<void> {
    this.release = await this.bus.subscribe(RESPONSES_FILTER, (topic, payload) => {
      const deviceId = topic.split('/')[1];
      let body: unknown;
      try {
        body = JSON.parse(payload.toString('utf8'));
      } catch {
        return; // not ours: the bus cache counts garbage
      }
      const parsed = ResponseMessageSchema.safeParse(body);
      if (!parsed.success || !parsed.data.request_id) return;
      const waiter = this.waiting.get(parsed.data.request_id);
      // A device answers only for itself: an answer naming another device's request is ignored.
      if (!waiter || waiter.deviceId !== deviceId) return;
      this.waiting.delete(parsed.data.request_id);
      waiter.resolve(parsed.data);
    });
  }

  async stop(): Promise<void> {
    await this.release?.();
  }

  /** Calls a device tool over the bus; resolves with the device's answer (ok or its error), rejects when none comes in time. */
  async call(deviceId: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ResponseMessage> {
    if (!this.bus.connected) throw new LookoutError('service_unavailable', 'the hub is not connected to the bus: no command can reach the device');
    const requestId = `remediate-${randomUUID()}`;
    let settle: () => void = () => undefined;
    const answer = new Promise<ResponseMessage>((resolve, reject) => {
      settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        this.waiting.delete(requestId);
      };
      const timer = setTimeout(() => {
        this.waiting.delete(requestId);
        reject(new LookoutError('device_timeout', `${deviceId} did not answer ${tool} on its cmd topic within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const abort = () => {
        clearTimeout(timer);
        this.waiting.delete(requestId);
        reject(signal?.reason instanceof Error ? signal.reason : new LookoutError('service_unavailable', 'the request went away'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting.set(requestId, {
        deviceId,
        resolve: (m) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', abort);
          resolve(m);
        },
      });
    });
    try {
      await this.bus.publish(`devices/${deviceId}/cmd/tool`, { tool, arguments: args, request_id: requestId });
    } catch (err) {
      settle();
      throw err;
    }
    return answer;
  }
}
