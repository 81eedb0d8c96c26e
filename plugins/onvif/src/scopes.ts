/** The ONVIF scopes of the device (GetScopes, WS-Discovery ProbeMatch and Hello). */
export function onvifScopes(o: { name: string; hardware: string; location?: string }): string[] {
  const scope = (path: string): string => `onvif://www.onvif.org/${path}`;
  return [
    // Home Assistant's discovery keeps only devices with Profile/Streaming.
    scope('Profile/Streaming'),
    scope('Profile/S'),
    scope('Profile/T'),
    scope('type/video_encoder'),
    scope('type/Network_Video_Transmitter'),
    scope(`name/${encodeURIComponent(o.name)}`),
    scope(`hardware/${encodeURIComponent(o.hardware)}`),
    ...(o.location ? [scope(`location/${encodeURIComponent(o.location)}`)] : []),
  ];
}

/** The scopes a client may not change (SetScopes replaces only the others: name and location). */
export function isFixedScope(scope: string): boolean {
  return !/^onvif:\/\/www\.onvif\.org\/(name|location)\//.test(scope);
}
