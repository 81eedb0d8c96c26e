// The operation guard moved to lookout/core (core/src/ssh), shared with the operator CLI.
export { abortError, guarded, type GuardOptions } from 'lookout/core';
