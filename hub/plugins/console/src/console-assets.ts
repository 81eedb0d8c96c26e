import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';

export interface ConsoleAsset {
  name: string;
  body: Buffer;
  type: string;
  etag: string;
  /** A content-hashed name (`main-2QK7J3.js`): its bytes never change under it. */
  immutable: boolean;
  /** Compressed at build time (build-web.mjs), sent to clients that accept it. */
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
    const br =
      (await prebuilt(dir, `${name}.br`, body, brotliDecompressSync)) ??
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: FALLBACK_BROTLI_QUALITY } });
    const gzip = (await prebuilt(dir, `${name}.gz`, body, gunzipSync)) ?? gzipSync(body, { level: FALLBACK_GZIP_LEVEL });
    assets.set(name, { name, body, type, etag, immutable: HASHED.test(name), br, gzip });
  }
  return assets;
}

/**
 * Where a build left no twin (or one that is not this file's), the console compresses at load at
 * levels that take milliseconds, not the seconds quality 11 takes on the source map.
 */
const FALLBACK_BROTLI_QUALITY = 5;
const FALLBACK_GZIP_LEVEL = 6;

/** A compressed twin written by the build, used only when it decodes to the file's own bytes. */
async function prebuilt(dir: string, name: string, body: Buffer, decode: (b: Buffer) => Buffer): Promise<Buffer | undefined> {
  const packed = await readFile(join(dir, name)).catch(() => undefined);
  if (!packed) return undefined;
  try {
    return decode(packed).equals(body) ? packed : undefined;
  } catch {
    return undefined;
  }
}

/** The body and its Content-Encoding for an Accept-Encoding header: brotli, else gzip, else as it is. */
export function encodedBody(asset: ConsoleAsset, acceptEncoding: string | undefined): { body: Buffer; encoding?: 'br' | 'gzip' } {
  const accepted = new Set((acceptEncoding ?? '').split(',').map((e) => e.split(';')[0].trim().toLowerCase()));
  if (accepted.has('br') && asset.br.length < asset.body.length) return { body: asset.br, encoding: 'br' };
  if (accepted.has('gzip') && asset.gzip.length < asset.body.length) return { body: asset.gzip, encoding: 'gzip' };
  return { body: asset.body };
}
