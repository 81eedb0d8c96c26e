import { readFile } from 'node:fs/promises';
import { LookoutError } from '../errors/lookout-error.js';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses a shell-style env file: `KEY=value`, `export KEY=value`, blank lines and `#` comments,
 * an inline ` # comment` after an unquoted value, 'single quotes' taken literally, "double quotes"
 * with \n \t \" \\ escapes. No variable expansion (the same file is read by other components that
 * do not expand either). A line that is none of these is an error naming the file and line.
 */
export function parseEnv(text: string, source = 'env file'): Record<string, string> {
  const env: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const body = line.startsWith('export ') ? line.slice(7).trimStart() : line;
    const eq = body.indexOf('=');
    const fail = (why: string): never => {
      throw new LookoutError('env_file_invalid', `${source}:${i + 1}: ${why}`, { details: { source, line: i + 1 } });
    };
    // The line itself is not echoed: a malformed `PASSWORD hunter2` must not put the secret in a log.
    if (eq <= 0) fail(`expected KEY=value${KEY.test(body.split(/\s/)[0] ?? '') ? ` (the line starts with ${body.split(/\s/)[0]})` : ''}`);
    const key = body.slice(0, eq).trim();
    if (!KEY.test(key)) fail(`"${truncate(key)}" is not a valid variable name`);
    const rest = body.slice(eq + 1);
    // `KEY= # note` sets KEY empty, as a shell does: a `#` after whitespace starts a comment.
    env[key] = /^\s+#/.test(rest) ? '' : parseValue(rest.trim(), fail);
  });
  return env;
}

function parseValue(value: string, fail: (why: string) => never): string {
  if (value.startsWith("'")) {
    const end = value.indexOf("'", 1);
    if (end < 0) fail('unterminated single quote');
    assertOnlyComment(value.slice(end + 1), fail);
    return value.slice(1, end);
  }
  if (value.startsWith('"')) {
    let out = '';
    for (let i = 1; i < value.length; i++) {
      const ch = value[i];
      if (ch === '\\' && i + 1 < value.length) {
        const next = value[++i];
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next;
      } else if (ch === '"') {
        assertOnlyComment(value.slice(i + 1), fail);
        return out;
      } else out += ch;
    }
    return fail('unterminated double quote');
  }
  const hash = value.search(/\s#/);
  return (hash >= 0 ? value.slice(0, hash) : value).trim();
}

function assertOnlyComment(rest: string, fail: (why: string) => never): void {
  const trimmed = rest.trim();
  if (trimmed !== '' && !trimmed.startsWith('#')) fail(`unexpected text after the closing quote: "${truncate(trimmed)}"`);
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

export async function readEnvFile(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LookoutError('env_file_invalid', `cannot read env file ${path}: ${(err as Error).message}`, { cause: err, details: { source: path } });
  }
  return parseEnv(text, path);
}

/** Serializes env entries so that parseEnv reads them back unchanged. */
export function formatEnv(env: Record<string, string>, header?: string): string {
  const lines = header ? header.split('\n').map((l) => `# ${l}`) : [];
  for (const [k, v] of Object.entries(env)) {
    lines.push(/^[A-Za-z0-9_./:@+,-]*$/.test(v) ? `${k}=${v}` : `${k}="${v.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`);
  }
  return `${lines.join('\n')}\n`;
}
