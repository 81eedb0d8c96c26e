import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { writeFileAtomic } from '../paths/atomic-write.js';
import { CONTRACT_SCHEMAS, busSuffixesOf, type ContractName } from './all-schemas.js';
import { errorTable, registerPluginErrors, type ErrorTableEntry } from '../errors/error-table.js';
import { firstPartyPlugins } from '../images/first-party-plugins.js';
import type { Plugin } from '../plugin/context.js';

export interface SchemaIndexEntry {
  name: ContractName;
  file: string;
  title: string;
  /** Bus topic suffixes whose payloads this schema describes. */
  topics: string[];
}

/** The JSON Schema (draft 2020-12) of one contract, titled by its name; the error body's code lists `errors`. */
export function contractJsonSchema(name: ContractName, errors: ErrorTableEntry[] = errorTable()): Record<string, unknown> {
  const schema = CONTRACT_SCHEMAS[name];
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  const { $schema, ...rest } = json;
  if (name === 'error-body') {
    const error = (rest.properties as { error: { properties: Record<string, Record<string, unknown>> } }).error;
    error.properties.code = { ...error.properties.code, enum: errors.map((e) => e.code) };
  }
  return { $schema, title: name, ...rest };
}

/** Writes `<outDir>/<name>.schema.json` for every contract and `<outDir>/index.json`; returns the index. */
export async function writeJsonSchemas(outDir: string, plugins: Plugin[] = []): Promise<SchemaIndexEntry[]> {
  await mkdir(outDir, { recursive: true });
  for (const p of plugins) registerPluginErrors(p.name, p.errors ?? []);
  const errors = errorTable();
  await writeFileAtomic(join(outDir, 'error-codes.json'), `${JSON.stringify({ codes: errors }, null, 2)}\n`);
  const index: SchemaIndexEntry[] = [];
  for (const name of Object.keys(CONTRACT_SCHEMAS) as ContractName[]) {
    const file = `${name}.schema.json`;
    const json = contractJsonSchema(name, errors);
    await writeFileAtomic(join(outDir, file), `${JSON.stringify(json, null, 2)}\n`);
    index.push({ name, file, title: name, topics: busSuffixesOf(CONTRACT_SCHEMAS[name]) });
  }
  await writeFileAtomic(join(outDir, 'index.json'), `${JSON.stringify({ schemas: index }, null, 2)}\n`);
  return index;
}

/** dist/core/src/contracts/ → dist/schemas/ */
export function defaultSchemaDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'schemas');
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const outDir = process.argv[2] !== undefined ? resolve(process.argv[2]) : defaultSchemaDir();
  firstPartyPlugins()
    .then((plugins) => writeJsonSchemas(outDir, plugins))
    .then(
      (index) => console.log(`wrote ${index.length} JSON Schemas to ${outDir}`),
      (err: unknown) => {
        console.error(`writing JSON Schemas failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      },
    );
}
