import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { LookoutError } from 'lookout/core';
import { type HelloMessage } from 'lookout/core/contracts';
import type { DeviceNetworks } from 'lookout/lib/net';
import { LabelClaims, type LabelBinding, type LabelRefusal } from './label-claims.js';
import { readRegistryFile, type RegistryFileDevice } from './registry-file.js';
import { DEFAULT_RECORDINGS_ROOT, type DeviceRegistry, type DeviceSshAddress, type RegisteredDevice } from './service.js';

export const DEFAULT_TOOL_PORT = 8765;
const MAX_HELLO_DEVICES = 10_000;
/**
 * The admission check runs per message of a device the cache does not know (a flood of made-up
 * ids): there the file is looked at no more often than this. Answers and tool calls look every time.
 */
const ADMISSION_CHECK_MS = 1000;

export interface RegistryOptions {
  path: string;
  /** The operator named the file: it must exist. */
  required: boolean;
  networks: DeviceNetworks;
  busId: string;
  lanIp: string;
  /** Whether the bus cache sees the device online; preferred when a label names several devices. */
  isOnline(deviceId: string): boolean;
  /**
   * The address a device's bus connection comes from (the embedded broker knows it; an external
   * broker does not: undefined), asked when its hello arrives.
   */
  connectedFrom?(deviceId: string): string | undefined;
  /** `registered`: a device new to the registry announced itself (routine, and many at once when a fleet connects). */
  onEvent(event: { kind: 'registry'; device_id: string; message: string; details?: unknown; registered?: true }): void;
}

/** A hello as the registry keeps it: when it came, and where its device's bus connection came from. */
export interface KeptHello {
  hello: HelloMessage;
  at: number;
  from?: string;
}

/**
 * The registry file merged with hello announcements. Only what this says is reachable is ever
 * contacted: a device named in the file at the file's addresses, and any device at the address its
 * bus connection comes from (or, where the hub cannot know it, the address its hello announces)
 * inside the device networks (the file naming a device vouches for it, not for wherever a hello
 * says it is). A label only hellos announce belongs to the first device that claimed it.
 */
export class HubDeviceRegistry implements DeviceRegistry {
  private fileDevices = new Map<string, RegistryFileDevice>();
  private fileBusId: string | undefined;
  private fileLanIp: string | undefined;
  private readonly hellos = new Map<string, KeptHello & { restored?: true }>();
  readonly labels = new LabelClaims();
  /** Each label the file gives, to the devices it gives it to. */
  private fileLabels = new Map<string, string[]>();
  /** mtime, size and inode of the file last read: a stat that differs means an edit (an editor's rename changes the inode). */
  private fileStamp = '';
  private lastCheck = 0;
  private warning: string | undefined;

  constructor(private readonly options: RegistryOptions) {
    this.load();
  }

  get busId(): string {
    return this.fileBusId ?? this.options.busId;
  }

  get lanIp(): string {
    return this.fileLanIp ?? this.options.lanIp;
  }

  get path(): string {
    return this.options.path;
  }

  get networks(): DeviceNetworks {
    return this.options.networks;
  }

  /** Why the file on disk is not the one in use (a broken edit: the last good one is kept); undefined when it is. */
  get fileWarning(): string | undefined {
    this.reloadIfChanged();
    return this.warning;
  }

  /** The hellos to keep across a restart (their own times), newest first, at most the bound. */
  savedHellos(): KeptHello[] {
    return [...this.hellos.values()].sort((a, b) => b.at - a.at).map(({ hello, at, from }) => (from === undefined ? { hello, at } : { hello, at, from }));
  }

  /**
   * Hellos saved before a restart, taken in silently (they were announced and reported then); a
   * newer hello replaces one. The label bindings saved with them are restored as they were; saved
   * before bindings existed, they are made again from the hellos, oldest first.
   */
  restore(saved: readonly KeptHello[], bindings?: readonly LabelBinding[]): number {
    let restored = 0;
    for (const { hello, at, from } of saved) {
      const current = this.hellos.get(hello.device_id);
      if ((current && current.at >= at) || (!current && this.hellos.size >= MAX_HELLO_DEVICES)) continue;
      this.hellos.set(hello.device_id, { hello, at, ...(from !== undefined ? { from } : {}), restored: true });
      restored++;
    }
    if (bindings) this.labels.restore(bindings);
    else for (const { hello, at } of [...saved].sort((a, b) => a.at - b.at)) this.labels.claim(hello.device_id, this.claimable(hello), at, true);
    return restored;
  }

