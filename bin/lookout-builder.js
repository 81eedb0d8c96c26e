#!/usr/bin/env node
// The builder CLI; the code is compiled TypeScript (npm run build).
import { main } from '../dist/builder/src/builder-cli.js';

await main();
