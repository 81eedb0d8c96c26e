import type { JobState } from './service.js';

/**
 * The order of spec 02's stages: a job trains, then compiles its export, then deploys the package;
 * a compile or deploy job of its own starts at its stage. Any state but a terminal one may fail.
 */
const NEXT: Readonly<Record<JobState, readonly JobState[]>> = {
  QUEUED: ['TRAINING', 'COMPILING', 'DEPLOYING', 'FAILED'],
  TRAINING: ['TRAINING_COMPLETE', 'FAILED'],
  TRAINING_COMPLETE: ['COMPILING', 'FAILED'],
  COMPILING: ['COMPILE_COMPLETE', 'FAILED'],
  COMPILE_COMPLETE: ['DEPLOYING', 'FAILED'],
  DEPLOYING: ['DEPLOYED', 'FAILED'],
  DEPLOYED: [],
  FAILED: [],
};

/** States a client stops polling at (spec 02), though a completed stage may still go on to the next. */
export const SETTLED_STATES: readonly JobState[] = ['TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'DEPLOYED', 'FAILED'];
/** States an executor is working in: a restart interrupts them. */
export const RUNNING_STATES: readonly JobState[] = ['TRAINING', 'COMPILING', 'DEPLOYING'];

export function canTransition(from: JobState, to: JobState): boolean {
  return NEXT[from].includes(to);
}

export function isTerminal(state: JobState): boolean {
  return NEXT[state].length === 0;
}
