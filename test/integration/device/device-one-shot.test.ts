/**
 * The spec's agent flags as a real process: `--tool`, `--health` and `--check-update` run the
 * plugins in-process, without a broker (none is running here) and without listening, print JSON
 * and exit with a status.
 */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HealthMessageSchema } from '../../../core/src/contracts/health-message.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { runEdgeOnce } from '../../support/device-process.js';

const image = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');

describe('lookout-edge one-shot modes', () => {
  let dataDir: string;
  const base = () => [
    '--device-id',
    'cam-once',
    '--image',
    image,
    '--layer',
    'layer0',
    '--data-dir',
    dataDir,
    '--mqtt',
    'mqtt://127.0.0.1:1',
    '--source',
    'sim',
  ];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lookout-once-'));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('--tool get_firmware_status prints the answer and exits 0, with no broker anywhere', async () => {
    const r = await runEdgeOnce([...base(), '--tool', 'get_firmware_status']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { tool: string; target: string; status: string; result: { layer: string; image: string; plugins: { name: string }[] } };
    assert.deepEqual([out.tool, out.target, out.status], ['get_firmware_status', 'cam-once', 'ok']);
    assert.equal(out.result.layer, 'layer0');
    assert.equal(out.result.image, 'base-camera');
    assert.ok(out.result.plugins.some((p) => p.name === 'identity'));
  });

  it('--tool with --args changes state on disk', async () => {
    const r = await runEdgeOnce([...base(), '--tool', 'set_camera_profile', '--args', '{"bitrate_kbps": 2500}']);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(await readFile(join(dataDir, 'data', 'config', 'camera_profile.json'), 'utf8')) as { profile: { bitrate_kbps: number } };
    assert.equal(file.profile.bitrate_kbps, 2500);
  });

  it('--tool exits 1 with an error answer when the tool refuses its arguments', async () => {
    const r = await runEdgeOnce([...base(), '--tool', 'set_camera_profile', '--args', '{"fps": 1000}']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { status: string; error: { code: string; message: string } };
    assert.equal(out.status, 'error');
    assert.equal(out.error.code, 'tool_arguments_invalid');
    assert.match(out.error.message, /fps/);
  });

  it('--tool exits 1 for an unknown tool', async () => {
    const r = await runEdgeOnce([...base(), '--tool', 'get_nothing']);
    assert.equal(r.code, 1);
    assert.equal((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'tool_unknown');
  });

  it('--health prints a valid health message and exits 0', async () => {
    const r = await runEdgeOnce([...base(), '--health']);
    assert.equal(r.code, 0, r.stderr);
    const health = HealthMessageSchema.parse(JSON.parse(r.stdout));
    assert.equal(health.storage_health, 'OK');
    assert.equal(health.cert_fingerprint_present, true);
  });

  it('--health exits 1 when storage is critical by the configured thresholds', async () => {
    const r = await runEdgeOnce([...base(), '--health'], { STORAGE_WARN_PCT: '0', STORAGE_CRITICAL_PCT: '0' });
    assert.equal(r.code, 1);
    const health = JSON.parse(r.stdout) as { status: string; storage_health: string };
    assert.deepEqual([health.status, health.storage_health], ['critical', 'CRITICAL']);
  });

  it('--check-update reports an update from the manifest on the device', async () => {
    const none = await runEdgeOnce([...base(), '--check-update']);
    assert.equal(none.code, 0, none.stderr);
    assert.equal((JSON.parse(none.stdout) as { update_available: boolean }).update_available, false);
    await mkdir(join(dataDir, 'data', 'config'), { recursive: true });
    await writeFile(
      join(dataDir, 'data', 'config', 'firmware_update.json'),
      JSON.stringify({ version: '9.9.9', url: 'https://example.invalid/lookout-9.9.9.tgz' }),
    );
    const some = await runEdgeOnce([...base(), '--check-update']);
    assert.equal(some.code, 0, some.stderr);
    const out = JSON.parse(some.stdout) as { update_available: boolean; available_version: string };
    assert.deepEqual([out.update_available, out.available_version], [true, '9.9.9']);
  });

  it('with no thermal zone readable, --tool answers ok and the die temperature is null with the reason (no --source sim)', async () => {
    const real = base().filter((a) => a !== '--source' && a !== 'sim');
    const env = { DIE_TEMP_ZONE: join(dataDir, 'no-such-zone') };
    const firmware = await runEdgeOnce([...real, '--tool', 'get_firmware_status'], env);
    assert.equal(firmware.code, 0, firmware.stderr);
    assert.equal((JSON.parse(firmware.stdout) as { status: string }).status, 'ok');
    const health = await runEdgeOnce([...real, '--tool', 'get_system_health'], env);
    assert.equal(health.code, 0, health.stderr);
    const result = (
      JSON.parse(health.stdout) as { result: { die_temp_c: number | null; die_temp_reason: string | null; plugins: { name: string; state: string }[] } }
    ).result;
    assert.equal(result.die_temp_c, null);
    assert.match(result.die_temp_reason!, /no-such-zone cannot be read: ENOENT/);
    assert.equal(result.plugins.find((p) => p.name === 'die-temp')?.state, 'degraded');
  });

  it('a plugin that cannot start (a bad config value) leaves the others answering, and says why', async () => {
    const r = await runEdgeOnce([...base(), '--tool', 'get_system_health'], { STATUS_INTERVAL_MS: 'soon' });
    assert.equal(r.code, 0, r.stderr);
    const plugins = (JSON.parse(r.stdout) as { result: { plugins: { name: string; state: string; code?: string; message?: string }[] } }).result.plugins;
    const status = plugins.find((p) => p.name === 'status')!;
    assert.deepEqual([status.state, status.code], ['failed', 'config_invalid']);
    assert.match(status.message!, /STATUS_INTERVAL_MS="soon"/);
    assert.ok(
      plugins.filter((p) => p.name !== 'status').every((p) => p.state === 'ok' || p.state === 'degraded'),
      JSON.stringify(plugins),
    );
  });

  it('exits 1 with a JSON error when an essential plugin cannot start (a bad config value)', async () => {
    const r = await runEdgeOnce([...base(), '--health'], { IDENTITY_CERT_GENERATE: 'sometimes' });
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    assert.equal(out.error.code, 'config_invalid');
    assert.match(out.error.message, /IDENTITY_CERT_GENERATE="sometimes"/);
  });

  it('exits 2 with the usage for a bad command line', async () => {
    for (const args of [
      ['--bogus'],
      ['--health', '--tool', 'x'],
      ['--args', '{}'],
      ['--tool', 'x', '--args', '[1]'],
      ['--tool-port', 'http'],
      ['--source', 'camera'],
    ]) {
      const r = await runEdgeOnce(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /Usage:/);
    }
  });

  it('--help prints the usage on stdout and exits 0', async () => {
    const r = await runEdgeOnce(['--help']);
    assert.equal(r.code, 0);
    for (const flag of [
      '--device-id',
      '--image',
      '--layer',
      '--layer-env',
      '--mqtt',
      '--tool-port',
      '--role',
      '--data-dir',
      '--source',
      '--health',
      '--check-update',
      '--tool',
      '--args',
    ]) {
      assert.ok(r.stdout.includes(flag), `usage names ${flag}`);
    }
  });
});
