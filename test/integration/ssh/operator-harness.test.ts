/**
 * `lookout harness --mode live-mcp` against a real lookout-edge's MCP tool server (real mosquitto):
 * passing cases, a failing expectation with its diff (exit 7), an expected refusal, an unreachable
 * tool server (exit 5).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

describe('lookout harness --mode live-mcp (real lookout-edge tool server)', () => {
  let scratch: ScratchDir;
  let broker: Mosquitto;
  let device: DeviceProcess;

  before(async () => {
    scratch = await scratchDir('operator-harness-');
    broker = await startMosquitto();
    device = await startDeviceProcess({ deviceId: 'cam-h', mqtt: broker.url, layer: 'layer0' });
  });

  after(async () => {
    await device?.stop();
    await broker?.stop();
    await scratch?.cleanup();
  });

  it('passing cases pass; a wrong expectation fails with exit 7 and shows the diff', async () => {
    const file = join(scratch.dir, 'tools.yaml');
    writeFileSync(
      file,
      [
        `url: ${device.ready.tool_url}`,
        'cases:',
        '  - name: firmware names its layer',
        '    tool: get_firmware_status',
        '    expect: { layer: layer0, runtime_version: "/^\\\\d+\\\\.\\\\d+/" }',
        '  - name: an empty profile update is refused',
        '    tool: set_camera_profile',
        '    args: {}',
        '    expect_error: true',
        '  - name: the device claims a layer it does not run',
        '    tool: get_firmware_status',
        '    expect: { layer: layer5 }',
      ].join('\n') + '\n',
    );
    const r = await runLookout(['harness', '--mode', 'live-mcp', file], cleanEnv({}));
    assert.equal(r.code, 7, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /ok {3}.*firmware names its layer/);
    assert.match(r.stdout, /ok {3}.*an empty profile update is refused/);
    assert.match(
      r.stdout,
      /FAIL .*the device claims a layer it does not run \(get_firmware_status\)\n {2}\$\.layer\n {4}- expected "layer5"\n {4}\+ actual {3}"layer0"/,
    );
    assert.match(r.stdout, /2 of 3 cases passed/);

    const json = await runLookout(['harness', '--mode', 'live-mcp', file, '--json'], cleanEnv({}));
    const report = JSON.parse(json.stdout) as { passed: boolean; failed: number; results: { mismatches: { path: string }[] }[] };
    assert.deepEqual([report.passed, report.failed, report.results[2].mismatches[0].path], [false, 1, '$.layer']);
  });

  it('an unreachable tool server is exit 5; a wrong --mode is a usage error', async () => {
    const file = join(scratch.dir, 'dead.json');
    writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${await freePort()}/mcp`, cases: [{ name: 'x', tool: 'get_firmware_status' }] }));
    const dead = await runLookout(['harness', '--mode', 'live-mcp', file], cleanEnv({}));
    assert.equal(dead.code, 5, dead.stderr);
    assert.match(dead.stderr, /^device_unreachable: the tool server at http:\/\/127\.0\.0\.1:\d+\/mcp cannot be reached/);
    const mode = await runLookout(['harness', '--mode', 'replay', file], cleanEnv({}));
    assert.equal(mode.code, 2);
  });
});
