import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../../../core/src/paths/package-root.js';
import { parseDefaultRoute } from '../../../../plugins/wifi/src/default-route.js';
import { parseIwLink } from '../../../../plugins/wifi/src/iw-link.js';
import { parseProcWireless } from '../../../../plugins/wifi/src/proc-wireless.js';
import { uplinkKind } from '../../../../plugins/wifi/src/uplink-kind.js';

const fixture = (name: string) => readFile(join(packageRoot(), 'test', 'fixtures', 'wifi', name), 'utf8');

describe('wifi readings', () => {
  it('/proc/net/wireless: link, level in dBm, noise unknown at -256', async () => {
    assert.deepEqual(parseProcWireless(await fixture('proc-net-wireless')), [{ iface: 'wlan0', link: 58, level_dbm: -52, noise_dbm: null }]);
    // An old driver's unsigned level (196 = -60 dBm) and a measured noise.
    const old = 'h1\nh2\n  eth1: 0001   40   196   -92  0 0 0 0 0 0\n';
    assert.deepEqual(parseProcWireless(old), [{ iface: 'eth1', link: 40, level_dbm: -60, noise_dbm: -92 }]);
    assert.deepEqual(parseProcWireless('h1\nh2\n'), [], 'the headers alone: no wireless interface');
  });

  it('iw dev <if> link: SSID, BSSID, frequency, signal, bitrates; not connected', async () => {
    assert.deepEqual(parseIwLink(await fixture('iw-link-connected.txt')), {
      connected: true,
      ssid: 'depot-fleet',
      bssid: '3c:84:6a:12:9b:e0',
      frequency_mhz: 5180,
      signal_dbm: -52,
      tx_bitrate_mbps: 650,
      rx_bitrate_mbps: 866.7,
    });
    assert.equal(parseIwLink('Not connected.\n').connected, false);
  });

  it('/proc/net/route: the up default route with the lowest metric', async () => {
    assert.deepEqual(parseDefaultRoute(await fixture('proc-net-route-wifi')), { iface: 'wlan0', gateway: '192.168.1.1', metric: 600 });
    assert.deepEqual(parseDefaultRoute(await fixture('proc-net-route-cellular')), { iface: 'wwan0', gateway: '10.45.0.1', metric: 700 });
    const both = `Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nwlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\neth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\n`;
    assert.equal(parseDefaultRoute(both)?.iface, 'eth0', 'wired wins on metric');
    const down = `Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\neth0\t00000000\t0100000A\t0002\t0\t0\t100\t00000000\n`;
    assert.equal(parseDefaultRoute(down), null, 'a route that is not up is not the default');
  });

  it('uplink kind: listed as wireless, else by name', async () => {
    const none = '/nonexistent-sys-class-net';
    assert.equal(await uplinkKind('wlp2s0', none, new Set()), 'wifi');
    assert.equal(await uplinkKind('wlan0', none, new Set()), 'wifi');
    assert.equal(await uplinkKind('eth1', none, new Set(['eth1'])), 'wifi');
    assert.equal(await uplinkKind('wwan0', none, new Set()), 'cellular');
    assert.equal(await uplinkKind('ppp0', none, new Set()), 'cellular');
    assert.equal(await uplinkKind('enp3s0', none, new Set()), 'wired');
    // This machine's own interfaces, through the real /sys/class/net: loopback is not Wi-Fi.
    assert.equal(await uplinkKind('lo', '/sys/class/net', new Set()), 'wired');
  });
});
