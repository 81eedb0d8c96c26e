/**
 * The code examples of the documentation: every fenced block with a language (```sh, ```js,
 * ```json …) in README.md and docs/*.md, with the marker on the line before it that says how it is
 * run. A block without a language (a canonical string, a header list, an error message) is text,
 * not code. Markers are HTML comments, invisible when rendered:
 *
 *   <!-- example: <id> -->                          run by the handler <id> of docs-examples.test.ts
 *   <!-- example: tested-by <file>.test.ts: why --> run by that test (found anywhere under test/)
 *   <!-- example: skip: <reason> -->                not run, and why (needs real infrastructure)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Marker = { kind: 'run'; id: string } | { kind: 'tested-by'; file: string; why: string } | { kind: 'skip'; reason: string };

export interface CodeExample {
  /** Repository-relative path of the markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The block's text, its fence's indentation removed. */
  body: string;
  /** Undefined when the line before the fence holds no marker. */
  marker?: Marker;
}

const FENCE = /^( *)```(\S*)\s*$/;
const MARKER = /^\s*<!-- example: (.+?) -->\s*$/;

function parseMarker(text: string): Marker | undefined {
  const skip = /^skip: (.+)$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1] };
  const by = /^tested-by (\S+\.test\.ts): (.+)$/.exec(text);
  if (by) return { kind: 'tested-by', file: by[1], why: by[2] };
  if (/^[a-z0-9-]+$/.test(text)) return { kind: 'run', id: text };
  return undefined;
}

/** The code examples of one markdown file. */
export function examplesOf(root: string, path: string): CodeExample[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: CodeExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    const body = lines
      .slice(i + 1, end)
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n');
    if (open[2]) {
      let prev = i - 1;
      while (prev >= 0 && lines[prev].trim() === '') prev--;
      const m = prev >= 0 ? MARKER.exec(lines[prev]) : null;
      out.push({ file: relative(root, path), line: i + 1, lang: open[2], body, marker: m ? parseMarker(m[1]) : undefined });
    }
    i = end;
  }
  return out;
}

/** README.md and every docs/*.md. */
export function documentationExamples(root: string): CodeExample[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => join(root, 'docs', n));
  return [join(root, 'README.md'), ...docs].flatMap((p) => examplesOf(root, p));
}

/** Every file under dir whose name is `name` (tests move between folders; their names stay). */
export function findFile(dir: string, name: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? findFile(join(dir, e.name), name) : e.name === name ? [join(dir, e.name)] : [],
  );
}
