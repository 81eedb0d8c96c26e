import { serviceToken } from 'lookout/core';

/** How an ontology's ids relate to the fleet's: the production precomp map, the Omni 15-class map, or its own. */
export type OntologyClassMap = 'production' | 'omni15' | 'custom';

/** ontology_config.json: the class list (index = class id) the builder trains and compiles labels from. */
export interface OntologyConfig {
  name: string;
  class_map: OntologyClassMap;
  classes: string[];
}

/** labels.json as compiled (the package stage adds train_job_id and input_shape beside these). */
export interface CompiledLabels {
  ontology: string;
  version: string;
  ontology_hash: string;
  class_map: OntologyClassMap;
  classes: string[];
  /** Model class id → production id, for every class the fleet knows (person to 0); absent for a production map. */
  remap?: Record<string, number>;
  compiled_at: string;
}

export interface OntologyService {
  config(name: string): OntologyConfig | undefined;
  /** The newest compiled labels, or the given version's. */
  labels(name: string, version?: string): CompiledLabels | undefined;
}

export const ONTOLOGY = serviceToken<OntologyService>('builder.ontology');
