/** `lookout/lib/limits`: Bounds on work: an admission queue (so many at once, so many waiting), a per-key rate limiter, a serial queue and a bounded parallel map. */
export * from './admission-queue.js';
export * from './keyed-rate-limiter.js';
export * from './map-bounded.js';
export * from './serial-queue.js';
