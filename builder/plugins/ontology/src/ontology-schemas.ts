import { z } from 'lookout/core';
import { PRESET_NAMES } from './class-map-presets.js';

export const ClassName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_ -]{0,63}$/, 'a class name: letters, digits, _ - and spaces, at most 64, starting with a letter or digit')
  .describe('a class name, e.g. handgun');
export const OntologyName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'an ontology name: lower-case letters, digits, _ and -, at most 64')
  .describe('the ontology (default: default)');

export const OntologyQuery = z.object({ ontology: OntologyName.default('default') });
const ClassMapEnum = z.enum(['production', 'omni15', 'custom']);

export const OntologyConfigSchema = z.object({
  name: OntologyName,
  class_map: ClassMapEnum.default('custom'),
  classes: z.array(ClassName).max(1000).describe('class names; the index is the class id'),
});

export const OntologyView = z.object({
  name: z.string(),
  class_map: ClassMapEnum,
  classes: z.array(z.object({ id: z.number().int(), name: z.string() })),
  person_id_expected: z.number().int().nullable().describe("where the fleet's remap expects person (the last compile's id, or the imported map's)"),
  versions: z.array(z.object({ version: z.string(), hash: z.string(), created_at: z.string() })),
});

export const LabelsSchema = z.object({
  ontology: z.string(),
  version: z.string(),
  ontology_hash: z.string(),
  class_map: ClassMapEnum,
  classes: z.array(z.string()),
  remap: z.record(z.string(), z.number().int()).optional(),
  compiled_at: z.string(),
});

export const AddClassesBody = z.object({ ontology: OntologyName.default('default'), classes: z.array(ClassName).min(1).max(1000) }).strict();
export const ImportBody = z.object({ map: z.enum(PRESET_NAMES), ontology: OntologyName.optional().describe('default: the map name') }).strict();
export const CompileBody = z
  .object({
    ontology: OntologyName.default('default'),
    config: OntologyConfigSchema.optional().describe('an ontology_config.json to store under its name and compile'),
    person_id: z
      .number()
      .int()
      .min(0)
      .nullable()
      .optional()
      .describe("acknowledges person's new id (null: person removed) when it moves off the id the fleet's remap expects"),
  })
  .strict();
