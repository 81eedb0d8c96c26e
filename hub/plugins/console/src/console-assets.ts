import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export interface ConsoleAsset {
  name: string;
  body: Buffer;
  type: string;
  etag: string;
  /** A content-hashed name (`main-2QK7J3.js`): its bytes never change under it. */
  immutable: boolean;
  /** Compressed once at load, sent to clients that accept it. */
  br: Buffer;
  gzip: Buffer;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** esbuild's `[name]-[hash]` names: a dash and eight capital letters or digits before the extension. */
const HASHED = /-[A-Z0-9]{8}\.(js|css|js\.map|css\.map)$/;

/** The built page (index.html and its hashed script, stylesheet, maps, licences), read once into memory. */
export async function loadConsoleAssets(dir: string): Promise<Map<string, ConsoleAsset>> {
  const assets = new Map<string, ConsoleAsset>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = await readFile(join(dir, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    assets.set(name, { name, body, type, etag, immutable: HASHED.test(name), br, gzip: gzipSync(body, { level: 9 }) });
  }
  return assets;
}

/** The body and its Content-Encoding for an Accept-Encoding header: brotli, else gzip, else as it is. */
export function encodedBody(asset: ConsoleAsset, acceptEncoding: string | undefined): { body: Buffer; encoding?: 'br' | 'gzip' } {
  const accepted = new Set((acceptEncoding ?? '').split(',').map((e) => e.split(';')[0].trim().toLowerCase()));
  if (accepted.has('br') && asset.br.length < asset.body.length) return { body: asset.br, encoding: 'br' };
  if (accepted.has('gzip') && asset.gzip.length < asset.body.length) return { body: asset.gzip, encoding: 'gzip' };
  return { body: asset.body };
}
