import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { provisionFleetCertificates } from '../../../../../lib/tls/provision-fleet.js';
import readiness from '../../../../../hub/plugins/readiness/src/index.js';
import { FleetGradeSchema } from '../../../../../hub/plugins/readiness/src/readiness-schemas.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { readinessTable } from '../../../../../operator/src/readiness-table.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { api, testHub } from '../../../../support/hub-helpers.js';

const DAY = 86_400_000;

describe("readiness and the hub's certificates", () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  const bus = new MemoryBus();
  const caDir = () => join(scratch.dir, 'ca');
  const hubDir = () => join(scratch.dir, 'hub');

  before(async () => {
    scratch = await scratchDir('lookout-readiness-certs-');
    // Issued 710 days ago: the hub's 730-day certificates have 20 days left (the CA ten years).
    await provisionFleetCertificates({ caDir: caDir(), hubDataDir: hubDir(), now: new Date(Date.now() - 710 * DAY) });
    const set = await loadHubPluginSet();
    hub = await testHub({
      bus,
      dataDir: hubDir(),
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'readiness'), readiness],
      essential: set.essential,
      env: { READINESS_START_DELAY_MS: '600000' },
    });
  });
  after(async () => {
    await hub?.close();
    await bus.close();
    await scratch.cleanup();
  });

  it('warns for a hub certificate that ends within 30 days, without lowering the grade; the warning goes once renewed', async () => {
    const grade = await api(hub.url, '/fleet/grade');
    assert.equal(grade.status, 200);
    assert.ok(FleetGradeSchema.safeParse(grade.body).success);
    // No device: not_ready for that reason alone.
    assert.equal(grade.body.reason, 'no device is known to the hub');
    const certs = grade.body.certificates as { name: string; state: string; daysLeft: number }[];
    assert.deepEqual(
      certs.map((c) => [c.name, c.state, c.daysLeft]),
      [
        ['hub HTTPS server', 'expiring', 19],
        ['hub client', 'expiring', 19],
        ['fleet CA', 'ok', 3650 - 710 - 1],
      ],
    );
    const warnings = grade.body.warnings as string[];
    assert.equal(warnings.length, 2);
    assert.match(warnings[0], /^hub HTTPS server certificate .*hub-server\.crt expires in 19 days \(.*\): renew it with lookout certs$/);
    // GET /fleet/readiness carries the same, and lookout readiness prints it.
    const full = await api(hub.url, '/fleet/readiness');
    assert.deepEqual(full.body.fleet.warnings, warnings);
    assert.match(readinessTable(full.body), /warning: hub HTTPS server certificate .* expires in 19 days/);

    // lookout certs renews what ends within 30 days; readiness reads the files again on the next answer.
    await provisionFleetCertificates({ caDir: caDir(), hubDataDir: hubDir() });
    const renewed = await api(hub.url, '/fleet/grade');
    assert.deepEqual(renewed.body.warnings, []);
    assert.ok((renewed.body.certificates as { daysLeft: number }[]).every((c) => c.daysLeft >= 729));
  });
});
