/** `lookout/lib/random`: A seeded pseudo-random generator, so that simulations and tests replay the same run. */
export * from './seeded-random.js';
