import { isLookoutError } from 'lookout/core';

/** `lookout`'s exit codes: one per kind of failure an operator (or a script) acts on differently. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  authRefused: 3,
  hostKey: 4,
  unreachable: 5,
  noSpace: 6,
  checkFailed: 7,
  rolledBack: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The one exit-code table: what each code means, for every command's help and for `lookout help`. */
export const EXIT_MEANINGS: Record<ExitCode, string> = {
  0: 'done (a gate passed)',
  1: 'failed (the message says why)',
  2: 'usage: an unknown option, a missing or bad argument',
  3: 'the device refused the SSH credentials (DEVICE_PASSWORD or the key)',
  4: "the device's host key is not pinned, or is another than the pinned one (refused before any credential is sent)",
  5: 'the device (or the broker) is unreachable: nothing listens, or no answer in time',
  6: 'not enough free space on the device (the figures are in the message)',
  7: 'a check failed: a checksum on the device, the soak gate, no hello with the new version or layer',
  8: 'deploy: the new release did not come up and the previous one was restored',
};

/** A code a command can return, with the table's meaning or, where the command gives the code its own (readiness's 3), that one. */
export type ExitSpec = ExitCode | readonly [ExitCode, string];

export function exitCodeRows(exits: readonly ExitSpec[]): string {
  return exits
    .map((e) => (typeof e === 'number' ? [e, EXIT_MEANINGS[e]] : e))
    .map(([code, meaning]) => `  ${code}  ${meaning}`)
    .join('\n');
}

export const EXIT_CODES_HELP = `Exit codes (lookout readiness has its own: 0 ready, 1 not ready, 3 degraded):
${exitCodeRows(Object.values(EXIT))}`;

/** The exit code a failure gives. */
export function exitCodeOf(err: unknown): number {
  if (!isLookoutError(err)) {
    const code = (err as { code?: unknown } | null)?.code;
    return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_') ? EXIT.usage : EXIT.failed;
  }
  const details = (err.details ?? {}) as { usage?: boolean; unreachable?: boolean };
  if (details.usage === true) return EXIT.usage;
  switch (err.code) {
    case 'ssh_auth_failed':
      return EXIT.authRefused;
    case 'ssh_host_key_unknown':
    case 'ssh_host_key_changed':
      return EXIT.hostKey;
    case 'bus_unreachable':
      return EXIT.unreachable;
    case 'device_storage_full':
      return EXIT.noSpace;
    case 'transfer_corrupt':
    case 'soak_gate_failed':
    case 'device_not_back':
      return EXIT.checkFailed;
    case 'deploy_rolled_back':
      return EXIT.rolledBack;
    default:
      return details.unreachable === true ? EXIT.unreachable : EXIT.failed;
  }
}