  hello(hello: HelloMessage, at: number): void {
    const id = hello.device_id;
    const known = this.hellos.has(id) || this.fileDevices.has(id);
    if (!this.hellos.has(id) && this.hellos.size >= MAX_HELLO_DEVICES) return;
    // A hello heard while its device is not connected (a retained one delivered again) keeps where it came from before.
    const from = plainAddress(this.options.connectedFrom?.(id)) ?? this.hellos.get(id)?.from;
    this.hellos.set(id, { hello, at, ...(from !== undefined ? { from } : {}) });
    this.reportRefusals(id, [...this.fileRefusals(hello), ...this.labels.claim(id, this.claimable(hello), at)]);
    const device = this.compute(id)!;
    if (device.toolUrl === null) {
      this.options.onEvent({
        kind: 'registry',
        device_id: id,
        message: `hello from ${id} not trusted: ${device.unreachableReason}`,
        details: { ips: hello.ips, ...(from !== undefined ? { connected_from: from } : {}) },
      });
    } else if (!known) {
      this.options.onEvent({
        kind: 'registry',
        device_id: id,
        message: `${id} registered by hello at ${device.toolUrl}`,
        details: { ips: hello.ips, ports: hello.ports, ...(from !== undefined ? { connected_from: from } : {}) },
        registered: true,
      });
    }
  }

  /** Frees a label a hello claimed (the operator's word); the next hello announcing it takes it. Answers who held it. */
  releaseLabel(label: string): string | undefined {
    return this.labels.release(label);
  }

  /** Gives a label to a device whose hello announces it, whoever held it (the operator's approval). */
  assignLabel(label: string, deviceId: string, at: number): string | undefined {
    const hello = this.hellos.get(deviceId)?.hello;
    if (!hello?.labels.includes(label)) {
      throw new LookoutError('bad_request', `${deviceId} announces no label ${label} in its hello: only a label a device announces is given to it`, {
        details: { field: 'query.to', device_id: deviceId, label },
      });
    }
    return this.labels.assign(label, deviceId, at);
  }

  /** The hello's labels that need a claim: those the registry file gives no device. */
  private claimable(hello: HelloMessage): string[] {
    return hello.labels.filter((l) => !this.fileLabels.has(l));
  }

  /** The hello's labels that the file gives other devices only: never the hello's device's. */
  private fileRefusals(hello: HelloMessage): LabelRefusal[] {
    const refused: LabelRefusal[] = [];
    for (const l of new Set(hello.labels)) {
      const holders = this.fileLabels.get(l);
      if (holders && !holders.includes(hello.device_id)) refused.push({ label: l, held_by: holders[0], reason: 'held' });
    }
    return refused;
  }

  private reportRefusals(deviceId: string, refused: readonly LabelRefusal[]): void {
    for (const r of refused) {
      this.options.onEvent({
        kind: 'registry',
        device_id: deviceId,
        message:
          r.reason === 'held'
            ? `hello from ${deviceId} claims the label ${r.label}, held by ${r.held_by}: refused (a label only hellos announce stays with the first device; the operator releases it with DELETE /fleet/registry/labels/${r.label} or gives it in the registry file)`
            : `hello from ${deviceId} claims the label ${r.label}: refused, the registry holds as many hello labels as it may`,
        details: r,
      });
    }
  }

  /** Named in the registry file (the operator's word), as it is on disk now. */
  namedInFile(deviceId: string): boolean {
    this.reloadIfChanged(ADMISSION_CHECK_MS);
    return this.fileDevices.has(deviceId);
  }

  list(): RegisteredDevice[] {
    this.reloadIfChanged();
    const ids = new Set([...this.fileDevices.keys(), ...this.hellos.keys()]);
    return [...ids].sort().map((id) => this.compute(id)!);
  }

  get(deviceId: string): RegisteredDevice | undefined {
    this.reloadIfChanged();
    return this.compute(deviceId);
  }

