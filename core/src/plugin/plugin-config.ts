import { z } from 'zod';
import { LookoutError } from '../errors/lookout-error.js';
import { REDACTED } from '../log/logger.js';

/** Config keys whose values are secrets (MESH_HMAC_KEY, DEVICE_PASSWORD, LOOKOUT_TOKEN…): named in errors, never shown. */
const SECRET_KEY_NAME = /(?:^|_)(?:PASS|PASSWD|PASSWORD|SECRET|TOKEN|KEY|PRIVATE)(?:_|$)/i;

/**
 * Parses a plugin's declared keys from the environment of its layer. A bad value stops start-up
 * with a message naming the key, where it came from and what is valid.
 */
export function parsePluginConfig(
  plugin: string,
  schema: z.ZodObject | undefined,
  env: Record<string, string | undefined>,
  source: string,
): Record<string, unknown> {
  if (!schema) return {};
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) if (env[key] !== undefined) input[key] = env[key];
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = String(issue.path[0] ?? '');
  const valid = describeValid(issue);
  const value = input[key];
  const shown = value === undefined ? '(unset)' : SECRET_KEY_NAME.test(key) ? REDACTED : JSON.stringify(value);
  throw new LookoutError(
    'config_invalid',
    `${key}=${shown} in ${source} is invalid for plugin "${plugin}": ${issue.message}${valid ? `; valid values: ${valid}` : ''}`,
    { details: { plugin, key, source, issues: parsed.error.issues } },
  );
}

function describeValid(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code === 'invalid_value') return issue.values.map((v) => String(v)).join(', ');
  if (issue.code === 'too_small') return `at least ${String(issue.minimum)}`;
  if (issue.code === 'too_big') return `at most ${String(issue.maximum)}`;
  if (issue.code === 'invalid_type') return `a ${issue.expected}`;
  return undefined;
}

/** Every key a set of plugins declares, for the unknown-key warning. */
export function declaredKeys(schemas: (z.ZodObject | undefined)[]): Set<string> {
  const keys = new Set<string>();
  for (const s of schemas) if (s) for (const k of Object.keys(s.shape)) keys.add(k);
  return keys;
}
