#!/usr/bin/env node
// Operator CLI. The compiled entry lives in dist/ (run `npm run build` first).
import('../dist/operator/src/lookout-cli.js')
  .then((cli) => cli.main(process.argv.slice(2)))
  .then((code) => process.exit(code ?? 0))
  .catch((err) => {
    console.error(err?.code === 'ERR_MODULE_NOT_FOUND' ? 'lookout is not built: run `npm run build`' : err);
    process.exit(1);
  });
