import { LookoutError, type PluginErrorCode, type PluginErrorDecl } from 'lookout/core';

/** The plugin's own code (declared in its manifest): the device's RTSP server failed the hub's request. */
export const RTSP_FAILED: PluginErrorCode = 'live-mp4.rtsp_failed';

export const RTSP_FAILED_DECL: PluginErrorDecl = {
  code: 'rtsp_failed',
  status: 502,
  description:
    "the device's RTSP server reset or closed the connection, refused the session (details.status: 453, 503…) or did not answer in time (details.cause: timeout); retry later",
};

/**
 * Any failure on the camera's RTSP connection as a coded error: a LookoutError stays as it is, a
 * socket error (ECONNRESET, EPIPE…) becomes `live-mp4.rtsp_failed` with its errno code in the
 * details, never an unmapped 500.
 */
export function rtspFailure(err: unknown, what: string): LookoutError {
  if (err instanceof LookoutError) return err;
  const cause = (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';
  const message = err instanceof Error ? err.message : String(err);
  return new LookoutError(RTSP_FAILED, `${what}: ${message}`, { details: { cause }, cause: err });
}
