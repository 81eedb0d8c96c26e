import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What kind of link an interface is, for the failover state. */
export type UplinkKind = 'wifi' | 'wired' | 'cellular';

/**
 * The kind of an interface: the kernel's DEVTYPE (`wlan`, `wwan`) in <sysNet>/<if>/uevent when it
 * says, a wireless/ folder there, presence in /proc/net/wireless, else the usual names (wlan…, wl…;
 * wwan…, ppp…, rmnet…, usb… and cdc… modems; everything else wired).
 */
export async function uplinkKind(iface: string, sysNet: string, wireless: ReadonlySet<string>): Promise<UplinkKind> {
  if (wireless.has(iface)) return 'wifi';
  const uevent = await readFile(join(sysNet, iface, 'uevent'), 'utf8').catch(() => '');
  const devtype = /^DEVTYPE=(\w+)$/m.exec(uevent)?.[1];
  if (devtype === 'wlan') return 'wifi';
  if (devtype === 'wwan') return 'cellular';
  if (
    await access(join(sysNet, iface, 'wireless')).then(
      () => true,
      () => false,
    )
  )
    return 'wifi';
  if (/^(wlan|wl)/.test(iface)) return 'wifi';
  if (/^(wwan|ppp|rmnet|wwp|usb|cdc)/.test(iface)) return 'cellular';
  return 'wired';
}
