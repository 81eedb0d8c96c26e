/**
 * A real hub with a real `lookout-edge` device for the MCP tests (hub-mcp-server.test.ts, the
 * conformance runs): the device runs the base plugins, the simulated camera, the encoder (a real
 * get_live_jpeg) and the hub test tools (a slow tool for progress, a failing one), and registers by
 * its hello; the hub's MCP endpoint is `<hub>/mcp`. Not a test file itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { HubOptions } from '../../../hub/src/hub-options.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

export interface McpFleet {
  hub: RunningHub;
  device: DeviceProcess;
  deviceId: string;
  /** The device's own tool server: `http://127.0.0.1:<tool port>/mcp`. */
  deviceUrl: string;
  /** The hub's MCP endpoint. */
  hubMcpUrl: string;
  close(): Promise<void>;
}

export async function startMcpFleet(options: {
  deviceId: string;
  encode?: boolean;
  hub?: HubOptions;
  /** Devices named in the hub's registry file besides the running one (e.g. one on a dead port). */
  registryDevices?: { device_id: string; ips: string[]; tool_port: number }[];
}): Promise<McpFleet> {
  const dir = mkdtempSync(join(tmpdir(), 'hub-mcp-'));
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ devices: options.registryDevices ?? [] }));
  let hub: RunningHub | undefined;
  let device: DeviceProcess | undefined;
  try {
    hub = await testHub({
      dataDir: dir,
      registryFile,
      toolTimeoutMs: 10_000,
      ...options.hub,
      env: { READINESS_START_DELAY_MS: '600000', ...options.hub?.env },
    });
    const image = join(dir, 'mcp-camera.json');
    const plugins = ['die-temp', 'identity', 'system-health', 'status', 'firmware', 'camera-profile', 'camera'];
    if (options.encode) plugins.push('encode');
    plugins.push(join(packageRoot(), 'test', 'fixtures', 'hub-tools-plugin', 'index.js'));
    writeFileSync(image, JSON.stringify({ name: 'mcp-camera', role: 'camera', plugins, essential: ['identity'] }));
    device = await startDeviceProcess({
      deviceId: options.deviceId,
      mqtt: hub.brokerUrl,
      image,
      layer: 'layer0',
      role: 'front_door',
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
      readyTimeoutMs: 30_000,
    });
    const token = options.hub?.token;
    await waitFor(
      'the device registered with its tool port',
      async () => {
        const r = await api(hub!.url, '/fleet/registry', token ? { token } : {});
        const d = (r.body.shadows ?? []).find((x: { device_id: string }) => x.device_id === options.deviceId);
        return d?.ports?.tools ? d : undefined;
      },
      20_000,
      200,
    );
    const running = { hub, device };
    return {
      ...running,
      deviceId: options.deviceId,
      deviceUrl: `http://127.0.0.1:${device.ready.ports.tools}/mcp`,
      hubMcpUrl: `${hub.url}/mcp`,
      close: async () => {
        await running.device.stop();
        await running.hub.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await device?.stop();
    await hub?.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
