import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { posix } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { LookoutError, isObject, writeFileAtomic } from 'lookout/core';

/** What provisioning says of a device in the registry file; the operator's other keys (labels, roles) are kept. */
export interface WantedEntry {
  deviceId: string;
  host: string;
  port: number;
  user: string;
  /** The device's filesystem root (`/` on a device). */
  root: string;
}

type Json = Record<string, unknown>;

function fieldsOf(w: WantedEntry): Json {
  return {
    ...(isIP(w.host) ? { ips: [w.host] } : { ssh_host: w.host }),
    ...(w.port !== 22 ? { ssh_port: w.port } : {}),
    ...(w.user !== 'root' ? { ssh_user: w.user } : {}),
    ...(w.root !== '/' ? { recordings_root: posix.join(w.root, 'data', 'recordings') } : {}),
  };
}

const MANAGED_KEYS = ['ips', 'ssh_host', 'ssh_port', 'ssh_user', 'recordings_root'];

async function readRaw(path: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { devices: [] };
    throw err;
  }
  const raw: unknown = JSON.parse(text);
  if (!isObject(raw) || (raw.devices !== undefined && !Array.isArray(raw.devices))) {
    throw new LookoutError('config_invalid', `registry file ${path} has no devices list`, { details: { file: path } });
  }
  return { ...raw, devices: raw.devices ?? [] };
}

/**
 * Edits of the registry file (the registry plugin reads it again when it changes), one at a time,
 * each written atomically: a reader sees the old file or the new one.
 */
export class RegistryFileEditor {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly path: string) {}

  /** Puts the device's entry in the file; false when it was there as wanted already. */
  ensure(wanted: WantedEntry): Promise<boolean> {
    return this.edit((devices) => {
      const fields = fieldsOf(wanted);
      const i = devices.findIndex((d) => d.device_id === wanted.deviceId);
      const current = i >= 0 ? devices[i] : undefined;
      if (current && MANAGED_KEYS.every((k) => isDeepStrictEqual(current[k], fields[k]))) return null;
      const kept = current ? Object.fromEntries(Object.entries(current).filter(([k]) => !MANAGED_KEYS.includes(k))) : {};
      const entry = { device_id: wanted.deviceId, ...kept, ...fields };
      return i >= 0 ? devices.map((d, j) => (j === i ? entry : d)) : [...devices, entry];
    });
  }

  /** Takes the device's entry out; false when there was none. */
  remove(deviceId: string): Promise<boolean> {
    return this.edit((devices) => (devices.some((d) => d.device_id === deviceId) ? devices.filter((d) => d.device_id !== deviceId) : null));
  }

  private edit(change: (devices: Json[]) => Json[] | null): Promise<boolean> {
    const run = this.queue.then(async () => {
      const raw = await readRaw(this.path);
      const next = change((raw.devices as unknown[]).filter(isObject));
      if (next === null) return false;
      await writeFileAtomic(this.path, `${JSON.stringify({ ...raw, devices: next }, null, 2)}\n`, 0o644);
      return true;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