  resolve(target: string): RegisteredDevice {
    const byId = this.get(target);
    if (byId) return reachable(byId, target);
    const all = this.list();
    const address = parseAddress(target);
    if (address) {
      // The port of an address:port target is the one the hub contacts (the file's tool_port wins
      // over the hello's); a device it may not contact is matched by its announced port, to say so.
      const matches = all.filter(
        (d) => d.ips.includes(address.ip) && (address.port === undefined || (d.toolUrl ? toolPort(d) : d.ports?.tools) === address.port),
      );
      if (matches.length > 1) {
        throw new LookoutError(
          'bad_request',
          `query.target: the address ${target} is shared by ${matches.map((d) => d.deviceId).join(', ')}; name the device or add its tool port (${address.ip}:<port>)`,
          {
            details: { field: 'query.target', candidates: matches.map((d) => d.deviceId) },
          },
        );
      }
      if (matches.length === 1) return reachable(matches[0], target);
    } else {
      const labelled = all.filter((d) => d.labels.includes(target));
      // A hello is any device's word: a label the registry file gives is trusted over one a device
      // announced, and several devices announcing one label is refused rather than guessed (a
      // hostile device would otherwise take over `target=canary`).
      const fromFile = labelled.filter((d) => this.fileDevices.get(d.deviceId)?.labels.includes(target));
      const contactable = labelled.filter((d) => d.toolUrl);
      if (fromFile.length === 0 && contactable.length > 1) {
        throw new LookoutError(
          'bad_request',
          `query.target: several devices announce the label ${target} (${contactable.map((d) => d.deviceId).join(', ')}); name the device`,
          {
            details: { field: 'query.target', candidates: contactable.map((d) => d.deviceId) },
          },
        );
      }
      if (fromFile.length > 0) labelled.splice(0, labelled.length, ...fromFile);
      if (labelled.length > 0) {
        // Several devices may carry the label: prefer one that can be contacted and is online.
        const rank = (d: RegisteredDevice) => (d.toolUrl ? 2 : 0) + (this.options.isOnline(d.deviceId) ? 1 : 0);
        labelled.sort((a, b) => rank(b) - rank(a) || (b.lastHelloAt ?? 0) - (a.lastHelloAt ?? 0) || a.deviceId.localeCompare(b.deviceId));
        return reachable(labelled[0], target);
      }
    }
    throw new LookoutError('target_unknown', `no registered device is "${target}" (device id, address or label)`, {
      details: { target, known: all.slice(0, 50).map((d) => d.deviceId) },
    });
  }

  private compute(id: string): RegisteredDevice | undefined {
    const file = this.fileDevices.get(id);
    const h = this.hellos.get(id);
    if (!file && !h) return undefined;
    const hello = h?.hello;
    // A hello's addresses are its device's word: where its bus connection came from is the hub's own.
    const fromHello = h?.from !== undefined ? [h.from] : (hello?.ips ?? []);
    const ips = file && file.ips.length > 0 ? file.ips : fromHello;
    // A hello's label counts only where the file gives it to no device and this device holds it.
    const helloLabels = (hello?.labels ?? []).filter((l) => !this.fileLabels.has(l) && this.labels.holder(l) === id);
    const device: RegisteredDevice = {
      deviceId: id,
      ips: [...ips],
      labels: union(file?.labels, helloLabels),
      roles: union(file?.roles, hello?.roles),
      ports: hello?.ports ?? (file?.tool_port ? { tools: file.tool_port } : null),
      source: file && hello ? 'file+hello' : file ? 'file' : 'hello',
      namedInFile: file !== undefined,
      toolUrl: null,
      lastHelloAt: h?.at ?? null,
    };
    if (h?.restored) device.restored = true;
    if (h?.from !== undefined) device.connectedFrom = h.from;
    const refusedLabels = (hello?.labels ?? []).filter((l) => !device.labels.includes(l));
    if (refusedLabels.length > 0) device.refusedLabels = refusedLabels;
    if (hello?.image) device.image = hello.image;
    if (hello?.layer) device.layer = hello.layer;
    if (hello?.cert_not_after) device.certNotAfter = hello.cert_not_after;
    const port = file?.tool_port ?? hello?.ports.tools ?? DEFAULT_TOOL_PORT;
    // The device's word that its tool server speaks TLS; what it must present is pinned below.
    const tls = hello?.tls?.includes('tools') === true;
    const liveTls = hello?.tls?.includes('live') === true;
    if (liveTls) device.liveTls = true;
    // Any TLS surface (tools, live, rtsps…) is pinned to the certificate the hello announced.
    if ((hello?.tls?.length ?? 0) > 0 || file?.tool_url?.startsWith('https:')) device.tlsFingerprint = hello?.cert_fingerprint ?? null;
    if (file?.tool_url) {
      device.toolUrl = file.tool_url;
      device.ssh = sshAddress(file, file.ssh_host ?? hostOf(file.ips[0] ?? new URL(file.tool_url).hostname), true);
      return device;
    }
    // The file's own addresses are the operator's word; a hello's are data any bus client can
    // publish, so they are used only inside the device networks, even for a device the file names.
    const fromFile = file !== undefined && file.ips.length > 0;
    const ip = fromFile ? (ips.find((a) => this.options.networks.contains(a)) ?? ips[0]) : ips.find((a) => this.options.networks.contains(a));
    // SSH goes where the tool server is reached (the same trust), unless the file names an SSH host.
    // Where the file names no SSH host and no address, the host is the hello's: not the file's word.
    device.ssh = ip || file?.ssh_host ? sshAddress(file, file?.ssh_host ?? ip!, file?.ssh_host !== undefined || fromFile) : null;
    if (ip) device.toolUrl = mcpUrl(ip, port, tls ? 'https' : 'http');
    else if (!hello) device.unreachableReason = 'the registry file gives no address and no hello announced one';
    else
      device.unreachableReason = `${h?.from !== undefined ? `its bus connection comes from ${h.from}, outside` : 'its hello announces no address inside'} the device networks (${this.options.networks.cidrs.join(', ')})${file ? ' and the registry file gives none' : ' and the registry file does not name it'}`;
    return device;
  }

