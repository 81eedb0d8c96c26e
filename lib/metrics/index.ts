/** `lookout/lib/metrics`: Device gauges read from bus messages (what the hub's /metrics and readiness sample). */
export * from './device-gauges.js';
