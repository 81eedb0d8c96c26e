const ONVIF = 'onvif://www.onvif.org/';

/** What the scopes say when the ONVIF service's own list leaves a category out. */
export interface ScopeDefaults {
  name: string;
  hardware: string;
  location: string;
}

/** A scope path segment: spaces and reserved characters percent-encoded. */
function segment(value: string): string {
  return encodeURIComponent(value);
}

/**
 * The scopes discovery announces: the ONVIF service's (the same list GetScopes answers), with each
 * category a client filters or shows on filled in when it is missing: Profile/Streaming (Home
 * Assistant's filter), Profile/T, type/video_encoder, and name, hardware and location (node-onvif-ts
 * shows name and hardware).
 */
export function discoveryScopes(onvifScopes: readonly string[], defaults: ScopeDefaults): string[] {
  const scopes = [...new Set(onvifScopes.map((s) => s.trim()).filter(Boolean))];
  const has = (prefix: string) => scopes.some((s) => s === ONVIF + prefix || s.startsWith(`${ONVIF}${prefix}/`));
  const wanted: [string, string][] = [
    ['Profile/Streaming', `${ONVIF}Profile/Streaming`],
    ['Profile/T', `${ONVIF}Profile/T`],
    ['type/video_encoder', `${ONVIF}type/video_encoder`],
    ['name', `${ONVIF}name/${segment(defaults.name)}`],
    ['hardware', `${ONVIF}hardware/${segment(defaults.hardware)}`],
    ['location', `${ONVIF}location/${segment(defaults.location)}`],
  ];
  for (const [prefix, scope] of wanted) if (!has(prefix)) scopes.push(scope);
  return scopes;
}
