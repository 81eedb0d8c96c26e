#!/usr/bin/env node
// The device runtime CLI; the code is compiled TypeScript (npm run build).
import { main } from '../dist/edge/src/edge-cli.js';

await main();
