/**
 * A `lookout-edge` process kept running the way a device's service manager keeps it (systemd's
 * Restart=always on the devices): when it exits it is started again, with the same flags, so that
 * the operator's `apply-layer --restart` (its service command sends the runtime SIGTERM) brings up a
 * runtime that reads the new layer file and loads the pushed package. The pid of the process now
 * running is kept in `pidFile` for that service command. Not a test file itself.
 */
import { writeFileSync } from 'node:fs';
import { startDeviceProcess, type DeviceProcess, type DeviceProcessOptions } from '../../support/device-process.js';

export interface SupervisedDevice {
  readonly id: string;
  /** How many times the runtime was started (1 before any restart). */
  starts(): number;
  current(): DeviceProcess;
  stop(): Promise<void>;
}

export async function superviseDevice(options: DeviceProcessOptions & { pidFile: string }): Promise<SupervisedDevice> {
  let stopping = false;
  let starts = 0;
  let current: DeviceProcess;
  let failure: Error | undefined;
  let starting: Promise<void>;
  const start = async (): Promise<void> => {
    current = await startDeviceProcess(options);
    starts++;
    writeFileSync(options.pidFile, `${current.child.pid}\n`);
    void current.exited.then(() => {
      if (!stopping) starting = start().catch((err: Error) => void (failure = err));
    });
  };
  starting = start();
  await starting;
  return {
    id: options.deviceId,
    starts: () => {
      if (failure) throw failure;
      return starts;
    },
    current: () => current,
    async stop() {
      stopping = true;
      await starting;
      await current.stop();
    },
  };
}
