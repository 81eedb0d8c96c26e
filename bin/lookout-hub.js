#!/usr/bin/env node
// The hub CLI; the code is compiled TypeScript (npm run build).
import { main } from '../dist/hub/src/hub-cli.js';

await main();
