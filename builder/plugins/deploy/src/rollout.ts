import { setTimeout as sleep } from 'node:timers/promises';
import { LookoutError, toLookoutError } from 'lookout/core';
import type { PackageRecord, PackageService } from 'lookout/builder-plugins/package';
import type { DeployStore } from './deploy-store.js';
import type { DetectorStatus } from './detector-status.js';

export interface RolloutPlan {
  jobId: string;
  pkg: PackageRecord;
  /** Canary first. */
  devices: string[];
  layer: string;
  restart: boolean;
  soakMs: number;
}

export interface RolloutDeps {
  store: DeployStore;
  packages: PackageService;
  operator: (args: string[]) => Promise<string>;
  status: (device: string) => Promise<DetectorStatus>;
  note: (progress: number, text: string) => void;
  /** Extra operator arguments for every command on a device (--root of a simulated fleet). */
  deviceArgs: (device: string) => string[];
  /** Extra apply-layer arguments when it restarts the runtime (--service-command). */
  restartArgs: (device: string) => string[];
  /** Extra apply-layer arguments for a layer (--layer-env carrying the promoted describer). */
  layerArgs: (layer: string) => Promise<string[]>;
  verifyTimeoutMs: number;
  pollMs: number;
  signal: AbortSignal;
}

/** The pure-encode layer: where a device with no earlier package goes back to. */
const PURE_ENCODE = 'layer0';

/**
 * Canary, its detector's report, a soak, then the rest; on any failure every device this rollout
 * touched goes back to its previous package (pushed again, layer applied) or to the pure-encode
 * layer, and the error says which.
 */
export async function rollout(p: RolloutPlan, d: RolloutDeps): Promise<{ devices: { device: string; role: string }[] }> {
  const touched: { device: string; previous: ReturnType<DeployStore['active']> }[] = [];
  let where = '';
  try {
    for (const [i, device] of p.devices.entries()) {
      const role = i === 0 ? 'canary' : 'fleet';
      where = `${role} ${device}`;
      touched.push({ device, previous: d.store.active(device) });
      d.note(i / p.devices.length, `${where}: push-models ${p.pkg.version}`);
      await install(d, device, p.pkg.path, p.layer, p.restart);
      d.note((i + 0.5) / p.devices.length, `${where}: waiting for get_rfdetr_status to report ${p.pkg.version}`);
      await waitReports(d, device, p.pkg, p.restart);
      d.store.activate({ job_id: p.jobId, device, role, package_id: p.pkg.id, package_version: p.pkg.version });
      if (role === 'canary' && p.soakMs > 0) {
        d.note((i + 0.75) / p.devices.length, `${where}: soak ${Math.round(p.soakMs / 1000)} s`);
        await soak(d, device, p.pkg, p.soakMs);
      }
    }
    d.note(1, `${p.pkg.version} deployed: ${p.devices.join(', ')}`);
    return { devices: p.devices.map((device, i) => ({ device, role: i === 0 ? 'canary' : 'fleet' })) };
  } catch (err) {
    const e = toLookoutError(err);
    const undone: string[] = [];
    for (const t of [...touched].reverse()) undone.push(await rollBack(p, d, t.device, t.previous));
    throw new LookoutError(e.code === 'internal' ? 'deploy.operator_failed' : e.code, `${where}: ${e.message}; rolled back ${undone.join(', ')}`, {
      details: { rolled_back: undone },
    });
  }
}

async function install(d: RolloutDeps, device: string, tar: string, layer: string, restart: boolean): Promise<void> {
  await d.operator(['push-models', device, tar, '--json', ...d.deviceArgs(device)]);
  await applyLayer(d, device, layer, restart);
}

/** apply-layer; with restart the runtime restarts (what makes a running detector load the pushed package) and its hello is awaited. */
async function applyLayer(d: RolloutDeps, device: string, layer: string, restart: boolean): Promise<string> {
  return d.operator([
    'apply-layer',
    layer,
    device,
    '--json',
    ...(await d.layerArgs(layer)),
    ...(restart ? ['--restart', ...d.restartArgs(device)] : []),
    ...d.deviceArgs(device),
  ]);
}

function reports(s: DetectorStatus, pkg: PackageRecord): boolean {
  return s.package_version === pkg.version && s.ontology_hash === pkg.ontology_hash;
}

async function waitReports(d: RolloutDeps, device: string, pkg: PackageRecord, restarted: boolean): Promise<void> {
  const deadline = Date.now() + d.verifyTimeoutMs;
  let last = 'no answer';
  for (;;) {
    let s: DetectorStatus | undefined;
    try {
      s = await d.status(device);
      if (reports(s, pkg)) return;
      last = `it reports ${s.package_version ?? 'no package'} (${s.ontology_hash ?? 'no ontology hash'})`;
    } catch (err) {
      if (d.signal.aborted) throw err;
      last = (err as Error).message;
    }
    // After a restart (apply-layer saw the new runtime's hello) a model error is the new package's: no use waiting.
    if (restarted && s?.model_error) {
      throw new LookoutError('deploy.not_loaded', `the detector refused package ${pkg.version}: ${s.model_error.message} (${s.model_error.code})`, {
        details: { model_error: s.model_error },
      });
    }
    if (Date.now() > deadline) {
      throw new LookoutError(
        'deploy.not_loaded',
        `the detector did not report package ${pkg.version} within ${Math.round(d.verifyTimeoutMs / 1000)} s: ${last}`,
      );
    }
    await sleep(d.pollMs, undefined, { signal: d.signal });
  }
}

/** The soak gate: the canary keeps reporting the package for the whole soak. */
async function soak(d: RolloutDeps, device: string, pkg: PackageRecord, soakMs: number): Promise<void> {
  const end = Date.now() + soakMs;
  while (Date.now() < end) {
    await sleep(Math.min(d.pollMs, Math.max(0, end - Date.now())), undefined, { signal: d.signal });
    const s = await d.status(device);
    if (!reports(s, pkg)) {
      throw new LookoutError(
        'deploy.soak_failed',
        `the canary stopped reporting package ${pkg.version} during the soak (it reports ${s.package_version ?? 'no package'})`,
      );
    }
  }
}

async function rollBack(p: RolloutPlan, d: RolloutDeps, device: string, previous: ReturnType<DeployStore['active']>): Promise<string> {
  const prevPkg = previous ? d.packages.get(previous.package_id) : undefined;
  try {
    if (prevPkg) await install(d, device, prevPkg.path, p.layer, p.restart);
    else await applyLayer(d, device, PURE_ENCODE, p.restart);
    d.store.rollBack(p.jobId, device, previous);
    return prevPkg ? `${device} to package ${prevPkg.version}` : `${device} to ${PURE_ENCODE} (pure encode)`;
  } catch (err) {
    return `${device} FAILED to roll back (${(err as Error).message})`;
  }
}
