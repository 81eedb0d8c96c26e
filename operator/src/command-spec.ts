import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, exitCodeRows, type ExitSpec } from './exit-codes.js';
import { openSession, SSH_OPTIONS, SSH_OPTIONS_HELP } from './remote/device-target.js';
import type { DeviceSession } from './remote/device-session.js';
import { BUS_OPTIONS, BUS_OPTIONS_HELP } from './remote/hello-wait.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type WithShared<O extends Options, S extends boolean, B extends boolean> = O &
  (S extends true ? typeof SSH_OPTIONS : unknown) &
  (B extends true ? typeof BUS_OPTIONS : unknown);
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>>;

/** The codes every command can give: done, failed, a usage error. */
export const BASE_EXITS = [EXIT.ok, EXIT.failed, EXIT.usage] as const;
/** What the SSH prelude adds: refused credentials, an unpinned host key, no answer, a full disk on a write. */
export const SSH_EXITS = [...BASE_EXITS, EXIT.authRefused, EXIT.hostKey, EXIT.unreachable, EXIT.noSpace] as const;

/** One `lookout` subcommand as the registry, the parser, the help and `lookout help` see it. */
export interface OperatorCommand {
  summary: string;
  usage: string;
  /** Full help (options, examples, exit codes), shown by `lookout <command> --help`; absent where the command prints its own (certs). */
  help?: string;
  /** The exit codes the command can return, each in the one table (exit-codes.ts). */
  exits: readonly ExitSpec[];
  /** Every flag the parser accepts (the shared SSH and bus ones included), for the help's check. */
  flags?: readonly string[];
  run(args: string[]): Promise<number>;
}

export interface CommandContext<V> {
  values: V;
  positionals: string[];
  /** The SSH prelude: target from the registry or the address, credentials from the environment, pinned host keys, connect. */
  connect: (device: string) => Promise<DeviceSession>;
}

export interface CommandSpec<O extends Options, S extends boolean, B extends boolean> {
  summary: string;
  /** The one-line usage `lookout help` lists. */
  usage: string;
  /** The help's first lines where they say more than the usage (the long option list of broker-acl). */
  synopsis?: string;
  /** False where the command takes no positional argument (one is then a usage error). */
  positionals?: false;
  /** What the command does and its own options, as the help shows them after the usage line. */
  about: string;
  options: O;
  /** Takes the SSH options and may open a session on a device (the prelude is the registry's). */
  ssh?: S;
  /** Takes the bus options (--mqtt, --mqtt-username, --wait-s) to watch a device's hello. */
  bus?: B;
  examples: readonly string[];
  exits: readonly ExitSpec[];
  run(ctx: CommandContext<Parsed<WithShared<O, S, B>>['values']>): Promise<number>;
}

/** The help a declaration gives: usage, what it does, the shared option groups it takes, examples, its exit codes from the table. */
export function helpOf(spec: Pick<CommandSpec<Options, boolean, boolean>, 'usage' | 'synopsis' | 'about' | 'ssh' | 'bus' | 'examples' | 'exits'>): string {
  return [
    spec.synopsis ?? spec.usage,
    spec.about,
    ...(spec.ssh ? [SSH_OPTIONS_HELP] : []),
    ...(spec.bus ? [BUS_OPTIONS_HELP] : []),
    `Examples:\n${spec.examples.map((e) => `  ${e}`).join('\n')}`,
    `Exit codes:\n${exitCodeRows(spec.exits)}`,
  ].join('\n\n');
}

/** A command from its declaration: one parser (node's parseArgs, strict), the shared option groups and the SSH prelude. */
export function defineCommand<O extends Options, S extends boolean = false, B extends boolean = false>(spec: CommandSpec<O, S, B>): OperatorCommand {
  const options = { ...(spec.ssh ? SSH_OPTIONS : {}), ...(spec.bus ? BUS_OPTIONS : {}), ...spec.options } as WithShared<O, S, B>;
  return {
    summary: spec.summary,
    usage: spec.usage,
    help: helpOf(spec),
    exits: spec.exits,
    flags: Object.keys(options),
    async run(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: spec.positionals !== false, options });
      return spec.run({
        values,
        positionals,
        connect: (device) => openSession(device, values as Parameters<typeof openSession>[1]),
      });
    },
  };
}
