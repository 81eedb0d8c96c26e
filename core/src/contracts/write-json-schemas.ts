import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { writeFileAtomic } from '../paths/atomic-write.js';
import { CONTRACT_SCHEMAS, busSuffixesOf, type ContractName } from './all-schemas.js';

export interface SchemaIndexEntry {
  name: ContractName;
  file: string;
  title: string;
  /** Bus topic suffixes whose payloads this schema describes. */
  topics: string[];
}

/** The JSON Schema (draft 2020-12) of one contract, titled by its name. */
export function contractJsonSchema(name: ContractName): Record<string, unknown> {
  const schema = CONTRACT_SCHEMAS[name];
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  const { $schema, ...rest } = json;
  return { $schema, title: name, ...rest };
}


/** Writes `<outDir>/<name>.schema.json` for every contract and `<outDir>/index.json`; returns the index. */
export async function writeJsonSchemas(outDir: string): Promise<SchemaIndexEntry[]> {
  await mkdir(outDir, { recursive: true });
  const index: SchemaIndexEntry[] = [];
  for (const name of Object.keys(CONTRACT_SCHEMAS) as ContractName[]) {
    const file = `${name}.schema.json`;
    const json = contractJsonSchema(name);
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
  writeJsonSchemas(outDir).then(
    (index) => console.log(`wrote ${index.length} JSON Schemas to ${outDir}`),
    (err: unknown) => {
      console.error(`writing JSON Schemas failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
