import { definePlugin, LookoutError, reply, z } from 'lookout/core';
import { BUILDER_DB } from 'lookout/builder-plugins/store';
import { ONTOLOGY } from './service.js';
import { OntologyStore } from './ontology-store.js';
import { ONTOLOGY_MIGRATIONS } from './ontology-schema.js';
import { CLASS_MAP_PRESETS, preset } from './class-map-presets.js';
import { AddClassesBody, ClassName, CompileBody, ImportBody, LabelsSchema, OntologyConfigSchema, OntologyQuery, OntologyView } from './ontology-schemas.js';

const config = z.object({ LOOKOUT_BUILDER_MAX_CLASSES: z.coerce.number().int().min(1).max(10_000).default(1000) });
type Q = z.output<typeof OntologyQuery>;

/** Stage 1: the class lists (ontology_config.json) and their compiled, versioned labels.json. */
export default definePlugin({
  name: 'ontology',
  version: '1.0.0',
  core: '^1',
  description: 'Builder stage 1: ontologies (classes by name), the spec’s class maps, compiled labels.json with a stable hash',
  config,
  requires: [BUILDER_DB],
  provides: [ONTOLOGY],
  errors: [
    { code: 'ontology_unknown', status: 404, description: 'no ontology of that name' },
    { code: 'class_unknown', status: 404, description: 'the ontology has no class of that name' },
    { code: 'class_exists', status: 409, description: 'the ontology already has a class of that name' },
    { code: 'ontology_empty', status: 409, description: 'the ontology has no classes to compile' },
    { code: 'person_id_moved', status: 409, description: "the compile would move person off the id the fleet's remap expects (send person_id to mean it)" },
  ],
  routes: [
    { method: 'GET', path: '/api/ontologies', summary: 'The ontologies and the class maps importable as ontologies', response: z.looseObject({}) },
    {
      method: 'GET',
      path: '/api/ontology',
      summary: "An ontology's classes (id = position), versions and person id",
      query: OntologyQuery,
      errors: ['ontology_unknown'],
      response: OntologyView,
    },
    {
      method: 'POST',
      path: '/api/ontology',
      summary: 'Add classes by name (appended; an ontology that does not exist is created)',
      body: AddClassesBody,
      errors: ['class_exists'],
      response: OntologyView,
    },
    {
      method: 'DELETE',
      path: '/api/ontology/classes/:name',
      summary: 'Remove a class by name (the classes after it move up one id)',
      params: { name: 'the class name' },
      query: OntologyQuery,
      errors: ['ontology_unknown', 'class_unknown'],
      response: OntologyView,
    },
    {
      method: 'DELETE',
      path: '/api/ontology',
      summary: 'Delete an ontology and its compiled versions',
      query: OntologyQuery,
      errors: ['ontology_unknown'],
      statuses: [204],
    },
    {
      method: 'POST',
      path: '/api/ontology/import',
      summary: 'Import a class map of the spec (weapons default, production precomp, Omni 15) as an ontology',
      body: ImportBody,
      response: OntologyView,
    },
    {
      method: 'GET',
      path: '/api/ontology/config',
      summary: 'ontology_config.json of an ontology',
      query: OntologyQuery,
      errors: ['ontology_unknown'],
      response: OntologyConfigSchema,
    },
    {
      method: 'POST',
      path: '/api/ontology/compile',
      summary: 'Compile ontology_config.json into labels.json (stable content hash, versioned; person guarded)',
      description:
        'The same classes as the newest version answer that version (200); other classes a new one (201). A class list that moves person off the id the fleet’s remap expects is refused with ontology.person_id_moved naming the class, unless person_id says the new id.',
      body: CompileBody,
      statuses: [201],
      errors: ['ontology_unknown', 'ontology_empty', 'person_id_moved'],
      response: LabelsSchema,
    },
    {
      method: 'GET',
      path: '/api/ontology/labels',
      summary: 'labels.json of an ontology: the newest version, or `version`',
      query: OntologyQuery.extend({
        version: z
          .string()
          .regex(/^v?\d+$/)
          .optional(),
      }),
      errors: ['ontology_unknown'],
      response: LabelsSchema,
    },
  ],
  start(ctx) {
    const { db, migrate } = ctx.services.get(BUILDER_DB);
    migrate('ontology', ONTOLOGY_MIGRATIONS);
    const store = new OntologyStore(db, ctx.config.LOOKOUT_BUILDER_MAX_CLASSES);
    // A builder that has never run starts with the spec's weapons default as "default".
    const weapons = preset('weapons')!;
    if (!store.config('default')) store.put({ name: 'default', class_map: weapons.class_map, classes: [...weapons.classes] });
    ctx.services.provide(ONTOLOGY, store);

    const view = (name: string) => {
      const c = store.require(name);
      return {
        name,
        class_map: c.class_map,
        classes: c.classes.map((n, id) => ({ id, name: n })),
        person_id_expected: store.personIdExpected(name) ?? null,
        versions: store.versions(name),
      };
    };
    ctx.routes.handle('GET', '/api/ontologies', () => ({
      ontologies: store.names(),
      class_maps: CLASS_MAP_PRESETS.map((p) => ({ name: p.name, description: p.description, class_map: p.class_map, classes: p.classes })),
    }));
    ctx.routes.handle<Q>('GET', '/api/ontology', ({ query }) => view(query.ontology));
    ctx.routes.handle<unknown, z.output<typeof AddClassesBody>>('POST', '/api/ontology', ({ body }) => {
      if (!store.config(body.ontology)) store.put({ name: body.ontology, class_map: 'custom', classes: [] });
      store.add(body.ontology, body.classes);
      return view(body.ontology);
    });
    ctx.routes.handle<Q>('DELETE', '/api/ontology/classes/:name', ({ query, params }) => {
      const name = ClassName.safeParse(params.name);
      if (!name.success)
        throw new LookoutError('ontology.class_unknown', `ontology "${query.ontology}" has no class "${params.name}"`, { details: { class: params.name } });
      store.remove(query.ontology, name.data);
      return view(query.ontology);
    });
    ctx.routes.handle<Q>('DELETE', '/api/ontology', ({ query }) => {
      store.delete(query.ontology);
      return undefined;
    });
    ctx.routes.handle<unknown, z.output<typeof ImportBody>>('POST', '/api/ontology/import', ({ body }) => {
      const p = preset(body.map)!;
      const name = body.ontology ?? p.name;
      store.put({ name, class_map: p.class_map, classes: [...p.classes] }, p.person_id);
      return view(name);
    });
    ctx.routes.handle<Q>('GET', '/api/ontology/config', ({ query }) => store.require(query.ontology));
    ctx.routes.handle<unknown, z.output<typeof CompileBody>>('POST', '/api/ontology/compile', ({ body }) => {
      const name = body.config?.name ?? body.ontology;
      if (body.config) store.put(body.config);
      const { labels, created } = store.compile(name, body.person_id);
      return reply({ status: created ? 201 : 200, body: labels });
    });
    ctx.routes.handle<Q & { version?: string }>('GET', '/api/ontology/labels', ({ query }) => {
      store.require(query.ontology);
      const labels = store.labels(query.ontology, query.version);
      if (!labels) {
        throw new LookoutError(
          'ontology.ontology_unknown',
          `ontology "${query.ontology}" has no compiled labels${query.version ? ` ${query.version}` : ''}; POST /api/ontology/compile`,
          {
            details: { ontology: query.ontology, version: query.version ?? null },
          },
        );
      }
      return labels;
    });
  },
});
