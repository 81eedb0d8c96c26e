/** `lookout/lib/net`: Network helpers: device address rules, loopback checks, the LAN address, listening, byte ranges, a chat completions client. */
export * from './byte-range.js';
export * from './chat-completion.js';
export * from './device-networks.js';
export * from './is-loopback.js';
export * from './lan-address.js';
export * from './listen.js';
