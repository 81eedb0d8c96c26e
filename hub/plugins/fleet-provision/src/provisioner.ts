import { LookoutError, DEVICE_PATHS, toLookoutError } from 'lookout/core';
import { connectSsh, fingerprintOf, hostKeyOf, type KnownHosts, type SshCredentials, type SshTarget } from 'lookout/lib/ssh';
import type { FleetCa } from 'lookout/lib/tls';
import type { DeviceRegistry } from '../../registry/src/service.js';
import type { ReadinessGrades } from '../../readiness/src/service.js';
import { edgeEnvFile, layerEnvFiles, meshKeyFile, EDGE_ENV_PATH, type DeviceFile } from './device-files.js';
import { ensurePeerCertificate, type StepOutcome } from './peer-certificate.js';
import { STEP_NAMES, type ProvisionBody, type ProvisionRecord, type Step, type StepName } from './provision-schemas.js';
import type { ProvisionRecords } from './provision-records.js';
import type { RegistryFileEditor } from './registry-entry.js';
import { RemoteDevice } from './remote-device.js';
import type { DeviceFilesAvailability, DeviceFilesOutcome } from './service.js';

export interface ProvisionerOptions {
  fleetSecret: string;
  /** Opens the fleet CA (its key signs the peer certificate); rejects when the hub has none. */
  fleetCa: () => Promise<FleetCa>;
  hubCredentials: SshCredentials;
  credentialsOf: (auth: ProvisionBody['auth']) => SshCredentials;
  knownHosts: KnownHosts;
  acceptNew: boolean;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** The broker URL devices are given unless the body names one; undefined: the body must. */
  defaultMqttUrl: string | undefined;
  helloTimeoutMs: number;
  helloPollMs: number;
  /** Runs on the device after its files changed (restarts its service); empty: none. */
  startCommand: string;
  registry: DeviceRegistry;
  registryFile: RegistryFileEditor;
  readiness: ReadinessGrades | undefined;
  records: ProvisionRecords;
  now: () => number;
  /** A step finished (for the log and the ring: its name and status, never a secret). */
  onStep: (deviceId: string, step: Step) => void;
}

export interface ProvisionAnswer {
  device_id: string;
  state: 'provisioned' | 'undone';
  changed: boolean;
  resumed: boolean;
  steps: Step[];
  grade: ProvisionRecord['grade'];
}

/** Where and how the hub reaches a device over SSH: a provisioning's body, or a known device's address. */
interface ConnectTarget {
  device_id: string;
  host: string;
  port: number;
  user: string;
  /** The device's filesystem root the spec paths are under (`/` on a device). */
  root: string;
  /** A host key to pin first (a provisioning's body). */
  host_key?: string | undefined;
  /** The host is an operator's word (a body, the registry file), not a hello's: its key may be pinned on first use. */
  hostFromFile: boolean;
}

/** Connection failures that mean the device is not there (as opposed to refusing us). */
const UNREACHABLE_CAUSES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET']);

/**
 * POST /fleet/provision-shadow's work: the steps in order, each checking the device (or the hub's
 * registry) before it acts, each recorded in the hub state as it ends. A call that fails leaves the
 * steps done so far recorded; the next call runs them all again, and the done ones find nothing to
 * do. `changed` is false when no step acted: a repeated call.
 */
export class Provisioner {
  private readonly running = new Set<string>();

  constructor(private readonly o: ProvisionerOptions) {}

  async run(body: ProvisionBody, signal?: AbortSignal): Promise<ProvisionAnswer> {
    if (this.running.has(body.device_id)) {
      throw new LookoutError('fleet-provision.provision_in_progress', `a provisioning of ${body.device_id} is running; wait for its answer`, {
        details: { device_id: body.device_id },
      });
    }
    this.running.add(body.device_id);
    try {
      return body.undo ? await this.undo(body, signal) : await this.provision(body, signal);
    } finally {
      this.running.delete(body.device_id);
    }
  }

  private mqttUrlOf(body: ProvisionBody): string {
    const url = body.mqtt_url ?? this.o.defaultMqttUrl;
    if (!url) {
      throw new LookoutError('argument_invalid', 'the hub has no broker URL a device can use: give mqtt_url, or set LOOKOUT_PROVISION_MQTT_URL', {
        details: { field: 'mqtt_url' },
      });
    }
    return url;
  }

