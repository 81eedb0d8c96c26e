import { open, type FileHandle } from 'node:fs/promises';

/**
 * Random access to bytes, so a 100 MB package can be indexed without reading it whole and tests can
 * hand in a buffer.
 */
export interface ByteSource {
  readonly size: number;
  /** Exactly `length` bytes from `offset`, or fewer where the source ends. */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

export function bufferSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    async read(offset, length) {
      return bytes.subarray(offset, Math.min(bytes.length, offset + length));
    },
    async close() {},
  };
}

export async function fileSource(path: string): Promise<ByteSource> {
  const handle: FileHandle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const n = Math.max(0, Math.min(length, size - offset));
      const out = new Uint8Array(n);
      let done = 0;
      while (done < n) {
        const { bytesRead } = await handle.read(out, done, n - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === n ? out : out.subarray(0, done);
    },
    close: () => handle.close(),
  };
}
