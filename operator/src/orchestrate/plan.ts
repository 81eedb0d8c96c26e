import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { LookoutError } from 'lookout/core';

/** The commands a plan may run on each device, and which of their options are positional (in order). */
export const STEP_POSITIONALS = {
  'apply-layer': ['layer', '$device'],
  'push-models': ['$device', 'files'],
  deploy: ['$device'],
  'soak-gate': ['$device', 'minutes'],
  'prune-recordings': ['$device'],
} as const;
export type StepCommand = keyof typeof STEP_POSITIONALS;

const SSH = ['root', 'registry', 'known-hosts', 'hub-data-dir', 'connect-timeout-ms', 'timeout-ms'];
const BUS = ['mqtt', 'mqtt-username', 'wait-s', 'service-command'];
/** Which plan defaults each command takes: a default reaches only the steps that know it. */
const ACCEPTS: Record<StepCommand, ReadonlySet<string>> = {
  'apply-layer': new Set([...SSH, ...BUS]),
  'push-models': new Set([...SSH, 'bandwidth']),
  deploy: new Set([...SSH, ...BUS, 'bundle', 'arch']),
  'soak-gate': new Set([...SSH, 'interval-s', 'warn-c', 'min-rate', 'stall-s', 'temp-file', 'recordings-dir']),
  'prune-recordings': new Set([...SSH, 'recordings-dir']),
};

const OptionValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
const StepSchema = z
  .partialRecord(z.enum(Object.keys(STEP_POSITIONALS) as [StepCommand, ...StepCommand[]]), z.record(z.string(), OptionValue).nullable())
  .refine((s) => Object.keys(s).length === 1, 'each step names one command, e.g. { soak-gate: { minutes: 10 } }');

/**
 * A plan for `lookout orchestrate` (YAML or JSON): the devices, options every step gets (root,
 * registry, mqtt…), the steps in order, and for --matrix the layers each device runs the steps under.
 */
export const PlanSchema = z.strictObject({
  devices: z.array(z.string().min(1)).min(1),
  defaults: z.record(z.string(), OptionValue).default({}),
  steps: z.array(StepSchema).default([]),
  matrix: z
    .strictObject({
      layers: z.array(z.string().min(1)).min(1),
      /** Restart the runtime after each layer and wait for its hello (default true). */
      restart: z.boolean().default(true),
    })
    .optional(),
});
export type Plan = z.output<typeof PlanSchema>;

export interface PlannedStep {
  command: StepCommand;
  options: Record<string, string | number | boolean | string[]>;
}

export async function readPlan(path: string): Promise<Plan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LookoutError('config_invalid', `plan ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      details: { usage: true, file: path },
    });
  }
  let raw: unknown;
  try {
    raw = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new LookoutError('config_invalid', `plan ${path} is not ${/\.json$/i.test(path) ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`, {
      details: { file: path },
    });
  }
  const parsed = PlanSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LookoutError('config_invalid', `plan ${path}: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`, {
      details: { file: path, issues: parsed.error.issues },
    });
  }
  return parsed.data;
}

export function stepsOf(plan: Plan): PlannedStep[] {
  return plan.steps.map((s) => {
    const [command, options] = Object.entries(s)[0] as [StepCommand, PlannedStep['options'] | null];
    return { command, options: options ?? {} };
  });
}

/** The `lookout` arguments of a step on a device: its positionals in order, then --key value for the rest. */
export function stepArgs(step: PlannedStep, device: string, defaults: PlannedStep['options']): string[] {
  const positionalNames: readonly string[] = STEP_POSITIONALS[step.command];
  const accepted = ACCEPTS[step.command];
  const options = { ...Object.fromEntries(Object.entries(defaults).filter(([k]) => accepted.has(k))), ...step.options };
  const args: string[] = [step.command];
  for (const name of positionalNames) {
    if (name === '$device') {
      args.push(device);
      continue;
    }
    const value = options[name];
    if (value === undefined) {
      if (name === 'files') continue;
      throw new LookoutError('config_invalid', `step ${step.command} needs ${name}`, { details: { step: step.command } });
    }
    args.push(...(Array.isArray(value) ? value : [String(value)]));
  }
  for (const [key, value] of Object.entries(options)) {
    if (positionalNames.includes(key) || value === false) continue;
    if (value === true) args.push(`--${key}`);
    else for (const v of Array.isArray(value) ? value : [value]) args.push(`--${key}`, String(v));
  }
  return args;
}
