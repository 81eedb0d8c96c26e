import { isLookoutError, LAYER_IDS, packageVersion } from 'lookout/core';
import { LAYERS } from 'lookout/core/host';
import { verifyContractCommand } from './verify-contract-command.js';
import { brokerAclCommand, busCredentialsCommand, deviceCredentialsCommand } from './bus-credentials-commands.js';
import { pluginsCommand } from './plugins-command.js';
import { pruneRecordingsCommand } from './prune-recordings-command.js';
import { readinessCommand } from './readiness-command.js';
import { certsCommand } from './certs-command.js';
import { applyLayerCommand } from './apply-layer-command.js';
import { pushModelsCommand } from './push-models-command.js';
import { deployCommand } from './deploy-command.js';
import { soakGateCommand } from './soak-gate-command.js';
import { soakCommand } from './soak-command.js';
import { tapCommand } from './tap-command.js';
import { orchestrateCommand } from './orchestrate-command.js';
import { visualGateCommand } from './visual-gate-command.js';
import { soakMatrixCommand } from './soak-matrix-command.js';
import { harnessCommand } from './harness-command.js';
import { EXIT_CODES_HELP, exitCodeOf } from './exit-codes.js';
import { BASE_EXITS, defineCommand, type OperatorCommand } from './command-spec.js';

export type { OperatorCommand } from './command-spec.js';

/** Subcommands of `lookout`: the SSH commands first (apply-layer … harness), then the fleet's local tools. */
export const COMMANDS: Record<string, OperatorCommand> = {
  'apply-layer': applyLayerCommand,
  'push-models': pushModelsCommand,
  deploy: deployCommand,
  'soak-gate': soakGateCommand,
  soak: soakCommand,
  tap: tapCommand,
  orchestrate: orchestrateCommand,
  'visual-gate': visualGateCommand,
  'soak-matrix': soakMatrixCommand,
  harness: harnessCommand,
  'verify-contract': verifyContractCommand,
  'device-credentials': deviceCredentialsCommand,
  'bus-credentials': busCredentialsCommand,
  'broker-acl': brokerAclCommand,
  plugins: pluginsCommand,
  'prune-recordings': pruneRecordingsCommand,
  readiness: readinessCommand,
  certs: certsCommand,
  layers: defineCommand({
    summary: 'list the configuration layers and their aliases',
    usage: 'lookout layers',
    positionals: false,
    about: `Lists the configuration layers (cumulative: each adds to the ones before) and their aliases, which
every command taking a layer accepts.`,
    examples: ['lookout layers', 'lookout apply-layer layer3_depth cam-1 --dry-run'],
    exits: BASE_EXITS,
    options: {},
    async run() {
      for (const id of LAYER_IDS) console.log(`${LAYERS[id].aliases.join(' | ').padEnd(28)} ${LAYERS[id].adds}`);
      return 0;
    },
  }),
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
    "`lookout <command> --help` shows a command's options and examples.",
    'The device runtime is `lookout-edge`, the hub `lookout-hub`; each has --help.',
    '',
    EXIT_CODES_HELP,
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
  if (command.help && (rest.includes('--help') || rest.includes('-h'))) {
    console.log(command.help);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    console.error(isLookoutError(err) ? `${err.code}: ${err.message}` : `error: ${(err as Error).message}`);
    return exitCodeOf(err);
  }
}
