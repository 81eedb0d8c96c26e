/** What fleet-events publishes for other code to read: the device card its `device` events carry (the console renders it). */
export type { DeviceCard, Presence } from './device-card.js';
