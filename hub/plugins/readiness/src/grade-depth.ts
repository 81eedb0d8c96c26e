import { LAYER_IDS, type LayerId } from 'lookout/core';
import { grader, pluginGate, pluginNotOk, pluginValue } from './grade-kit.js';
import type { DeviceFacts } from './device-facts.js';
import type { ModuleResult } from './readiness-schemas.js';

/** The layer the depth plugin's manifest enables it from (plugins/depth; a test holds the two alike). */
export const DEPTH_PLUGIN_LAYER: LayerId = 'layer3';

/**
 * depth_fusion: monocular depth and spatial fusion (the depth plugin, a stage of the detection
 * pipeline), from the plugin state the device reports; the x, y, z its newest dets carry are shown,
 * not required (a scene without people has none).
 *  - not_applicable: the device runs below the depth layer, or its image carries no depth plugin
 *  - ready: the plugin runs (ok)
 *  - degraded: it is starting or degraded
 *  - not_ready: it failed or was skipped (e.g. the detector it needs failed); no answer
 */
export function gradeDepthFusion(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'state of the depth plugin the device reports, and the x, y, z in its newest dets');
  const gate = pluginGate(facts, g, 'depth', () => {
    const layer = LAYER_IDS.find((id) => id === facts.layer);
    if (layer && LAYER_IDS.indexOf(layer) < LAYER_IDS.indexOf(DEPTH_PLUGIN_LAYER)) {
      return `the device runs ${layer}, below the depth layer (${DEPTH_PLUGIN_LAYER})`;
    }
    return `the device reports no depth plugin${facts.layer ? ` at ${facts.layer}` : ''}: its image (${facts.registered?.image ?? 'unknown'}) does not carry it`;
  });
  if (!gate.applies) return gate.result;
  const value = { plugin: pluginValue(gate.plugin), newest_dets: facts.dets };
  const notOk = pluginNotOk(gate.plugin);
  return notOk ? g.degraded(value, notOk) : g.ready(value);
}
