import { randomUUID } from 'node:crypto';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's own request id is kept (so its logs and ours meet) when it is a plain token; else a new one. */
export function requestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && CLIENT_ID.test(value) ? value : randomUUID();
}
