import { isIP } from 'node:net';
import { LookoutError } from 'lookout/core';
import type { x509 } from './x509-provider.js';

/**
 * The subject `CN=<common name>, O=<organization>` as an RFC 4514 string, the value escaped: the
 * library's JSON form of a name mangles values that hold quotes or backslashes. Refuses a common
 * name that a certificate cannot carry as it is (empty, over 64 characters, control characters).
 */
export function subjectName(commonName: string, organization: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what the check refuses
  if (commonName.length === 0 || commonName.length > 64 || /[\u0000-\u001f\u007f]/.test(commonName)) {
    throw new LookoutError('argument_invalid', `a certificate's common name must be 1 to 64 printable characters: ${JSON.stringify(commonName)}`);
  }
  return `CN=${escapeDnValue(commonName)}, O=${escapeDnValue(organization)}`;
}

/** Throws unless the certificate's subject carries exactly this common name. */
export function assertCommonName(cert: x509.X509Certificate, commonName: string): void {
  if (cert.subjectName.getField('CN')[0] !== commonName) {
    throw new LookoutError('argument_invalid', `the common name ${JSON.stringify(commonName)} cannot be written into a certificate as it is`);
  }
}

function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^([ #])/, '\\$1')
    .replace(/ $/, '\\ ');
}

/** The subjectAltName entries: the DNS names that are valid ones (others are left out), and the IP addresses (refused when one is not). */
export function altNames(dnsNames: string[] = [], ips: string[] = []): { type: 'dns' | 'ip'; value: string }[] {
  for (const ip of ips) {
    if (isIP(ip) === 0) throw new LookoutError('argument_invalid', `"${ip}" is not an IP address`, { details: { ip } });
  }
  return [...dnsNames.filter(isDnsName).map((value) => ({ type: 'dns' as const, value })), ...ips.map((value) => ({ type: 'ip' as const, value }))];
}

export function isDnsName(s: string): boolean {
  return /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s);
}
