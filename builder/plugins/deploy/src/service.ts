import { serviceToken } from 'lookout/core';

/**
 * Builder stage 5b, deploy: a package to a canary first, its detector checked, a soak, then the rest
 * of the fleet, through the operator's push-models and apply-layer over SSH; a failure rolls the
 * devices touched back to their previous package or to the pure-encode layer. Every deployment is
 * kept: what runs where, since when.
 */
export interface DeploymentRecord {
  id: number;
  job_id: string;
  device: string;
  role: 'canary' | 'fleet';
  package_id: string;
  package_version: string;
  /** active: runs there now; replaced: a later one runs; rolled_back: undone by its job's rollback. */
  state: 'active' | 'replaced' | 'rolled_back';
  since: string;
  until: string | null;
}

export interface DeploymentService {
  /** What runs on a device now, if the builder deployed it. */
  active(device: string): DeploymentRecord | undefined;
  list(filter?: { device?: string; package_id?: string }): DeploymentRecord[];
}

export const DEPLOYMENTS = serviceToken<DeploymentService>('builder.deployments');
