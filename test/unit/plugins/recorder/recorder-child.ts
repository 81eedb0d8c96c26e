/**
 * A recorder in a process of its own, for the crash test: `node recorder-child.js <dataDir>` records
 * (real libx265, 5 fps, 2 s chunks) until it is killed, and says `recording` once it runs.
 */
import { startRecorder } from './recorder-harness.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: recorder-child <dataDir>');
await startRecorder({ dataDir, env: { CHUNK_SECONDS: '2' } });
process.stdout.write('recording\n');
setInterval(() => undefined, 60_000);
