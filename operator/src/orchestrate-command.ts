import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { LookoutError, packageRoot } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { defineCommand } from './command-spec.js';
import { readPlan, stepArgs, stepsOf, type PlannedStep } from './orchestrate/plan.js';

const USAGE = 'lookout orchestrate --batch <plan.yaml|json> [--matrix] [--prune-first] [--tap] [--json]';

const ABOUT = `Runs a pipeline of operator steps from a plan (spec 02's orchestrator): for each device in turn,
the steps in order, each a \`lookout <command>\` of its own (its output kept, its exit code judged);
a device's pipeline stops at its first failed step, the other devices go on. Ends with a summary
table, and exits 0 when every step passed, else with the exit code of the first failure.

Plan (YAML or JSON):
  devices: [cam-1, root@10.0.0.22]     # registry ids or addresses
  defaults: { registry: hub/registry.json, mqtt: "mqtt://10.0.0.2:1883" }   # given to the steps that take them
  steps:                                # apply-layer, push-models, deploy, soak-gate, prune-recordings
    - push-models: { files: [out/rfdetr_640.dlc] }
    - apply-layer: { layer: layer2, restart: true }
    - soak-gate: { minutes: 10 }
  matrix: { layers: [layer0, layer2, layer4] }   # with --matrix (restart: false to skip the restarts)

Options:
  --batch <file>             the plan
  --matrix                   run the steps once per layer of matrix.layers (apply-layer --restart first)
  --prune-first              prune-recordings before each device's steps (KEEP_CHUNKS from the environment)
  --tap                      record the bus of the whole run (lookout tap all) to taps/orchestrate-<time>.jsonl
  --json                     the summary as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout orchestrate --batch plans/canary.yaml --prune-first --tap`,
  `lookout orchestrate --batch plans/layers.json --matrix --json`,
];

export interface StepResult {
  device: string;
  layer: string | null;
  step: string;
  exit_code: number;
  seconds: number;
  /** The step's last line of output (stderr when it failed). */
  note: string;
}

function runStep(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'lookout.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-200_000)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-200_000)));
    child.once('exit', (code, signal) => resolvePromise({ code: code ?? (signal ? EXIT.failed : 0), stdout, stderr }));
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? '';
}

export function formatSummary(results: StepResult[]): string {
  const rows = results.map((r) => [r.device, r.layer ?? '—', r.step, r.exit_code === 0 ? 'ok' : `FAILED (exit ${r.exit_code})`, r.seconds.toFixed(1), r.note]);
  const head = ['device', 'layer', 'step', 'result', 's', 'note'];
  const widths = head.map((h, i) => Math.min(48, Math.max(h.length, ...rows.map((r) => r[i].length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export const orchestrateCommand = defineCommand({
  summary: 'run a plan of steps (YAML/JSON) on devices: --matrix layers, --prune-first, --tap; a summary table',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: Object.values(EXIT),
  options: {
    batch: { type: 'string' },
    matrix: { type: 'boolean', default: false },
    'prune-first': { type: 'boolean', default: false },
    tap: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
  async run({ values, positionals }) {
    if (!values.batch || positionals.length > 0) throw new LookoutError('config_invalid', `orchestrate needs a plan: ${USAGE}`, { details: { usage: true } });
    const plan = await readPlan(resolve(values.batch));
    if (values.matrix && !plan.matrix)
      throw new LookoutError('config_invalid', `--matrix needs matrix.layers in ${values.batch}`, { details: { usage: true } });
    const steps = stepsOf(plan);
    const layers: (string | null)[] = values.matrix && plan.matrix ? plan.matrix.layers : [null];

    let tap: ReturnType<typeof spawn> | undefined;
    let tapOut: string | undefined;
    if (values.tap) {
      const mqtt = plan.defaults.mqtt ?? process.env.LOOKOUT_MQTT_URL;
      tapOut = resolve('taps', `orchestrate-${new Date().toISOString().replace(/[:.]/g, '')}.jsonl`);
      tap = spawn(
        process.execPath,
        [join(packageRoot(), 'bin', 'lookout.js'), 'tap', 'all', '--json', '--out', tapOut, ...(mqtt ? ['--mqtt', String(mqtt)] : [])],
        {
          stdio: 'ignore',
        },
      );
    }

    const results: StepResult[] = [];
    try {
      for (const device of plan.devices) {
        const pipeline: { layer: string | null; step: PlannedStep }[] = [];
        if (values['prune-first']) pipeline.push({ layer: null, step: { command: 'prune-recordings', options: {} } });
        for (const layer of layers) {
          if (layer !== null) pipeline.push({ layer, step: { command: 'apply-layer', options: { layer, restart: plan.matrix?.restart ?? true } } });
          for (const step of steps) pipeline.push({ layer, step });
        }
        for (const { layer, step } of pipeline) {
          const started = Date.now();
          const argv = stepArgs(step, device, plan.defaults);
          if (!values.json) process.stdout.write(`${device}${layer ? ` [${layer}]` : ''}: lookout ${argv[0]} … `);
          const r = await runStep(argv);
          const result: StepResult = {
            device,
            layer,
            step: step.command,
            exit_code: r.code,
            seconds: (Date.now() - started) / 1000,
            note: r.code === 0 ? lastLine(r.stdout) : lastLine(r.stderr) || lastLine(r.stdout),
          };
          results.push(result);
          if (!values.json) console.log(r.code === 0 ? 'ok' : `FAILED (exit ${r.code}): ${result.note}`);
          if (r.code !== 0) break;
        }
      }
    } finally {
      if (tap && tap.exitCode === null) {
        const ended = new Promise((r) => tap.once('exit', r));
        tap.kill('SIGINT');
        await ended;
      }
    }
    const failed = results.find((r) => r.exit_code !== 0);
    if (values.json) console.log(JSON.stringify({ passed: !failed, steps: results, ...(tapOut ? { tap: tapOut } : {}) }));
    else console.log(`\n${formatSummary(results)}${tapOut ? `\n\nbus tap: ${tapOut}` : ''}`);
    return failed ? failed.exit_code : 0;
  },
});
