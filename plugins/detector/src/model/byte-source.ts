import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';

/**
 * An archive's bytes, streamed from the start each time it is opened, so a 100 MB package is read in
 * place (never extracted) and tests can hand in a buffer. `name` labels errors.
 */
export interface ByteSource {
  readonly name: string;
  open(): Promise<{ size: number; stream: Readable }>;
}

export function bufferSource(bytes: Uint8Array, name = 'archive'): ByteSource {
  return {
    name,
    open: async () => ({
      size: bytes.length,
      stream: Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)]),
    }),
  };
}

export function fileSource(path: string): ByteSource {
  return {
    name: path,
    async open() {
      // Size and stream from one handle, so both describe the same file even if the path is replaced.
      const handle = await open(path, 'r');
      try {
        const { size } = await handle.stat();
        // Listing streams the whole ~100 MB model through the parser; 1 MiB reads halve that time.
        return { size, stream: handle.createReadStream({ highWaterMark: 1 << 20 }) };
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
  };
}
