import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUsageError, parseEdgeArgs } from '../../../edge/src/edge-args.js';

describe('lookout-edge flags', () => {
  it('has the device defaults: camera image, tool server on 8765 at 127.0.0.1, data root /', () => {
    const a = parseEdgeArgs(['--device-id', 'cam-1'], {}, '/work');
    assert.deepEqual(
      [a.mode, a.deviceId, a.image, a.toolPort, a.toolHost, a.dataDir, a.mqtt, a.layer, a.source],
      ['run', 'cam-1', 'camera', 8765, '127.0.0.1', '/', 'mqtt://127.0.0.1:1883', undefined, undefined],
    );
  });

  it('puts a simulated device under .lookout/devices/<id> unless --data-dir is given', () => {
    assert.equal(parseEdgeArgs(['--device-id', 'cam-2', '--source', 'sim'], {}, '/work').dataDir, '/work/.lookout/devices/cam-2');
    assert.equal(parseEdgeArgs(['--source', 'sim', '--data-dir', 'rel/dir'], {}, '/work').dataDir, '/work/rel/dir');
  });

  it('reads every flag of the spec and the issue', () => {
    const a = parseEdgeArgs(
      [
        '--device-id',
        'd',
        '--image',
        'precision',
        '--layer-env',
        'x.env',
        '--mqtt',
        'mqtt://h:1',
        '--tool-port',
        '0',
        '--tool-host',
        '0.0.0.0',
        '--role',
        'lobby',
        '--rtsp-port',
        '9554',
        '--onvif-port',
        '0',
        '--mqtt-username',
        'dev',
      ],
      {},
      '/w',
    );
    assert.deepEqual(
      [a.image, a.layerEnv, a.mqtt, a.toolPort, a.toolHost, a.role, a.ports, a.mqttUsername],
      ['precision', '/w/x.env', 'mqtt://h:1', 0, '0.0.0.0', 'lobby', { rtsp: 9554, onvif: 0 }, 'dev'],
    );
    const t = parseEdgeArgs(['--tool', 'get_firmware_status', '--args', '{"a":1}']);
    assert.deepEqual([t.mode, t.tool, t.args], ['tool', 'get_firmware_status', { a: 1 }]);
    assert.equal(parseEdgeArgs(['--health']).mode, 'health');
    assert.equal(parseEdgeArgs(['--check-update']).mode, 'check-update');
    assert.equal(parseEdgeArgs(['-h']).mode, 'help');
    assert.equal(parseEdgeArgs([], { LOOKOUT_MQTT_USERNAME: 'env-user' }).mqttUsername, 'env-user');
  });

  it('refuses mistakes as usage errors naming the flag', () => {
    const cases: [string[], RegExp][] = [
      [['--nope'], /Unknown option '--nope'/],
      [['stray'], /Unexpected argument 'stray'|positional/i],
      [['--tool-port', '65536'], /--tool-port 65536 is not a port/],
      [['--rtsp-port', '-1'], /--rtsp-port|argument missing/],
      [['--health', '--check-update'], /choose one of/],
      [['--args', '{}'], /--args goes with --tool/],
      [['--tool', 't', '--args', 'nope'], /--args is not JSON/],
      [['--tool', 't', '--args', '"s"'], /must be a JSON object/],
      [['--layer', 'layer1', '--layer-env', 'f'], /either --layer or --layer-env/],
      [['--source', 'camera'], /the only source is sim/],
    ];
    for (const [argv, why] of cases) {
      assert.throws(
        () => parseEdgeArgs(argv),
        (err: Error) => isUsageError(err) && why.test(err.message),
        argv.join(' '),
      );
    }
  });
});
