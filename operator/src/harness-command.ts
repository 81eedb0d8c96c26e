import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { LookoutError, packageVersion } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { formatMismatches, mismatches, type Mismatch } from './harness/expectation.js';
import { BASE_EXITS, defineCommand } from './command-spec.js';

const USAGE = 'lookout harness --mode live-mcp <scenarios.yaml|json>… [--url <tool server url>] [--json]';

const ABOUT = `The live tool harness (spec 02's test_harness --mode live-mcp): each scenario file names a device's
MCP tool server and cases: a tool, its arguments and what the answer must hold. Every case is a real
tools/call against the live device; a failing expectation shows the diff (each path, expected and
actual). Exits 0 when every case passed, 7 when one failed, 5 when a tool server cannot be reached.

Scenario file:
  url: http://10.0.0.21:8765/mcp          # the tool server (or --url); the token from $LOOKOUT_TOOL_TOKEN
  cases:
    - name: firmware names its layer
      tool: get_firmware_status
      args: {}
      expect: { layer: layer2, runtime_version: "/^0\\\\./" }   # a subset of the answer; "/…/" is a regular expression
    - name: an empty profile update is refused
      tool: set_camera_profile
      args: {}
      expect_error: true

Options:
  --mode live-mcp            the only mode: tool calls against live devices
  --url <url>                the tool server for files that name none
  --timeout-ms <n>           per call (default 15000)
  --json                     the results as one JSON object`;

const EXAMPLES = [
  `LOOKOUT_TOOL_TOKEN=… lookout harness --mode live-mcp scenarios/tools-layer2.yaml`,
  `lookout harness --mode live-mcp a.yaml b.json --url http://127.0.0.1:8765/mcp --json`,
];

const ScenarioSchema = z.strictObject({
  url: z.url().optional(),
  cases: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        tool: z.string().min(1),
        args: z.record(z.string(), z.unknown()).default({}),
        expect: z.unknown().optional(),
        expect_error: z.boolean().default(false),
      }),
    )
    .min(1),
});

interface CaseResult {
  file: string;
  name: string;
  tool: string;
  passed: boolean;
  mismatches: Mismatch[];
  error?: string;
}

async function readScenario(path: string): Promise<z.output<typeof ScenarioSchema>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LookoutError('config_invalid', `scenario ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      details: { usage: true },
    });
  }
  let raw: unknown;
  try {
    raw = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new LookoutError('config_invalid', `scenario ${path} cannot be parsed: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = ScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LookoutError('config_invalid', `scenario ${path}: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The answer a case judges: the structured content, else the text content as JSON, else the text. */
function answerOf(answer: object): unknown {
  const result = answer as { structuredContent?: unknown; content?: unknown };
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = (result.content as { type?: string; text?: string }[] | undefined)?.find((c) => c.type === 'text')?.text;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export const harnessCommand = defineCommand({
  summary: 'live tool scenarios (--mode live-mcp): tools/call against live devices with expected results; a failing expectation shows the diff',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...BASE_EXITS, EXIT.unreachable, EXIT.checkFailed],
  options: { mode: { type: 'string' }, url: { type: 'string' }, 'timeout-ms': { type: 'string', default: '15000' }, json: { type: 'boolean', default: false } },
  async run({ values, positionals }) {
    if (values.mode !== 'live-mcp')
      throw new LookoutError('config_invalid', `--mode: live-mcp is the harness's mode, not ${values.mode ?? '(none)'}`, { details: { usage: true } });
    if (positionals.length === 0) throw new LookoutError('config_invalid', `harness needs scenario files: ${USAGE}`, { details: { usage: true } });
    const timeout = Number(values['timeout-ms']);
    if (!Number.isInteger(timeout) || timeout < 100)
      throw new LookoutError('config_invalid', `--timeout-ms: at least 100, not "${values['timeout-ms']}"`, { details: { usage: true } });
    const token = process.env.LOOKOUT_TOOL_TOKEN;

    const results: CaseResult[] = [];
    for (const file of positionals) {
      const scenario = await readScenario(file);
      const url = scenario.url ?? values.url;
      if (!url) throw new LookoutError('config_invalid', `${file} names no url, and no --url was given`, { details: { usage: true } });
      const client = new Client({ name: 'lookout-harness', version: packageVersion() });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
      } catch (err) {
        throw new LookoutError('device_unreachable', `the tool server at ${url} cannot be reached: ${(err as Error).message}`, {
          details: { url, unreachable: true },
        });
      }
      try {
        for (const c of scenario.cases) {
          let result: CaseResult;
          try {
            const answer = await client.callTool({ name: c.tool, arguments: c.args }, undefined, { timeout });
            const isError = answer.isError === true;
            if (isError !== c.expect_error) {
              result = {
                file,
                name: c.name,
                tool: c.tool,
                passed: false,
                mismatches: [{ path: '$.isError', expected: c.expect_error, actual: isError }],
                error: isError ? JSON.stringify(answerOf(answer)) : undefined,
              };
            } else {
              const found = c.expect === undefined ? [] : mismatches(c.expect, answerOf(answer));
              result = { file, name: c.name, tool: c.tool, passed: found.length === 0, mismatches: found };
            }
          } catch (err) {
            // A protocol error (unknown tool, arguments refused by the schema) is the device's answer too.
            const message = (err as Error).message;
            result = c.expect_error
              ? { file, name: c.name, tool: c.tool, passed: true, mismatches: [] }
              : {
                  file,
                  name: c.name,
                  tool: c.tool,
                  passed: false,
                  mismatches: [{ path: '$', expected: c.expect ?? 'an answer', actual: `error: ${message}` }],
                  error: message,
                };
          }
          results.push(result);
          if (!values.json) {
            console.log(`${result.passed ? 'ok  ' : 'FAIL'} ${file}: ${c.name} (${c.tool})`);
            if (!result.passed) console.log(formatMismatches(result.mismatches));
          }
        }
      } finally {
        await client.close();
      }
    }
    const failed = results.filter((r) => !r.passed).length;
    if (values.json) console.log(JSON.stringify({ passed: failed === 0, cases: results.length, failed, results }));
    else console.log(`\n${results.length - failed} of ${results.length} cases passed`);
    return failed === 0 ? 0 : EXIT.checkFailed;
  },
});