  private async provision(body: ProvisionBody, signal?: AbortSignal): Promise<ProvisionAnswer> {
    const id = body.device_id;
    const mqttUrl = this.mqttUrlOf(body);
    // Everything the device needs from the hub is checked before any connection: a hub without its CA changes nothing.
    const ca = await this.o.fleetCa();
    const layerFiles = await layerEnvFiles(body.layer);
    const previous = this.o.records.get(id);
    const resumed = previous !== undefined && previous.state !== 'provisioned';
    const iso = () => new Date(this.o.now()).toISOString();
    const record: ProvisionRecord = {
      device_id: id,
      host: body.host,
      port: body.port,
      user: body.user,
      layer: body.layer,
      root: body.root,
      mqtt_url: mqttUrl,
      state: 'in_progress',
      steps: STEP_NAMES.map((name) => previous?.steps.find((s) => s.name === name) ?? { name, status: 'pending', detail: null, at: null }),
      pushed_at: previous?.pushed_at ?? null,
      grade: previous?.grade ?? null,
      updated_at: iso(),
    };
    const credentials = this.o.credentialsOf(body.auth);
    let device: RemoteDevice | undefined;
    let pushedNow = false;
    const step = async (name: StepName, work: () => Promise<StepOutcome>): Promise<void> => {
      const at = record.steps.findIndex((s) => s.name === name);
      try {
        const outcome = await work();
        record.steps[at] = { name, status: outcome.status, detail: outcome.detail, at: iso() };
      } catch (err) {
        const e = toLookoutError(err);
        record.steps[at] = { name, status: 'failed', detail: e.message, at: iso() };
        record.state = 'failed';
        throw new LookoutError(e.code, e.message, {
          cause: err,
          details: { ...(e.details as object | undefined), device_id: id, step: name, steps: record.steps },
        });
      } finally {
        record.updated_at = iso();
        this.o.records.put(record);
        this.o.onStep(id, record.steps[at]);
      }
    };
    const pushFiles = async (files: DeviceFile[]): Promise<StepOutcome> => {
      const outcome = await writeFiles(device!, files);
      if (outcome.status === 'done') pushedNow = true;
      return outcome;
    };

    try {
      await step('connect', async () => {
        const opened = await this.connect({ ...body, hostFromFile: true }, credentials, signal);
        device = opened.device;
        return opened.outcome;
      });
      await step('fleet_ca', () => pushFiles([{ path: DEVICE_PATHS.fleetCa, content: ca.certPem, mode: 0o644 }]));
      await step('peer_certificate', async () => {
        const outcome = await ensurePeerCertificate(device!, ca, id, body.host, new Date(this.o.now()));
        if (outcome.status === 'done') pushedNow = true;
        return outcome;
      });
      await step('mesh_key', () => pushFiles([meshKeyFile(this.o.fleetSecret)]));
      await step('device_env', () => pushFiles([edgeEnvFile(this.o.fleetSecret, id, mqttUrl)]));
      await step('layer_env', () => pushFiles(layerFiles));
      if (pushedNow) record.pushed_at = iso();
      await step('registry', async () =>
        (await this.o.registryFile.ensure({ deviceId: id, host: body.host, port: body.port, user: body.user, root: body.root }))
          ? { status: 'done', detail: `entry written in ${this.o.registry.path}` }
          : { status: 'unchanged', detail: `entry as wanted in ${this.o.registry.path}` },
      );
      await step('start', async () => {
        if (!this.o.startCommand) return { status: 'skipped', detail: 'no LOOKOUT_PROVISION_START_COMMAND: the device starts its service itself' };
        const before = previous?.steps.find((s) => s.name === 'start')?.status;
        if (!pushedNow && (before === 'done' || before === 'unchanged')) return { status: 'unchanged', detail: 'no file changed since it was started' };
        await device!.run(this.o.startCommand, 'starting the device runtime');
        return { status: 'done', detail: 'ran LOOKOUT_PROVISION_START_COMMAND' };
      });
      device?.close();
      device = undefined;
      await step('hello', () => this.awaitHello(id, record.pushed_at, body.hello_timeout_s, signal));
      await step('grade', async () => {
        if (!this.o.readiness) return { status: 'skipped', detail: 'no readiness plugin in this hub' };
        const [graded] = await this.o.readiness.validate([id], signal);
        if (!graded) return { status: 'skipped', detail: 'readiness returned no grade' };
        record.grade = { grade: graded.grade, reason: graded.reason, checked_at: graded.checked_at };
        return { status: 'done', detail: graded.reason === null ? graded.grade : `${graded.grade}: ${graded.reason}` };
      });
    } finally {
      device?.close();
    }
    record.state = 'provisioned';
    record.updated_at = iso();
    this.o.records.put(record);
    // Hearing the hello and grading happen each call; they change nothing on the device.
    const acted = record.steps.some((s) => s.name !== 'hello' && s.name !== 'grade' && s.status === 'done');
    return { device_id: id, state: 'provisioned', changed: acted, resumed, steps: record.steps, grade: record.grade };
  }

