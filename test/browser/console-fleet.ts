/**
 * The browser tests' world: a real hub (embedded broker, the default plugin set with the console's
 * plugins) that asks a bearer token, two real lookout-edge devices on the simulated camera (320x240
 * at 5 fps, 4 s chunks, RTSP behind Digest), and Debian's chromium driven by playwright-core (which
 * downloads no browser). Not a test file itself.
 */
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { packageRoot } from '../../core/src/paths/package-root.js';
import consolePlugin from '../../hub/plugins/console/src/index.js';
import fleetEvents from '../../hub/plugins/fleet-events/src/index.js';
import fleetHistory from '../../hub/plugins/fleet-history/src/index.js';
import liveMp4 from '../../hub/plugins/live-mp4/src/index.js';
import { loadHubPluginSet } from '../../hub/src/hub-plugin-set.js';
import type { HubOptions } from '../../hub/src/hub-options.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import type { MqttClient } from 'mqtt';
import { HUB_BUS_USER, busPassword } from '../../lib/auth/bus-acl.js';
import { api, mqttClient, TEST_FLEET_SECRET, testHub, waitFor } from '../support/hub-helpers.js';
import { startDeviceProcess, type DeviceProcess } from '../support/device-process.js';

export const CHROMIUM = process.env.LOOKOUT_CHROMIUM ?? '/usr/bin/chromium';
/** The machine's network is closed: nothing in the browser may try to reach out. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];
export const HUB_TOKEN = 'console-test-token-5f0c2b7e9a41';
const RTSP_PASSWORD = 'console-rtsp-pw';
const CONSOLE_PLUGINS = [fleetHistory, fleetEvents, liveMp4, consolePlugin];

export interface ConsoleFleet {
  hub: RunningHub;
  devices: Map<string, DeviceProcess>;
  dir: string;
  close(): Promise<void>;
}

export const DEVICES = [
  { id: 'cam-front', role: 'front_door', scenario: 'people-crossing' },
  { id: 'cam-lobby', role: 'lobby', scenario: 'crowd-occlusion' },
];

/** The default plugin set with the console's plugins, each once (whether or not the set file lists them yet). */
export async function consolePluginSet() {
  const set = await loadHubPluginSet();
  const names = new Set(CONSOLE_PLUGINS.map((p) => p.name));
  return { plugins: [...set.plugins.filter((p) => !names.has(p.name)), ...CONSOLE_PLUGINS], essential: set.essential };
}

/** A hub for the console's tests: the console's plugin set, the tests' token, loopback only; `options` add or override. */
export async function consoleHub(options: HubOptions = {}): Promise<RunningHub> {
  return testHub({ ...(await consolePluginSet()), token: HUB_TOKEN, host: '127.0.0.1', ...options });
}

/**
 * A bus client as the hub's own identity, which may publish on any device's topics: a test speaks
 * for devices it does not run (or whose own identity the running device holds), under `clientId`.
 */
export function hubBusClient(hub: RunningHub, clientId: string): Promise<MqttClient> {
  return mqttClient(hub.brokerUrl, { username: HUB_BUS_USER, password: busPassword(TEST_FLEET_SECRET, HUB_BUS_USER), clientId });
}

export async function startConsoleFleet(): Promise<ConsoleFleet> {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-console-'));
  const set = await consolePluginSet();
  const hub = await testHub({
    ...set,
    token: HUB_TOKEN,
    // Loopback only, and each device signs in to the broker as itself.
    host: '127.0.0.1',
    anonymousBroker: false,
    dataDir: join(dir, 'hub'),
    env: {
      LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(dir, 'devices', '{device}', 'data', 'recordings'),
      LOOKOUT_LIVE_RTSP_PASSWORD: RTSP_PASSWORD,
      LOOKOUT_HISTORY_STEP_MS: '1000',
      READINESS_START_DELAY_MS: '1000',
    },
  });
  const devices = new Map<string, DeviceProcess>();
  const close = async () => {
    await Promise.all([...devices.values()].map((d) => d.stop()));
    await hub.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.all(
      DEVICES.map((d) => {
        const creds = hub.deviceCredentials(d.id);
        return startDeviceProcess({
          deviceId: d.id,
          mqtt: hub.brokerUrl,
          layer: 'layer2_tracker',
          role: d.role,
          dataDir: join(dir, 'devices', d.id),
          readyTimeoutMs: 30_000,
          env: {
            SIM_SCENARIO: d.scenario,
            ENCODE_RESOLUTION: '320x240',
            ENCODE_FPS: '5',
            ENCODE_GOP: '5',
            RF_DETR_STRIDE_FPS: '5',
            // The console test holds each walker in full view to a box: here the sim detector finds every
            // object in full view. Its default misses one in 3% of frames (SIM_DET_MISS_RATE, by design),
            // which failed the snapshot-boxes check in CI: a picture of two walkers with one box, the dets
            // of the right instant. Partly hidden objects are still missed at times (the visibility rule).
            // No false alarms either: the test tells the walkers' boxes apart by their size.
            SIM_DET_MISS_RATE: '0',
            SIM_DET_FP_RATE: '0',
            CHUNK_SECONDS: '4',
            HEALTH_INTERVAL_MS: '2000',
            ONVIF_USER: 'admin',
            ONVIF_PASSWORD: RTSP_PASSWORD,
            LOOKOUT_MQTT_USERNAME: creds.username,
            LOOKOUT_MQTT_PASSWORD: creds.password,
          },
        });
      }),
    );
    started.forEach((p, i) => devices.set(DEVICES[i].id, p));
    await waitFor(
      'both devices online in the hub, with their RTSP port announced',
      async () => {
        const r = await api(hub.url, '/fleet/registry', { token: HUB_TOKEN });
        const latest = await api(hub.url, '/fleet/mqtt/latest', { token: HUB_TOKEN });
        return DEVICES.every(
          (d) =>
            latest.body.devices?.[d.id]?.online === true &&
            r.body.shadows.some((s: { device_id: string; ports?: { rtsp?: number } }) => s.device_id === d.id && s.ports?.rtsp),
        );
      },
      30_000,
      200,
    );
  } catch (err) {
    await close();
    throw err;
  }
  return { hub, devices, dir, close };
}

export async function launchChromium(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
}

/** Signs in to the console at the hub's root with the tests' token and waits for the fleet page. */
export async function signIn(page: Page, hubUrl: string): Promise<void> {
  await page.goto(`${hubUrl}/`);
  await page.locator('input[name=token]').fill(HUB_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('fleet-summary').waitFor();
}

/** Chromium with one page signed in to the console; the page's uncaught errors land in `pageErrors`. */
export interface ConsoleSession {
  browser: BrowserContext;
  page: Page;
  pageErrors: string[];
}

/** Chromium (its profile in `dir`) signed in to the hub's console; `watch` sees the page before it loads anything (to note its requests). */
export async function openConsole(dir: string, hubUrl: string, watch?: (page: Page) => void): Promise<ConsoleSession> {
  const browser = await launchChromium(dir);
  try {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    watch?.(page);
    await signIn(page, hubUrl);
    return { browser, page, pageErrors };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Where the screenshots go: LOOKOUT_TEST_ARTIFACTS, else dist/test-artifacts/console. */
export function artifactsDir(): string {
  const dir = process.env.LOOKOUT_TEST_ARTIFACTS
    ? join(process.env.LOOKOUT_TEST_ARTIFACTS, 'console')
    : join(packageRoot(), 'dist', 'test-artifacts', 'console');
  mkdirSync(dir, { recursive: true });
  return dir;
}
