/**
 * Import cycles are refused (`npm run lint`, and test/lint/lint.test.ts): a module graph with a cycle
 * has an initialisation order that depends on which file is loaded first.
 *
 * Two kinds of edge do not count, each because it creates no such order:
 *  - `import type` (tsPreCompilationDeps false): erased at compile time, nothing is loaded;
 *  - `import()` (the dynamic-import exception below): a back-end's record (detector, depth) names its
 *    implementation and loads it only when that back-end is chosen, so that onnxruntime and the DSP
 *    addon are loaded only on the devices that run them; the implementation may then read its record.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'an import cycle: move what both sides need to a module of its own',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['dynamic-import'] } },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: false,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