  /**
   * Where the hub reaches a device it knows for a remedy: its provisioning record (the address and
   * root it was provisioned at), else its registry entry's SSH address (root `/`). Undefined: neither.
   */
  private knownTarget(deviceId: string): ConnectTarget | undefined {
    const record = this.o.records.get(deviceId);
    if (record) return { device_id: deviceId, host: record.host, port: record.port, user: record.user, root: record.root, hostFromFile: true };
    const ssh = this.o.registry.get(deviceId)?.ssh;
    if (ssh) return { device_id: deviceId, host: ssh.host, port: ssh.port, user: ssh.user, root: '/', hostFromFile: ssh.hostFromFile };
    return undefined;
  }

  /** What a remedy would need and the hub lacks, checked without contacting the device. */
  async availability(deviceId: string, what: 'certificate' | 'layer'): Promise<DeviceFilesAvailability> {
    if (what === 'certificate') {
      try {
        await this.o.fleetCa();
      } catch (err) {
        return { ok: false, reason: toLookoutError(err).message };
      }
    }
    const target = this.knownTarget(deviceId);
    if (!target) return { ok: false, reason: `the hub has no SSH address of ${deviceId} (not provisioned by this hub, no ssh address in the registry)` };
    if (!this.o.hubCredentials.configured) return { ok: false, reason: 'the hub has no SSH credentials (DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE)' };
    return { ok: true, via: viaOf(target) };
  }

  /** The provisioning's peer_certificate step on a known device, with the hub's credentials (FleetProvision.renewCertificate). */
  async renewCertificate(deviceId: string, signal?: AbortSignal): Promise<DeviceFilesOutcome> {
    // The CA first: a hub without it contacts no device.
    const ca = await this.o.fleetCa();
    return this.onKnownDevice(deviceId, 'peer_certificate', signal, async (device, target) => {
      return { outcome: await ensurePeerCertificate(device, ca, deviceId, target.host, new Date(this.o.now())) };
    });
  }

  /** The provisioning's layer_env step on a known device, then its start and hello when a file changed (FleetProvision.reapplyLayer). */
  async reapplyLayer(deviceId: string, layer: string | null, signal?: AbortSignal): Promise<DeviceFilesOutcome> {
    const alias = layer ?? this.o.records.get(deviceId)?.layer;
    if (!alias) throw new LookoutError('argument_invalid', `no layer to re-apply on ${deviceId}: its hello names none and this hub did not provision it`);
    const files = await layerEnvFiles(alias);
    const pushedAt = this.o.now();
    const answer = await this.onKnownDevice(deviceId, 'layer_env', signal, async (device) => {
      const outcome = await writeFiles(device, files);
      if (outcome.status === 'done' && this.o.startCommand) {
        await device.run(this.o.startCommand, 'restarting the device runtime on its re-applied layer');
        return { outcome: { status: 'done', detail: `${outcome.detail}; ran LOOKOUT_PROVISION_START_COMMAND` } };
      }
      return { outcome };
    });
    // Restarted on its new env: the regrade must see the device as it came back.
    if (answer.changed && this.o.startCommand) await this.awaitHello(deviceId, new Date(pushedAt).toISOString(), undefined, signal);
    return { ...answer, layer: alias };
  }

