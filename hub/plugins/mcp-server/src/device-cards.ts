import { LookoutError } from 'lookout/core';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';
import type { DeviceToolCatalog } from './device-tools.js';
import { liveSources } from './sources.js';

export const CARD_SCHEME = 'lookout-device:';
export const CARD_TEMPLATE = `${CARD_SCHEME}//{device_id}`;

export function cardUri(deviceId: string): string {
  return `${CARD_SCHEME}//${encodeURIComponent(deviceId)}`;
}

/** Every registered device's card, for resources/list. */
export function listCards(registry: DeviceRegistry): { uri: string; name: string; title: string; mimeType: string; description: string }[] {
  return registry
    .list()
    .sort((a, b) => a.deviceId.localeCompare(b.deviceId))
    .map((d) => ({
      uri: cardUri(d.deviceId),
      name: d.deviceId,
      title: `Device ${d.deviceId}`,
      mimeType: 'application/json',
      description: `Card of ${d.deviceId}${d.labels.length ? ` (${d.labels.join(', ')})` : ''}: identity, labels, ports, live state and tools`,
    }));
}

/**
 * A device's card: who it is (labels, roles, image, layer), how it is reached, its live state from
 * the bus cache and its tools as `<device>.<tool>`; `sources` says from which messages.
 */
export async function readCard(
  uri: string,
  deps: { registry: DeviceRegistry; cache: BusCache; catalog: DeviceToolCatalog },
  signal: AbortSignal,
): Promise<{ uri: string; mimeType: string; text: string }> {
  const deviceId = deviceIdOf(uri);
  const device = deps.registry.get(deviceId);
  if (!device)
    throw new LookoutError('target_unknown', `no registered device ${JSON.stringify(deviceId.slice(0, 200))}`, { details: { uri: uri.slice(0, 300) } });
  const view = deps.cache.view(deviceId);
  // A device that cannot list its tools now has a card without them (as tools/list leaves it out).
  const tools = device.toolUrl !== null ? await deps.catalog.toolsOfDevice(device, signal).catch(() => []) : [];
  const card = {
    device_id: deviceId,
    labels: device.labels,
    roles: device.roles,
    image: device.image ?? null,
    layer: device.layer ?? null,
    ips: device.ips,
    ports: device.ports,
    tool_server: device.toolUrl !== null,
    state: view
      ? {
          online: view.online,
          stale: view.stale,
          last_message_at: view.last_message_at,
          thermal_state: view.status?.thermal_state ?? null,
          detection: view.detection,
          person_count: view.person_count,
          storage_health: view.health?.storage_health ?? null,
        }
      : null,
    tools: tools.map((t) => ({ name: t.name, read_only: t.annotations?.readOnlyHint === true })),
    sources: liveSources(deps.cache, [deviceId]),
  };
  return { uri, mimeType: 'application/json', text: JSON.stringify(card) };
}

function deviceIdOf(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new LookoutError('argument_invalid', `not a device card URI: ${JSON.stringify(uri.slice(0, 200))} (${CARD_TEMPLATE})`);
  }
  if (url.protocol !== CARD_SCHEME || !url.host || (url.pathname !== '' && url.pathname !== '/')) {
    throw new LookoutError('argument_invalid', `not a device card URI: ${JSON.stringify(uri.slice(0, 200))} (${CARD_TEMPLATE})`);
  }
  return decodeURIComponent(url.host);
}
