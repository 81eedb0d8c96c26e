import { z } from 'zod';
import { LookoutError } from 'lookout/core';
import { SCENE_LABELS } from './scenario-classes.js';

/**
 * A simulated scene (configs/scenarios/*.json). Positions are pixels of the 640x640 frame (box
 * centre); sizes are metres and are projected with the camera's focal length at the object's depth,
 * so an object coming closer grows the way a real one would and box height agrees with depth.
 */

const colour = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'a colour as #rrggbb');

export const KeyframeSchema = z.strictObject({
  t: z.number().min(0).describe('seconds from the start of the scenario'),
  x: z.number().describe('box centre, pixels from the left edge'),
  y: z.number().describe('box centre, pixels from the top edge'),
  z: z.number().positive().describe('depth along the optical axis, metres'),
});

export const AttachSchema = z.strictObject({
  id: z.number().int().nonnegative().describe('the object this one moves with'),
  dx: z.number().default(0).describe('metres right of the parent centre'),
  dy: z.number().default(0).describe('metres below the parent centre'),
  dz: z.number().default(-0.05).describe('metres behind (+) or in front of (-) the parent'),
});

export const SceneObjectSchema = z.strictObject({
  id: z.number().int().nonnegative().describe('ground-truth identity'),
  class: z.enum(SCENE_LABELS),
  name: z.string().optional(),
  colour: colour.optional().describe('fill colour; a default per class when absent'),
  sizeM: z.tuple([z.number().positive(), z.number().positive()]).optional().describe('[width, height] in metres'),
  trajectory: z.array(KeyframeSchema).min(1).optional().describe('keyframes, linear in between, held at both ends'),
  attachTo: AttachSchema.optional().describe('instead of a trajectory: follow another object'),
  appearS: z.number().min(0).optional(),
  disappearS: z.number().min(0).optional(),
});

export const TemperaturePointSchema = z.strictObject({
  atS: z.number().min(0),
  celsius: z.number().min(-40).max(150),
});

export const BackgroundSchema = z.strictObject({
  sky: colour.default('#8a9aa6'),
  ground: colour.default('#6f7a5e'),
  horizonY: z.number().min(0).max(640).default(250),
  texture: z.number().min(0).max(64).default(14).describe('amplitude of the static texture'),
  sensorNoise: z.number().min(0).max(32).default(3).describe('amplitude of per-frame noise'),
});

export const ScenarioSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes')
      .optional(),
    description: z.string().optional(),
    durationS: z.number().positive(),
    fps: z.number().positive().max(60).default(10),
    seed: z.number().int().nonnegative().default(1),
    background: BackgroundSchema.prefault({}),
    temperature: z.array(TemperaturePointSchema).min(1).optional().describe('die temperature script for sim mode'),
    objects: z.array(SceneObjectSchema).min(1),
  })
  .superRefine((s, ctx) => {
    const byId = new Map<number, number>();
    s.objects.forEach((o, i) => {
      if (byId.has(o.id)) ctx.addIssue({ code: 'custom', path: ['objects', i, 'id'], message: `duplicate object id ${o.id}` });
      byId.set(o.id, i);
    });
    s.objects.forEach((o, i) => {
      const at = (field: string): PropertyKey[] => ['objects', i, field];
      if (!o.trajectory === !o.attachTo) {
        ctx.addIssue({ code: 'custom', path: at('trajectory'), message: 'give exactly one of trajectory or attachTo' });
      }
      o.trajectory?.forEach((k, j) => {
        if (j > 0 && k.t <= o.trajectory![j - 1].t) {
          ctx.addIssue({ code: 'custom', path: ['objects', i, 'trajectory', j, 't'], message: 'keyframe times must increase' });
        }
      });
      if (o.attachTo) {
        const parent = byId.get(o.attachTo.id);
        if (parent === undefined) {
          ctx.addIssue({ code: 'custom', path: ['objects', i, 'attachTo', 'id'], message: `no object with id ${o.attachTo.id}` });
        } else if (s.objects[parent].attachTo || parent === i) {
          ctx.addIssue({ code: 'custom', path: ['objects', i, 'attachTo', 'id'], message: 'must name an object that has a trajectory' });
        }
      }
      if (o.appearS !== undefined && o.disappearS !== undefined && o.disappearS <= o.appearS) {
        ctx.addIssue({ code: 'custom', path: at('disappearS'), message: 'must be after appearS' });
      }
    });
    s.temperature?.forEach((p, j) => {
      if (j > 0 && p.atS <= s.temperature![j - 1].atS) {
        ctx.addIssue({ code: 'custom', path: ['temperature', j, 'atS'], message: 'times must increase' });
      }
    });
  });

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;
export type SceneObject = Scenario['objects'][number];
export type Keyframe = z.output<typeof KeyframeSchema>;
export type TemperaturePoint = z.output<typeof TemperaturePointSchema>;

/** `objects[2].trajectory[0].z` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`;
  return out || '(root)';
}

/** Validates parsed JSON; a failure is a config_invalid error whose message names every bad field. */
export function parseScenario(value: unknown, source = 'scenario'): Scenario {
  const result = ScenarioSchema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({
    // An unknown key (often a typo) is reported at the key itself, not at its parent object.
    field: i.code === 'unrecognized_keys' ? i.keys.map((k) => formatPath([...i.path, k])).join(', ') : formatPath(i.path),
    message: i.message,
  }));
  const list = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  throw new LookoutError('config_invalid', `${source} is invalid: ${list}`, { details: { source, issues } });
}
