/**
 * A typed name for a service one plugin provides and others use. The phantom type makes
 * `ctx.services.get(token)` return the right type without casts at the use site.
 */
export interface ServiceToken<T> {
  readonly name: string;
  readonly __type?: T;
}

/** Makes the token for a service; provider and users share it (export it from the provider's `service.ts`). */
export function serviceToken<T>(name: string): ServiceToken<T> {
  return Object.freeze({ name });
}
