/**
 * Vehicle telemetry end to end: a `lookout-edge` process of the vehicle-camera test image (wifi and
 * can plugins) on a real hub and its broker. Wi-Fi from a recorded /proc/net/wireless and
 * /proc/net/route (and `iw dev wlan0 link` output recorded from a real association, replayed by a
 * script: this machine has no radio), the route moved to a cellular modem to see the failover.
 * CAN on a vcan interface in a network namespace this test makes, fed by cansend, where the kernel
 * has vcan; else (this CI kernel: no PF_CAN at all) the recorded candump frames of
 * test/fixtures/can, played by the plugin. Each message is checked against its contract and seen
 * in GET /fleet/mqtt/latest; a device with neither Wi-Fi nor a CAN bus says why once and stays ok.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CanTelemetryMessageSchema, WifiTelemetryMessageSchema } from '../../../core/src/contracts/index.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { CanMessageSchema, type CanMessage } from '../../../plugins/can/src/service.js';
import { WifiMessageSchema } from '../../../plugins/wifi/src/service.js';
import { BusRecorder, type Recorded } from '../../support/bus-recorder.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, sleep, testHub, waitFor } from '../../support/hub-helpers.js';
import { INSIDE_NETNS, runFileInNetns } from '../../support/netns.js';

const ROOT = packageRoot();
const IMAGE = join(ROOT, 'test', 'fixtures', 'images', 'vehicle-camera.json');
const WIFI = join(ROOT, 'test', 'fixtures', 'wifi');
const RECORDING = join(ROOT, 'test', 'fixtures', 'can', 'j1939-truck.candump');
const VCAN_SETUP = 'set -e; ip link set lo up; ip link add dev vcan0 type vcan; ip link set vcan0 up';

/** Why a vcan interface cannot be made in a namespace here, or null when it can (and cansend is there). */
function vcanUnavailable(): string | null {
  if (spawnSync('cansend', ['--help']).error) return 'cansend is not installed (can-utils)';
  const probe = spawnSync('unshare', ['--net', '--', 'sh', '-c', 'ip link add dev vcan0 type vcan'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `unshare cannot run: ${probe.error.message}`;
  return probe.status === 0 ? null : `ip link add dev vcan0 type vcan: ${probe.stderr.trim() || `status ${probe.status}`} (the kernel has no vcan module)`;
}

const whyNoVcan = INSIDE_NETNS ? null : vcanUnavailable();
if (!INSIDE_NETNS && whyNoVcan === null) runFileInNetns(import.meta.url, 'vehicle telemetry with CAN on vcan0', { setup: VCAN_SETUP, timeoutMs: 180_000 });
else vehicleTelemetry(INSIDE_NETNS ? 'vcan' : 'recorded', whyNoVcan);

function vehicleTelemetry(can: 'vcan' | 'recorded', whyNot: string | null): void {
  const canWay = can === 'vcan' ? 'on vcan0 in a network namespace of the test, fed by cansend' : `on the recorded candump frames (no vcan here: ${whyNot})`;
  let hub: RunningHub;
  let observer: MqttBus;
  let dir: string;
  const recorder = new BusRecorder(30_000);
  const devices: DeviceProcess[] = [];

  before(async () => {
    hub = await testHub();
    observer = await MqttBus.connect({ url: hub.brokerUrl, clientId: 'vehicle-observer', clean: true });
    await observer.subscribe('devices/+/telemetry/#', recorder.handler);
    dir = await mkdtemp(join(tmpdir(), 'lookout-vehicle-'));
  });
  after(async () => {
    for (const d of devices) await d.stop();
    await observer?.close();
    await hub?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const of = (id: string, suffix: string) => (m: Recorded) => m.topic === `devices/${id}/${suffix}`;
  const latest = async (id: string) => (await api(hub.url, `/fleet/mqtt/latest?device=${id}`)).body.devices?.[id];
  /** The hub took the topic's message (it checks each against the contract) and refused none. */
  const seenByHub = (id: string, suffix: string) =>
    waitFor(`${suffix} of ${id} in /fleet/mqtt/latest`, async () => {
      const e = await latest(id);
      return e?.topics?.[suffix]?.count >= 1 ? e : undefined;
    });

  describe('telemetry/wifi from the kernel’s wireless and route tables', () => {
    it('RSSI, SSID, link quality and the failover state; the route moved to the cellular modem is reported', async () => {
      const procWireless = join(dir, 'wireless');
      const procRoute = join(dir, 'route');
      const iw = join(dir, 'iw');
      await copyFile(join(WIFI, 'proc-net-wireless'), procWireless);
      await copyFile(join(WIFI, 'proc-net-route-wifi'), procRoute);
      await writeFile(
        iw,
        `#!/bin/sh\n[ "$*" = "dev wlan0 link" ] || { echo "command failed: No such device (-19)" >&2; exit 237; }\ncat '${join(WIFI, 'iw-link-connected.txt')}'\n`,
      );
      await chmod(iw, 0o755);
      const d = await startDeviceProcess({
        deviceId: 'van-wifi',
        mqtt: hub.brokerUrl,
        image: IMAGE,
        layer: 'layer0',
        env: {
          WIFI_PROC_WIRELESS: procWireless,
          WIFI_PROC_ROUTE: procRoute,
          WIFI_SYS_NET: join(dir, 'no-sys-class-net'),
          WIFI_IW: iw,
          WIFI_INTERVAL_MS: '100',
          CAN_SOURCE: 'file',
          CAN_RECORDING: RECORDING,
        },
      });
      devices.push(d);
      const first = await recorder.until(of('van-wifi', 'telemetry/wifi'), 'a telemetry/wifi message');
      WifiTelemetryMessageSchema.parse(first.body);
      const wifi = WifiMessageSchema.parse(first.body);
      assert.deepEqual(
        [wifi.state, wifi.interface, wifi.rssi_dbm, wifi.ssid, wifi.bssid, wifi.frequency_mhz, wifi.link_quality_pct, wifi.nl80211],
        ['connected', 'wlan0', -52, 'depot-fleet', '3c:84:6a:12:9b:e0', 5180, 83, null],
      );
      assert.deepEqual([wifi.failover_state, wifi.uplink], ['primary', { interface: 'wlan0', kind: 'wifi', gateway: '192.168.1.1' }]);
      const entry = await seenByHub('van-wifi', 'telemetry/wifi');
      assert.equal(entry.invalid['telemetry/wifi'], undefined, 'the hub refused none');

      // The Wi-Fi drops its default route; the modem's takes over.
      const mark = recorder.mark;
      // Renamed into place: the kernel's table is read whole, never half-written as a plain rewrite would be.
      await copyFile(join(WIFI, 'proc-net-route-cellular'), `${procRoute}.new`);
      await rename(`${procRoute}.new`, procRoute);
      const moved = WifiMessageSchema.parse(
        (await recorder.until((m) => of('van-wifi', 'telemetry/wifi')(m) && m.body.failover_state === 'failover', 'the failover', { after: mark })).body,
      );
      assert.deepEqual(moved.uplink, { interface: 'wwan0', kind: 'cellular', gateway: '10.45.0.1' });
      assert.deepEqual(moved.previous_uplink, { interface: 'wlan0', kind: 'wifi', gateway: '192.168.1.1' });
      assert.ok(moved.failover_since && Date.parse(moved.failover_since) >= Date.parse(wifi.timestamp));
      assert.equal(moved.ssid, 'depot-fleet', 'still associated: only the route moved');
      await waitFor('the move in the device log', () => /uplink moved from wlan0 \(wifi\) to wwan0 \(cellular\)/.test(d.logs()));
    });
  });

  describe(`telemetry/can: J1939 ${canWay}`, () => {
    it('the fleet’s parameters decoded, the latest per group at a bounded rate, valid and seen by the hub', async () => {
      const env: Record<string, string> = { WIFI_PROC_WIRELESS: join(dir, 'none'), CAN_PUBLISH_INTERVAL_MS: '200' };
      if (can === 'vcan') Object.assign(env, { CAN_SOURCE: 'candump', CAN_INTERFACE: 'vcan0' });
      else Object.assign(env, { CAN_SOURCE: 'file', CAN_RECORDING: RECORDING });
      const d = await startDeviceProcess({ deviceId: 'van-can', mqtt: hub.brokerUrl, image: IMAGE, layer: 'layer0', env });
      devices.push(d);
      const full = (m: Recorded) => of('van-can', 'telemetry/can')(m) && Array.isArray(m.body.frames) && (m.body.frames as { name: string }[]).length >= 7;
      let found: Recorded | undefined;
      if (can === 'vcan') {
        // candump may start after the first frames: the log is sent again until a message holds every group.
        const frames = (await readFile(RECORDING, 'utf8'))
          .split('\n')
          .map((l) => /\s(\S+#\S*)$/.exec(l)?.[1])
          .filter((f): f is string => !!f && !f.startsWith('2000'));
        found = await waitFor(
          'every group on vcan0',
          () => {
            for (const f of frames) spawnSync('cansend', ['vcan0', f]);
            return recorder.messages.find(full);
          },
          30_000,
          500,
        );
      } else {
        found = await recorder.until(full, 'a telemetry/can message with every group');
      }
      CanTelemetryMessageSchema.parse(found.body);
      const msg: CanMessage = CanMessageSchema.parse(found.body);
      assert.equal(msg.state, 'receiving');
      const by = (name: string, sa = 0) => msg.frames.find((f) => f.name === name && f.source_address === sa)!;
      assert.deepEqual(by('EEC1'), { ...by('EEC1'), pgn: 61444, priority: 3 });
      assert.equal(by('EEC1').value.engine_speed, 1600, 'the latest EEC1 of the engine');
      assert.equal(by('CCVS1').value.wheel_based_vehicle_speed, 88.5);
      assert.equal(by('DD', 0x17).value.fuel_level, 62.4);
      assert.deepEqual(by('ET1').value, { engine_coolant_temperature: 90, fuel_temperature: null, engine_oil_temperature: 105 });
      assert.equal(by('ET1').parameters.find((p) => p.spn === 174)!.state, 'error');
      assert.equal(by('VD').value.total_vehicle_distance, 123456.75);
      assert.equal(by('HOURS').value.engine_total_hours, 4321.5);
      assert.equal(by('CCVS1').parameters.find((p) => p.spn === 598)!.state, 'not_available');
      assert.ok(msg.unknown_pgns.includes(59904) && msg.unknown_pgns.includes(65280), `unknown ${msg.unknown_pgns.join(',')}`);
      assert.ok(msg.counters.standard >= 1);
      if (can === 'recorded') assert.equal(msg.counters.error_frames, 1);

      const entry = await seenByHub('van-can', 'telemetry/can');
      assert.equal(entry.invalid['telemetry/can'], undefined, 'the hub refused none');
      // Bounded: one message per interval at most, however many frames (the log is 12 frames at once).
      const sent = recorder.messages.filter(of('van-can', 'telemetry/can'));
      for (let i = 1; i < sent.length; i++) {
        const gap = Date.parse(sent[i].body.timestamp as string) - Date.parse(sent[i - 1].body.timestamp as string);
        assert.ok(gap >= 150 || sent[i - 1].body.state !== sent[i].body.state, `messages ${gap} ms apart`);
      }
      if (can === 'recorded') {
        const ended = await recorder.until((m) => of('van-can', 'telemetry/can')(m) && m.body.state === 'unavailable', 'the end of the recording said');
        assert.match(String(ended.body.reason), /played to its end/);
        assert.equal(CanMessageSchema.parse(ended.body).frames.length, 7, 'the values stay until they are stale');
      }
    });
  });

  describe('a device with neither Wi-Fi nor a CAN bus', () => {
    it('says why once on each topic and stays ok', async () => {
      const d = await startDeviceProcess({
        deviceId: 'van-bare',
        mqtt: hub.brokerUrl,
        image: IMAGE,
        layer: 'layer0',
        // The real candump on an interface this machine does not have (or a kernel without CAN at all).
        env: {
          WIFI_PROC_WIRELESS: join(dir, 'no-proc-net-wireless'),
          WIFI_INTERVAL_MS: '100',
          CAN_INTERFACE: 'can9',
          CAN_PUBLISH_INTERVAL_MS: '100',
          CAN_RETRY_MS: '200',
        },
      });
      devices.push(d);
      const wifi = WifiMessageSchema.parse((await recorder.until(of('van-bare', 'telemetry/wifi'), 'telemetry/wifi')).body);
      assert.equal(wifi.state, 'unavailable');
      assert.match(wifi.reason!, /no wireless interface: .*no-proc-net-wireless does not exist/);
      const canSaid = await recorder.until((m) => of('van-bare', 'telemetry/can')(m) && m.body.state === 'unavailable', 'telemetry/can unavailable');
      assert.match(String(canSaid.body.reason), /candump|can9/);
      await seenByHub('van-bare', 'telemetry/can');
      await seenByHub('van-bare', 'telemetry/wifi');
      // Many intervals and candump retries later: no storm, still one message of each.
      await sleep(1500);
      assert.equal(recorder.messages.filter(of('van-bare', 'telemetry/wifi')).length, 1, 'one telemetry/wifi');
      const cans = recorder.messages.filter(of('van-bare', 'telemetry/can'));
      assert.equal(
        cans.filter((m) => m.body.state === 'unavailable').length,
        1,
        `one unavailable telemetry/can: ${JSON.stringify(cans.map((m) => [m.body.timestamp, m.body.state, m.body.reason]))}`,
      );
      const plugins = (await latest('van-bare')).status.plugins as { name: string; state: string }[];
      assert.deepEqual(
        plugins.filter((p) => p.name === 'wifi' || p.name === 'can').map((p) => [p.name, p.state]),
        [
          ['wifi', 'ok'],
          ['can', 'ok'],
        ],
      );
      assert.equal((d.logs().match(/no Wi-Fi telemetry/g) ?? []).length, 1, 'said once in the log');
    });
  });
}