  private load(): void {
    const stamp = stampOf(this.options.path);
    const file = readRegistryFile(this.options.path, this.options.required);
    this.fileDevices = new Map(file.devices.map((d) => [d.device_id, d]));
    this.fileLabels = new Map();
    for (const d of file.devices) for (const l of d.labels) this.fileLabels.set(l, [...(this.fileLabels.get(l) ?? []), d.device_id]);
    this.fileBusId = file.bus_id;
    this.fileLanIp = file.vms_lan_ip;
    this.fileStamp = stamp;
    this.warning = undefined;
  }

  /**
   * Reads the file again when it changed on disk: a stat per answer (cheap), so that the answer
   * right after an edit shows it. `maxAgeMs` lets the per-message admission check look less often.
   */
  private reloadIfChanged(maxAgeMs = 0): void {
    const now = Date.now();
    if (maxAgeMs > 0 && now - this.lastCheck < maxAgeMs) return;
    this.lastCheck = now;
    const stamp = stampOf(this.options.path);
    if (stamp === this.fileStamp) return;
    try {
      this.load();
      this.options.onEvent({ kind: 'registry', device_id: '', message: `registry file ${this.options.path} reloaded: ${this.fileDevices.size} device(s)` });
    } catch (err) {
      // A half-written or broken edit keeps the last good file, says so in every answer, and is recorded once per change.
      this.fileStamp = stamp;
      this.warning = `registry file not reloaded, the last good one stays in use: ${(err as Error).message}`;
      this.options.onEvent({ kind: 'registry', device_id: '', message: this.warning });
    }
  }
}

/** The device's SSH address: the file's ssh_* fields, else port 22, root and /data/recordings. */
function sshAddress(file: RegistryFileDevice | undefined, host: string, hostFromFile: boolean): DeviceSshAddress {
  return {
    host,
    port: file?.ssh_port ?? 22,
    user: file?.ssh_user ?? 'root',
    recordingsRoot: file?.recordings_root ?? DEFAULT_RECORDINGS_ROOT,
    hostFromFile,
  };
}

/** An address as the hub contacts it: an IPv4-mapped IPv6 address (`::ffff:10.0.0.5`, a dual-stack listener's) as IPv4. */
function plainAddress(address: string | undefined): string | undefined {
  if (address === undefined || isIP(address) === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/** A URL's host name without the brackets of an IPv6 literal. */
function hostOf(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

function reachable(device: RegisteredDevice, target: string): RegisteredDevice {
  if (device.toolUrl) return device;
  throw new LookoutError('target_not_allowed', `"${target}" (${device.deviceId}) is not contacted: ${device.unreachableReason}`, {
    details: { target, device_id: device.deviceId, ips: device.ips },
  });
}

function toolPort(d: RegisteredDevice): number | undefined {
  if (!d.toolUrl) return undefined;
  const u = new URL(d.toolUrl);
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

function parseAddress(target: string): { ip: string; port?: number } | undefined {
  if (isIP(target)) return { ip: target };
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target);
  if (m && isIP(m[1])) return { ip: m[1], port: Number(m[2]) };
  return undefined;
}

export function mcpUrl(ip: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  return `${scheme}://${isIP(ip) === 6 ? `[${ip}]` : ip}:${port}/mcp`;
}

function union(a: readonly string[] = [], b: readonly string[] = []): string[] {
  return [...new Set([...a, ...b])];
}

function stampOf(path: string): string {
  try {
    // No exception for a missing file (a hub run without one): a thrown ENOENT per tool call cost ~60 µs.
    const s = statSync(path, { throwIfNoEntry: false });
    return s ? `${s.mtimeMs}:${s.size}:${s.ino}` : 'absent';
  } catch {
    return 'absent';
  }
}
