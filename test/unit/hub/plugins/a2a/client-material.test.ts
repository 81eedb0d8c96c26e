import assert from 'node:assert/strict';
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { openFleetCa } from '../../../../../lib/tls/fleet-ca.js';
import { provisionHubCertificate } from '../../../../../lib/tls/provision-certificates.js';
import { hubTlsPaths } from '../../../../../lib/tls/tls-paths.js';
import { HubClientMaterial } from '../../../../../hub/plugins/a2a/src/client-material.js';
import { provisionTestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

describe("the hub's client certificate for peer queries", () => {
  let scratch: ScratchDir;
  let hubDir: string;
  beforeEach(async () => {
    scratch = await scratchDir('lookout-a2a-material-');
    hubDir = join(scratch.dir, 'hub');
  });
  afterEach(() => scratch.cleanup());

  it('without files: not usable, naming the missing file and the command that makes it', () => {
    const material = new HubClientMaterial(hubTlsPaths(hubDir));
    const now = material.current();
    assert.equal(now.ok, false);
    assert.match(now.ok ? '' : now.problem, /tls\/hub\.crt is missing; provision the hub with lookout certs --ca-dir <fleet CA dir> --hub-data <hub data dir>/);
  });

  it('is read once provisioned, and read again when the files change (no restart)', async () => {
    const material = new HubClientMaterial(hubTlsPaths(hubDir));
    assert.equal(material.current().ok, false);
    const fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), { hubDataDir: hubDir });
    const first = material.current();
    assert.ok(first.ok);
    assert.equal(first.fingerprint, fleet.hub().fingerprint);
    assert.equal(material.current(), first, 'unchanged files are not read again');
    const { ca } = await openFleetCa(join(scratch.dir, 'ca'));
    const again = await provisionHubCertificate(ca, { hubDataDir: hubDir, force: true });
    const second = material.current();
    assert.ok(second.ok);
    assert.equal(second.fingerprint, again.fingerprint);
  });

  it('refuses a certificate of another CA, a key that is not its own, and an expired certificate', async () => {
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { hubDataDir: hubDir });
    const foreignHub = join(scratch.dir, 'foreign-hub');
    await provisionTestFleetCerts(join(scratch.dir, 'foreign-ca'), { hubDataDir: foreignHub });
    const paths = hubTlsPaths(hubDir);
    const foreign = hubTlsPaths(foreignHub);
    let now = Date.now();
    const material = new HubClientMaterial(paths, () => now);
    assert.ok(material.current().ok);

    now += 800 * 86_400_000;
    const expired = material.current();
    assert.match(expired.ok ? '' : expired.problem, /expired on .*run lookout certs again/);
    now = Date.now();

    await copyFile(foreign.keyPath, paths.keyPath);
    const wrongKey = material.current();
    assert.match(wrongKey.ok ? '' : wrongKey.problem, /hub\.key is not the key of .*hub\.crt/);

    await copyFile(foreign.certPath, paths.certPath);
    const otherCa = material.current();
    assert.match(otherCa.ok ? '' : otherCa.problem, /is not issued by this CA/);

    await rm(paths.caPath);
    const noCa = material.current();
    assert.match(noCa.ok ? '' : noCa.problem, /fleet_ca\.crt is missing/);
  });
});
