import { parseArgs } from 'node:util';
import { startBuilder } from './start-builder.js';
import { DEFAULT_BUILDER_PORT } from './builder-options.js';
import { toLookoutError } from 'lookout/core';

export const BUILDER_USAGE = `lookout-builder: ontology, dataset, training, compile and deploy of detector models (spec 02)

  --port <n>        HTTP port (default ${DEFAULT_BUILDER_PORT}; 0 picks a free one)
  --host <addr>     listen address (default 127.0.0.1; another needs a token)
  --data-dir <dir>  the SQLite state and imports (default .lookout-dev/builder)
  --dataset-root <dir>[,<dir>…]  folders local dataset URIs may name (default <data dir>/imports)
  LOOKOUT_BUILDER_TOKEN  bearer token every route but /api/health needs (env only: never on a command line)
`;

/** Parses the command line, starts the builder, prints one ready line and stops on SIGINT/SIGTERM. */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        'dataset-root': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${BUILDER_USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(BUILDER_USAGE);
    return;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    process.stderr.write(`--port ${values.port}: a port number 0..65535\n`);
    process.exitCode = 2;
    return;
  }
  try {
    const builder = await startBuilder({
      ...(port !== undefined ? { port } : {}),
      ...(values.host ? { host: values.host } : {}),
      ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
      ...(process.env.LOOKOUT_BUILDER_TOKEN ? { token: process.env.LOOKOUT_BUILDER_TOKEN } : {}),
      env: values['dataset-root'] ? { LOOKOUT_BUILDER_DATASET_ROOTS: values['dataset-root'] } : {},
    });
    process.stdout.write(`${JSON.stringify({ ready: true, service: 'lookout-builder', url: builder.url, data_dir: builder.dataDir })}\n`);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    process.stderr.write(`lookout-builder: ${signal}, stopping\n`);
    await builder.close();
  } catch (err) {
    const e = toLookoutError(err);
    process.stderr.write(`lookout-builder: ${e.code}: ${e.message}\n`);
    process.exitCode = 1;
  }
}
