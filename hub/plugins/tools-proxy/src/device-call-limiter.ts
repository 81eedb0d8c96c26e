import { AdmissionQueue, type AdmissionLimits, type ReleaseSlot } from 'lookout/lib/limits';
import { LookoutError } from 'lookout/core';

/**
 * Tool calls in flight per device, bounded: `concurrency` run, `maxWaiting` wait, the rest are
 * refused at once with 429 device_busy. A camera answers a few calls at a time; without the bound a
 * burst of callers would pile sockets on it and time out together. A call that waits past its
 * deadline is refused the same way: it never reached the device, so the caller may retry it.
 * Queues of idle devices are forgotten, so only devices with calls under way cost memory.
 */
export class DeviceCallLimiter {
  private readonly queues = new Map<string, AdmissionQueue>();

  constructor(private readonly limits: AdmissionLimits) {}

  async acquire(deviceId: string, timeoutMs: number, signal: AbortSignal): Promise<ReleaseSlot> {
    let queue = this.queues.get(deviceId);
    if (!queue) this.queues.set(deviceId, (queue = new AdmissionQueue(this.limits)));
    // A free slot is taken at once: the wait limit (a timer and a combined signal) only for a call that must wait.
    const waitLimit = queue.active < this.limits.concurrency && queue.waiting === 0 ? undefined : AbortSignal.timeout(timeoutMs);
    const slot = queue.admit(waitLimit ? AbortSignal.any([signal, waitLimit]) : signal);
    if (!slot) {
      throw busy(deviceId, `${deviceId} has ${queue.active} tool calls running and ${queue.waiting} waiting (the most it takes); retry later`, this.limits);
    }
    try {
      const release = await slot;
      return () => {
        release();
        if (queue.idle && this.queues.get(deviceId) === queue) this.queues.delete(deviceId);
      };
    } catch (err) {
      if (queue.idle && this.queues.get(deviceId) === queue) this.queues.delete(deviceId);
      if (signal.aborted || !waitLimit?.aborted) throw err;
      throw busy(deviceId, `${deviceId} had no free tool call slot within ${timeoutMs} ms; retry later`, this.limits);
    }
  }

  /** Devices with calls running or waiting. */
  get busyDevices(): number {
    return this.queues.size;
  }
}

function busy(deviceId: string, message: string, limits: AdmissionLimits): LookoutError {
  return new LookoutError('device_busy', message, { details: { device_id: deviceId, concurrency: limits.concurrency, max_waiting: limits.maxWaiting } });
}
