/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against a real
 * device's tool server and the real hub's /mcp, as a new user would run it
 * (`conformance server --url <url> --scenario <name>`): every scenario that applies to any server
 * passes on both; the others are listed with why in mcp-conformance-scenarios.ts, which must name
 * every scenario the suite lists. Before issue 33 the device's dns-rebinding-protection passed 1 of
 * 2 (its own loopback Origin was refused).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { APPLICABLE_SCENARIOS, NOT_APPLICABLE_SCENARIOS } from './mcp-conformance-scenarios.js';
import { startMcpFleet, type McpFleet } from './hub-mcp-fixture.js';

const require = createRequire(import.meta.url);
const SUITE = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
/** Generous: one scenario takes well under a second; a loaded CI machine is slow. */
const SCENARIO_TIMEOUT_MS = 60_000;

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs the suite's CLI (a child process: the hub under test lives in this one) and collects its output. */
function runSuite(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUITE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCENARIO_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** One scenario against a server: its checks as the suite saved them (checks.json). */
async function scenario(url: string, name: string, outDir: string): Promise<{ checks: Check[]; code: number | null; output: string }> {
  const dir = mkdtempSync(join(outDir, `${name}-`));
  const { code, output } = await runSuite(['server', '--url', url, '--scenario', name, '--output-dir', dir]);
  const saved = readdirSync(dir).map((d) => join(dir, d, 'checks.json'));
  assert.equal(saved.length, 1, `${name}: one result folder (exit ${code}):\n${output}`);
  return { checks: JSON.parse(readFileSync(saved[0], 'utf8')) as Check[], code, output };
}

describe('the MCP conformance suite against a device’s tool server and the hub’s /mcp', () => {
  let fleet: McpFleet;
  let outDir: string;

  before(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
    fleet = await startMcpFleet({ deviceId: 'cam-conformance' });
  });
  after(async () => {
    await fleet?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('classifies every server scenario the suite lists (applicable, or not applicable with why)', async () => {
    const { code, output } = await runSuite(['list', '--server']);
    assert.equal(code, 0, output);
    const listed = output
      .split('\n')
      .map((l) => /^\s*-\s+(\S+)\s*$/.exec(l)?.[1])
      .filter((s): s is string => s !== undefined);
    assert.ok(listed.length > 10, output);
    const classified = [...APPLICABLE_SCENARIOS, ...Object.keys(NOT_APPLICABLE_SCENARIOS)].sort();
    assert.deepEqual(classified, [...listed].sort());
  });

  for (const target of ['device', 'hub'] as const) {
    for (const name of APPLICABLE_SCENARIOS) {
      it(`${target}: ${name} passes`, async () => {
        const url = target === 'device' ? fleet.deviceUrl : fleet.hubMcpUrl;
        const { checks, code, output } = await scenario(url, name, outDir);
        assert.ok(checks.length > 0, output);
        const notPassed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
        assert.deepEqual(
          notPassed.map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`),
          [],
          output,
        );
        assert.equal(code, 0, output);
      });
    }
  }
});