  /**
   * One step of the provisioning run again on a device the hub knows, with the hub's credentials:
   * refused while a provisioning of it runs; recorded in its provisioning record (when it has one)
   * and reported through onStep as a provisioning's step is.
   */
  private async onKnownDevice(
    deviceId: string,
    name: StepName,
    signal: AbortSignal | undefined,
    work: (device: RemoteDevice, target: ConnectTarget) => Promise<{ outcome: StepOutcome }>,
  ): Promise<DeviceFilesOutcome> {
    const target = this.knownTarget(deviceId);
    if (!target) {
      throw new LookoutError('target_unknown', `the hub has no SSH address of ${deviceId} (not provisioned by this hub, no ssh address in the registry)`, {
        details: { device_id: deviceId },
      });
    }
    if (this.running.has(deviceId)) {
      throw new LookoutError('fleet-provision.provision_in_progress', `a provisioning of ${deviceId} is running; wait for its answer`, {
        details: { device_id: deviceId },
      });
    }
    this.running.add(deviceId);
    let device: RemoteDevice | undefined;
    try {
      device = (await this.connect(target, this.o.hubCredentials, signal)).device;
      const { outcome } = await work(device, target);
      const iso = new Date(this.o.now()).toISOString();
      const step: Step = { name, status: outcome.status, detail: outcome.detail, at: iso };
      const record = this.o.records.get(deviceId);
      if (record) {
        this.o.records.put({
          ...record,
          steps: record.steps.map((s) => (s.name === name ? step : s)),
          pushed_at: outcome.status === 'done' ? iso : record.pushed_at,
          updated_at: iso,
        });
      }
      this.o.onStep(deviceId, step);
      return { device_id: deviceId, via: viaOf(target), changed: outcome.status === 'done', detail: outcome.detail };
    } finally {
      device?.close();
      this.running.delete(deviceId);
    }
  }

  /** Takes back what provisioning put on the device and in the registry file, and forgets its record. */
  private async undo(body: ProvisionBody, signal?: AbortSignal): Promise<ProvisionAnswer> {
    const id = body.device_id;
    const iso = () => new Date(this.o.now()).toISOString();
    const { device, outcome } = await this.connect({ ...body, hostFromFile: true }, this.o.credentialsOf(body.auth), signal);
    const steps: Step[] = [{ name: 'connect', status: outcome.status, detail: outcome.detail, at: iso() }];
    let changed = false;
    try {
      const files: [StepName, string[]][] = [
        ['fleet_ca', [DEVICE_PATHS.fleetCa]],
        ['peer_certificate', [DEVICE_PATHS.peerCert, DEVICE_PATHS.peerKey]],
        ['mesh_key', [DEVICE_PATHS.meshKey]],
        ['device_env', [EDGE_ENV_PATH]],
        ['layer_env', [DEVICE_PATHS.mirrorLayerEnv, DEVICE_PATHS.durableLayerEnv]],
      ];
      for (const [name, paths] of files) {
        const removed: string[] = [];
        for (const p of paths) {
          const path = device.path(p);
          if (!(await device.read(path, 0))) continue;
          await device.remove(path);
          removed.push(p);
        }
        if (removed.length > 0) changed = true;
        steps.push({
          name,
          status: removed.length > 0 ? 'undone' : 'unchanged',
          detail: removed.length > 0 ? `removed: ${removed.join(', ')}` : 'none there',
          at: iso(),
        });
      }
    } finally {
      device.close();
    }
    const removedEntry = await this.o.registryFile.remove(id);
    if (removedEntry) changed = true;
    steps.push({ name: 'registry', status: removedEntry ? 'undone' : 'unchanged', detail: removedEntry ? 'entry removed' : 'no entry', at: iso() });
    if (this.o.records.get(id)) changed = true;
    this.o.records.delete(id);
    for (const s of steps) this.o.onStep(id, s);
    return { device_id: id, state: 'undone', changed, resumed: false, steps, grade: null };
  }

