import { LookoutError } from 'lookout/core';
import { DEFAULT_HUB_PORT } from 'lookout/hub';
import { defineCommand } from './command-spec.js';
import { EXIT } from './exit-codes.js';
import { readinessExitCode, readinessTable, type ReadinessBody } from './readiness-table.js';

/** The hub may hold many devices' grades; it answers them from its shared state, so this is ample. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * `lookout readiness`: the hub's GET /fleet/readiness as a table (or the JSON as it came). The exit
 * status says the fleet's grade, so a script or a deploy gate can test it. The hub's bearer token
 * comes from LOOKOUT_HUB_TOKEN only: a flag would be visible to every local user in the process list.
 */
export const readinessCommand = defineCommand({
  summary: 'the fleet readiness grades from a hub (GET /fleet/readiness); exit 0 ready, 1 not ready, 3 degraded; the token from LOOKOUT_HUB_TOKEN',
  usage: `lookout readiness [--hub <url>] [--json]   (default --hub http://127.0.0.1:${DEFAULT_HUB_PORT})`,
  synopsis: `lookout readiness [--hub <url>] [--json]`,
  positionals: false,
  about: `The fleet's readiness grades from a hub (GET /fleet/readiness) as a table, or the JSON as it came.
The hub's bearer token comes from LOOKOUT_HUB_TOKEN only.

Options:
  --hub <url>   the hub (default http://127.0.0.1:8788)
  --json        the hub's answer as it came`,
  examples: [`LOOKOUT_HUB_TOKEN=… lookout readiness --hub https://hub.local:8788`, `lookout readiness --json`],
  exits: [[EXIT.ok, 'the fleet is ready'], [EXIT.failed, 'not ready, or the hub cannot be reached'], EXIT.usage, [EXIT.authRefused, 'degraded']],
  options: { hub: { type: 'string', default: `http://127.0.0.1:${DEFAULT_HUB_PORT}` }, json: { type: 'boolean', default: false } },
  async run({ values }) {
    const url = readinessUrl(values.hub);
    const token = process.env.LOOKOUT_HUB_TOKEN;
    let res: Response;
    try {
      res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new Error(`cannot reach the hub at ${url.origin}: ${cause}`, { cause: err });
    }
    const text = await res.text();
    if (res.status !== 200) throw hubRefusal(res.status, text, token !== undefined);
    let body: ReadinessBody;
    try {
      body = JSON.parse(text) as ReadinessBody;
    } catch {
      throw new Error(`the hub at ${url.origin} answered GET /fleet/readiness with something other than JSON`);
    }
    if (typeof body?.fleet?.grade !== 'string' || typeof body.devices !== 'object' || !Array.isArray(body.modules)) {
      throw new Error(
        `the hub at ${url.origin} answered GET /fleet/readiness without fleet, devices and modules (is it a Lookout hub with the readiness plugin?)`,
      );
    }
    console.log(values.json ? text : readinessTable(body));
    return readinessExitCode(body.fleet.grade);
  },
});

function readinessUrl(hub: string): URL {
  let base: URL;
  try {
    base = new URL(hub);
  } catch {
    throw new LookoutError('config_invalid', `--hub must be the hub's URL, e.g. http://127.0.0.1:${DEFAULT_HUB_PORT}, not "${hub}"`, {
      details: { usage: true },
    });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new LookoutError('config_invalid', `--hub must be an http or https URL, not ${base.protocol}`, { details: { usage: true } });
  }
  if (base.username || base.password) {
    throw new LookoutError('config_invalid', '--hub carries no credentials: the token comes from LOOKOUT_HUB_TOKEN', { details: { usage: true } });
  }
  return new URL('/fleet/readiness', base);
}

/** The hub's error body (`{error: {code, message}}`) as the CLI says it; a 401 says where the token comes from. */
function hubRefusal(status: number, text: string, hadToken: boolean): Error {
  let code: string | undefined;
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed.error?.code === 'string') code = parsed.error.code;
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // not the hub's error body: the status says enough
  }
  if (status === 401) {
    return new Error(
      `the hub refused the request (401${code ? ` ${code}` : ''}): ${hadToken ? 'LOOKOUT_HUB_TOKEN is not its token' : 'it needs a token: set LOOKOUT_HUB_TOKEN'}`,
    );
  }
  if (status === 404 && code === 'not_found') return new Error('the hub serves no GET /fleet/readiness: its plugin set has no readiness plugin');
  return new Error(`the hub answered ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`);
}
