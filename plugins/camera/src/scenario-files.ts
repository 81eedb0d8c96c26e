import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { LookoutError, packageRoot } from 'lookout/core';
import { parseScenario, type Scenario } from './scenario-schema.js';

/** configs/scenarios under the package root, found from the module (not the cwd). */
export function scenariosDir(): string {
  return join(packageRoot(), 'configs', 'scenarios');
}

/** Names (file names without .json) of the bundled scenarios. */
export function listScenarios(dir: string = scenariosDir()): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** A bundled scenario name, or a path (anything with a slash or ending in .json, relative to the cwd). */
export function resolveScenarioPath(nameOrPath: string, dir: string = scenariosDir()): string {
  const isPath = nameOrPath.includes('/') || nameOrPath.includes('\\') || nameOrPath.endsWith('.json');
  const path = isPath ? (isAbsolute(nameOrPath) ? nameOrPath : resolve(nameOrPath)) : join(dir, `${nameOrPath}.json`);
  if (!existsSync(path)) {
    const known = listScenarios(dir);
    throw new LookoutError(
      'config_invalid',
      `SIM_SCENARIO: no scenario "${nameOrPath}" (${path} does not exist); bundled scenarios: ${known.join(', ') || 'none'}`,
      { details: { key: 'SIM_SCENARIO', value: nameOrPath, valid: known } },
    );
  }
  return path;
}

export interface LoadedScenario {
  name: string;
  path: string;
  scenario: Scenario;
}

export function loadScenarioFile(path: string): LoadedScenario {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new LookoutError('config_invalid', `scenario ${path} is not readable JSON: ${(err as Error).message}`, {
      cause: err,
      details: { source: path },
    });
  }
  const scenario = parseScenario(raw, `scenario ${path}`);
  return { name: scenario.name ?? basename(path, '.json'), path, scenario };
}

export function loadScenario(nameOrPath: string, dir?: string): LoadedScenario {
  return loadScenarioFile(resolveScenarioPath(nameOrPath, dir));
}
