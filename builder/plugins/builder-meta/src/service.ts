import { serviceToken } from 'lookout/core';

/** Facts about the running builder that its meta routes show (no secrets). */
export interface BuilderInfo {
  version: string;
  startedAt: number;
  tokenRequired: boolean;
  /** Set once the HTTP server listens. */
  httpUrl?: string;
}

export const BUILDER_INFO = serviceToken<BuilderInfo>('builder.info');