  /**
   * Opens SSH with the host key pinned: a key given in the body is pinned first (refused when another
   * is pinned for the address); without one the hub's known-hosts file (or LOOKOUT_SSH_ACCEPT_NEW) decides.
   */
  private async connect(body: ConnectTarget, credentials: SshCredentials, signal?: AbortSignal): Promise<{ device: RemoteDevice; outcome: StepOutcome }> {
    const target: SshTarget = { deviceId: body.device_id, host: body.host, port: body.port, user: body.user, hostFromFile: body.hostFromFile };
    if (!credentials.configured) {
      throw new LookoutError(
        'ssh_not_configured',
        'no SSH credentials: give auth (password or key), or configure DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE on the hub',
        {
          details: { device_id: body.device_id },
        },
      );
    }
    let pinnedNow: string | undefined;
    if (body.host_key !== undefined) {
      const key = hostKeyOf(Buffer.from(body.host_key.split(' ')[1], 'base64'));
      const fingerprint = fingerprintOf(key.blob);
      const verdict = this.o.knownHosts.check(body.host, body.port, key);
      if (verdict.status === 'changed') {
        throw new LookoutError('ssh_host_key_changed', `another host key is pinned for ${body.host}:${body.port} than the given ${fingerprint}: refused`, {
          details: {
            device_id: body.device_id,
            host: body.host,
            port: body.port,
            fingerprint,
            pinned_types: verdict.pinnedTypes,
            known_hosts: this.o.knownHosts.path,
          },
        });
      }
      if (verdict.status === 'unknown') {
        const after = await this.o.knownHosts.pin(body.host, body.port, key);
        if (after.status !== 'pinned') throw new LookoutError('ssh_host_key_changed', `another host key was pinned for ${body.host}:${body.port} meanwhile`);
        pinnedNow = fingerprint;
      }
    }
    let client;
    try {
      client = await connectSsh(target, {
        credentials,
        knownHosts: this.o.knownHosts,
        acceptNew: this.o.acceptNew,
        timeoutMs: this.o.connectTimeoutMs,
        keepaliveMs: Math.max(1000, Math.floor(this.o.commandTimeoutMs / 3)),
        ...(signal ? { signal } : {}),
        onPinned: (_t, _k, fingerprint) => (pinnedNow = fingerprint),
      });
    } catch (err) {
      const e = toLookoutError(err);
      const cause = (e.details as { cause?: string } | undefined)?.cause;
      if (e.code === 'ssh_timeout' || (e.code === 'ssh_failed' && cause !== undefined && UNREACHABLE_CAUSES.has(cause))) {
        throw new LookoutError('device_unreachable', `${e.message}: the device is unreachable over SSH`, { cause: err, details: e.details });
      }
      throw e;
    }
    const device = new RemoteDevice(client, target, body.root, this.o.commandTimeoutMs);
    return {
      device,
      outcome: pinnedNow
        ? { status: 'done', detail: `host key ${pinnedNow} pinned; authenticated as ${body.user}` }
        : { status: 'unchanged', detail: `host key as pinned; authenticated as ${body.user}` },
    };
  }

  /** Waits for a hello of the device newer than its last pushed change (bounded); its hello before that is its old self. */
  private async awaitHello(deviceId: string, pushedAt: string | null, timeoutS: number | undefined, signal?: AbortSignal): Promise<StepOutcome> {
    const since = pushedAt === null ? 0 : Date.parse(pushedAt);
    const timeoutMs = timeoutS !== undefined ? timeoutS * 1000 : this.o.helloTimeoutMs;
    const deadline = this.o.now() + timeoutMs;
    for (;;) {
      const d = this.o.registry.get(deviceId);
      if (d && d.lastHelloAt !== null && !d.restored && d.lastHelloAt >= since) {
        return { status: 'done', detail: `hello at ${new Date(d.lastHelloAt).toISOString()}` };
      }
      if (this.o.now() >= deadline) {
        throw new LookoutError('fleet-provision.hello_timeout', `${deviceId} said no hello on the bus within ${timeoutMs} ms of its provisioning`, {
          details: { device_id: deviceId, timeout_ms: timeoutMs, last_hello_at: d?.lastHelloAt ? new Date(d.lastHelloAt).toISOString() : null },
        });
      }
      if (signal?.aborted) throw toLookoutError(signal.reason);
      await new Promise((r) => setTimeout(r, this.o.helloPollMs));
    }
  }
}

function viaOf(t: ConnectTarget): string {
  return `${t.user}@${t.host}:${t.port}${t.root === '/' ? '' : ` (root ${t.root})`}`;
}

/** Writes the files that differ from what the device holds (content or mode), each atomically; unchanged when none does. */
async function writeFiles(device: RemoteDevice, files: DeviceFile[]): Promise<StepOutcome> {
  const written: string[] = [];
  for (const f of files) {
    const path = device.path(f.path);
    const there = await device.read(path);
    if (there && there.content.toString('utf8') === f.content && there.mode === f.mode) continue;
    await device.writeAtomic(path, f.content, f.mode);
    written.push(f.path);
  }
  if (written.length === 0) return { status: 'unchanged', detail: `as wanted: ${files.map((f) => f.path).join(', ')}` };
  return { status: 'done', detail: `written: ${written.join(', ')}` };
}
