import { parseArgs } from 'node:util';
import { isLookoutError, LookoutError } from '../../core/src/errors/lookout-error.js';
import { applyLayer } from '../../core/src/layers/layer-env.js';
import { LAYERS } from '../../core/src/layers/layers.js';
import { LAYER_IDS } from '../../core/src/plugin/manifest.js';
import { packageVersion } from '../../core/src/paths/package-root.js';
import { verifyContractCommand } from './verify-contract-command.js';
import { brokerAclCommand, deviceCredentialsCommand } from './bus-credentials-commands.js';
import { pluginsCommand } from './plugins-command.js';
import { pruneRecordingsCommand } from './prune-recordings-command.js';
import { readinessCommand } from './readiness-command.js';
import { certsCommand } from './certs-command.js';

export interface OperatorCommand {
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

/** Subcommands of `lookout`; later ones (push-models, soak-gate, tap, prune) join this table. */
export const COMMANDS: Record<string, OperatorCommand> = {
  'apply-layer': {
    summary: 'write a layer stack to a device data root (mirror first, then the durable file)',
    usage: 'lookout apply-layer <layer> [--data-dir <dir>]',
    async run(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { 'data-dir': { type: 'string', default: '/' } } });
      const alias = positionals[0];
      if (!alias) throw new LookoutError('config_invalid', 'apply-layer needs a layer, e.g. `lookout apply-layer layer2`', { details: { usage: true } });
      const result = await applyLayer(values['data-dir'], alias);
      console.log(JSON.stringify(result));
      return 0;
    },
  },
  'verify-contract': verifyContractCommand,
  'device-credentials': deviceCredentialsCommand,
  'broker-acl': brokerAclCommand,
  plugins: pluginsCommand,
  'prune-recordings': pruneRecordingsCommand,
  readiness: readinessCommand,
  certs: certsCommand,
  layers: {
    summary: 'list the configuration layers and their aliases',
    usage: 'lookout layers',
    async run() {
      for (const id of LAYER_IDS) console.log(`${LAYERS[id].aliases.join(' | ').padEnd(28)} ${LAYERS[id].adds}`);
      return 0;
    },
  },
};

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length)) + 2;
  return [
    `lookout ${packageVersion()} — operator CLI for a Lookout fleet`,
    '',
    'Usage: lookout <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}\n  ${' '.repeat(width)}${c.usage}`),
    '',
    'The device runtime is `lookout-edge`, the hub `lookout-hub`; each has --help.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(helpText());
    return 0;
  }
  if (name === '--version') {
    console.log(packageVersion());
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`unknown command "${name}"\n\n${helpText()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    console.error(isLookoutError(err) ? `${err.code}: ${err.message}` : `error: ${(err as Error).message}`);
    return isUsageError(err) ? 2 : 1;
  }
}

/** A command-line mistake: ours (details.usage) or node's argument parser (unknown option, missing value). */
function isUsageError(err: unknown): boolean {
  if (isLookoutError(err)) return (err.details as { usage?: boolean } | undefined)?.usage === true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
