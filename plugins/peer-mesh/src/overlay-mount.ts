import { readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  readOnly: boolean;
}

/** `\040`-style escapes of /proc/self/mountinfo (space, tab, newline, backslash) back to characters. */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));

/** One mountinfo line (proc(5)): mount point is field 5, its options field 6, then optional fields up to `-`, fs type, source, super options. */
export function parseMountLine(line: string): MountEntry | null {
  const fields = line.trim().split(' ');
  const dash = fields.indexOf('-', 6);
  if (fields.length < 7 || dash < 0 || dash + 3 > fields.length) return null;
  const options = fields[5].split(',');
  const superOptions = (fields[dash + 3] ?? '').split(',');
  return { mountPoint: unescape(fields[4]), fsType: fields[dash + 1], readOnly: options.includes('ro') || superOptions.includes('ro') };
}

const within = (path: string, mountPoint: string) => mountPoint === '/' || path === mountPoint || path.startsWith(`${mountPoint}/`);

/** The mount holding `path`: the longest mount point above it, the last one mounted there when stacked. */
export function mountFor(path: string, mountinfo: string): MountEntry | null {
  let best: MountEntry | null = null;
  for (const line of mountinfo.split('\n')) {
    const entry = line ? parseMountLine(line) : null;
    if (!entry || !within(path, entry.mountPoint)) continue;
    if (!best || entry.mountPoint.length >= best.mountPoint.length) best = entry;
  }
  return best;
}

/** The nearest existing directory at or above `path`, symlinks resolved (the data root may not exist yet). */
async function existingRealPath(path: string): Promise<string> {
  for (let p = path; ; p = dirname(p)) {
    try {
      return await realpath(p);
    } catch {
      if (dirname(p) === p) return p;
    }
  }
}

/** Mount point of the writable filesystem holding `dataRoot`; null when it is read-only or mountinfo cannot be read. */
export async function overlayMount(dataRoot: string, mountinfoFile = '/proc/self/mountinfo'): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(mountinfoFile, 'utf8');
  } catch {
    return null;
  }
  const entry = mountFor(await existingRealPath(dataRoot), text);
  return entry && !entry.readOnly ? entry.mountPoint : null;
}
