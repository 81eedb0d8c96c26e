import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { HUB_USAGE, parseHubArgs, secretsOnCommandLine } from '../../../hub/src/hub-args.js';
import { runHub } from '../../../hub/src/hub-cli.js';

const usage = (err: unknown) => err instanceof LookoutError && (err.details as { usage?: boolean }).usage === true;

describe('lookout-hub flags', () => {
  it('maps every flag to a hub option', () => {
    const a = parseHubArgs([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--broker-port',
      '1884',
      '--registry',
      'r.json',
      '--data-dir',
      'd',
      '--token',
      'secret-token',
      '--device-networks',
      '10.0.0.0/8, 127.0.0.0/8',
      '--cors-origin',
      'https://a.example',
      '--cors-origin',
      'https://b.example,https://c.example',
      '--stale-sec',
      '30',
      '--max-message-bytes',
      '1024',
      '--ring-size',
      '100',
      '--tool-timeout-ms',
      '2000',
      '--plugin-set',
      'set.json',
      '--json',
    ]);
    assert.deepEqual(a.options, {
      port: 0,
      host: '127.0.0.1',
      brokerPort: 1884,
      registryFile: 'r.json',
      dataDir: 'd',
      token: 'secret-token',
      deviceNetworks: ['10.0.0.0/8', '127.0.0.0/8'],
      corsOrigins: ['https://a.example', 'https://b.example', 'https://c.example'],
      pluginSet: 'set.json',
      staleSec: 30,
      maxMessageBytes: 1024,
      ringSize: 100,
      toolTimeoutMs: 2000,
    });
    assert.equal(a.json, true);
  });

  it('maps the embedded broker connection limits', () => {
    const a = parseHubArgs(['--broker-max-connections', '5000', '--broker-max-per-address', '100', '--broker-connect-timeout-ms', '3000']);
    assert.deepEqual(a.options, { brokerMaxConnections: 5000, brokerMaxConnectionsPerAddress: 100, brokerConnectTimeoutMs: 3000 });
    assert.throws(() => parseHubArgs(['--broker-max-connections', '0']), usage);
  });

  it('takes the token from LOOKOUT_HUB_TOKEN so it stays out of the process list', () => {
    assert.equal(parseHubArgs([], { LOOKOUT_HUB_TOKEN: 'from-env-123' }).options.token, 'from-env-123');
  });

  it('refuses unknown flags, bad numbers and --mqtt with embedded broker flags', () => {
    assert.throws(() => parseHubArgs(['--nope']), usage);
    assert.throws(
      () => parseHubArgs(['--port', '70000']),
      (e: LookoutError) => usage(e) && /--port/.test(e.message),
    );
    assert.throws(() => parseHubArgs(['--stale-sec', '0']), usage);
    assert.throws(() => parseHubArgs(['--mqtt', 'mqtt://h:1883', '--broker-port', '1']), usage);
    assert.throws(() => parseHubArgs(['--mqtt', 'http://h']), usage);
  });

  it('--state, --state-prefix and --mqtt-group: a replica on Redis and an MQTT 5 broker; mistakes are usage errors', () => {
    const replica = parseHubArgs([
      '--mqtt',
      'mqtt://b:1883',
      '--state',
      'redis://:pw@r:6379/2',
      '--state-prefix',
      'fleet-7:',
      '--mqtt-group',
      'hubs.eu',
      '--stream-retention-s',
      '120',
      '--mirror-interval-ms',
      '1000',
    ]).options;
    assert.equal(replica.stateUrl, 'redis://:pw@r:6379/2');
    assert.equal(replica.statePrefix, 'fleet-7:');
    assert.equal(replica.mqttGroup, 'hubs.eu');
    assert.equal(replica.streamRetentionS, 120);
    assert.equal(replica.mirrorIntervalMs, 1000);
    assert.equal(
      parseHubArgs(['--mqtt', 'mqtt://b', '--state', 'redis://r', '--mirror-interval-ms', '0']).options.mirrorIntervalMs,
      0,
      'replicas that each apply every message (the hub divides the apply when the flag is absent)',
    );
    assert.equal(parseHubArgs(['--state', 'rediss://r:6380']).options.stateUrl, 'rediss://r:6380', 'Redis state beside the embedded broker');
    assert.equal(parseHubArgs([]).options.stateUrl, undefined, 'the default keeps its state in files');
    const fromEnv = parseHubArgs([], { LOOKOUT_HUB_MQTT: 'mqtt://hub:pw@b:1883', LOOKOUT_HUB_STATE: 'redis://:pw@r:6379' }).options;
    assert.equal(fromEnv.mqttUrl, 'mqtt://hub:pw@b:1883', 'a URL with a password may stay out of the process list');
    assert.equal(fromEnv.stateUrl, 'redis://:pw@r:6379');
    assert.equal(
      parseHubArgs(['--state', 'redis://flag:6379'], { LOOKOUT_HUB_STATE: 'redis://env:6379' }).options.stateUrl,
      'redis://flag:6379',
      'the flag wins',
    );
    assert.throws(() => parseHubArgs(['--broker-port', '1'], { LOOKOUT_HUB_MQTT: 'mqtt://b' }), usage);
    assert.throws(() => parseHubArgs([], { LOOKOUT_HUB_STATE: 'http://r' }), usage);
    assert.throws(() => parseHubArgs(['--state', 'http://r:6379']), usage);
    assert.throws(() => parseHubArgs(['--state', 'redis://r', '--state-prefix', 'a b']), usage);
    assert.throws(() => parseHubArgs(['--mqtt', 'mqtt://b', '--state', 'redis://r', '--mqtt-group', 'a/#']), usage);
    assert.throws(
      () => parseHubArgs(['--mqtt-group', 'g', '--mqtt', 'mqtt://b']),
      (e: LookoutError) => usage(e) && /--state/.test(e.message),
    );
    assert.throws(
      () => parseHubArgs(['--stream-retention-s', '120']),
      (e: LookoutError) => usage(e) && /--state/.test(e.message),
    );
    assert.throws(() => parseHubArgs(['--mqtt', 'mqtt://b', '--state', 'redis://r', '--stream-retention-s', '10']), usage);
    assert.throws(() => parseHubArgs(['--mqtt', 'mqtt://b', '--state', 'redis://r', '--mirror-interval-ms', '100000']), usage);
    assert.throws(
      () => parseHubArgs(['--mirror-interval-ms', '1000']),
      (e: LookoutError) => usage(e) && /--state/.test(e.message),
    );
  });

  it('prints help, and usage with status 2 on a mistake', async () => {
    let out = '';
    let err = '';
    const io = (argv: string[]) => ({
      argv,
      env: {},
      stdout: (t: string) => (out += t),
      stderr: (t: string) => (err += t),
      shutdownSignal: () => Promise.resolve('test'),
    });
    assert.equal(await runHub(io(['--help'])), 0);
    assert.match(out, /--device-networks/);
    assert.equal(await runHub(io(['--bogus'])), 2);
    assert.match(err, /Usage: lookout-hub/);
  });
});

describe('lookout-hub secrets in flags', () => {
  it('names each flag whose value carries a secret, with the variable that keeps it out of the process list', () => {
    assert.deepEqual(secretsOnCommandLine(['--mqtt', 'mqtt://hub:pw@b:1883', '--state=redis://:pw@r:6379', '--token', 't0k']), [
      { flag: '--mqtt', env: 'LOOKOUT_HUB_MQTT' },
      { flag: '--state', env: 'LOOKOUT_HUB_STATE' },
      { flag: '--token', env: 'LOOKOUT_HUB_TOKEN' },
    ]);
    assert.deepEqual(secretsOnCommandLine(['--mqtt', 'mqtt://hub@b:1883', '--state', 'redis://r:6379', '--port', '0']), [], 'a user name alone is no secret');
    assert.deepEqual(secretsOnCommandLine(['--mqtt', 'not a url']), []);
  });

  it('the usage text shows no password in a flag', () => {
    const usageText = HUB_USAGE.split('\n').filter((l) => l.includes('--mqtt'));
    assert.ok(usageText.length > 0);
    for (const line of usageText) assert.ok(!/--mqtt\s+\S*:\/\/[^\s@]+:[^\s@]+@/.test(line), line);
  });
});
