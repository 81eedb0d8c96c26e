import type { ChunkStore } from 'lookout/plugins/recorder';
import type { DeviceSession } from './device-session.js';

/** A device's disk over SFTP as the recorder's ChunkStore, so the manual prune there is the recorder's own (pruneStore). */
export function sftpChunkStore(session: DeviceSession): ChunkStore {
  return {
    list: async (dir) =>
      (
        await session
          .sftpCall<{ filename: string; attrs: { size: number } }[]>(`listing ${dir}`, (sftp, done) => sftp.readdir(dir, (err, list) => done(err, list)))
          .catch((err: { details?: { sftp_code?: unknown } }) => {
            if (err.details?.sftp_code === 2) return [];
            throw err;
          })
      ).map((e) => ({ name: e.filename, size: e.attrs.size })),
    readText: (path) => session.readText(path),
    remove: (path) => session.remove(path),
    writeFileAtomic: (path, text) => session.writeFileAtomic(path, text),
  };
}
