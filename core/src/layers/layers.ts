import { LookoutError } from '../errors/lookout-error.js';
import { LAYER_IDS, type LayerId } from '../plugin/manifest.js';

/** Canonical name of each layer (the env file name) and what it adds (spec 02, "Configuration layers"). */
export const LAYERS: Record<LayerId, { canonical: string; aliases: string[]; adds: string }> = {
  layer0: { canonical: 'layer0_baseline', aliases: ['layer0', 'layer0_baseline'], adds: 'encode only' },
  layer1: { canonical: 'layer1_rfdetr', aliases: ['layer1', 'layer1_rfdetr'], adds: 'detection' },
  layer2: { canonical: 'layer2_tracker', aliases: ['layer2', 'layer2_tracker'], adds: 'object tracker (default canary)' },
  layer3: { canonical: 'layer3_depth', aliases: ['layer3', 'layer3_depth'], adds: 'monocular depth and spatial fusion' },
  layer4: { canonical: 'layer4_thermal', aliases: ['layer4', 'layer4_thermal'], adds: 'thermal governor' },
  layer5: { canonical: 'full', aliases: ['layer5', 'full'], adds: 'all layers' },
};

export const DEFAULT_LAYER: LayerId = 'layer2';
/** The env key that selects the active layer (the spec's name). */
export const LAYER_KEY = 'EDGE_V3_LAYER';

export const ALL_LAYER_ALIASES = LAYER_IDS.flatMap((id) => LAYERS[id].aliases);

/** The layer an alias names (`layer2`, or its canonical name), case-insensitive; throws `layer_unknown` listing the valid ones. */
export function resolveLayer(alias: string): LayerId {
  const wanted = alias.trim().toLowerCase();
  for (const id of LAYER_IDS) if (LAYERS[id].aliases.includes(wanted)) return id;
  throw new LookoutError('layer_unknown', `unknown layer "${alias}"; valid layers: ${ALL_LAYER_ALIASES.join(', ')}`, {
    details: { layer: alias, valid: ALL_LAYER_ALIASES },
  });
}

/** The layers active when `layer` is selected: layers are cumulative. */
export function layersUpTo(layer: LayerId): LayerId[] {
  return LAYER_IDS.slice(0, LAYER_IDS.indexOf(layer) + 1);
}

/** True when a plugin of `pluginLayer` runs at the `active` layer; plugins without a layer (hub plugins) always do. */
export function isLayerEnabled(pluginLayer: LayerId | undefined, active: LayerId): boolean {
  return pluginLayer === undefined || LAYER_IDS.indexOf(pluginLayer) <= LAYER_IDS.indexOf(active);
}
