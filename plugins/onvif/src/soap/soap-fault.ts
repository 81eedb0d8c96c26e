/**
 * A SOAP 1.2 fault the ONVIF services answer with (always XML, never plain text): `code` is the SOAP
 * 1.2 fault code, `subcode` an ONVIF error (`ter:NotAuthorized`, `ter:ActionNotSupported`,
 * `ter:InvalidArgVal`, `ter:NoProfile`…), `status` the HTTP status it goes with.
 */
export class SoapFault extends Error {
  constructor(
    readonly code: 'Sender' | 'Receiver',
    readonly subcode: string,
    message: string,
    readonly status = code === 'Sender' ? 400 : 500,
    /** A second-level subcode (`ter:InvalidArgVal` under `ter:InvalidArgs`). */
    readonly detailSubcode?: string,
  ) {
    super(message);
    this.name = 'SoapFault';
  }
}

export const faults = {
  notAuthorized: () => new SoapFault('Sender', 'ter:NotAuthorized', 'Sender not authorized', 401),
  actionNotSupported: (action: string) => new SoapFault('Receiver', 'ter:ActionNotSupported', `${action} is not supported by this device`, 400),
  invalidArg: (message: string) => new SoapFault('Sender', 'ter:InvalidArgs', message, 400, 'ter:InvalidArgVal'),
  noProfile: (token: string) => new SoapFault('Sender', 'ter:InvalidArgVal', `no media profile "${token}"`, 400, 'ter:NoProfile'),
  malformed: (message: string) => new SoapFault('Sender', 'ter:WellFormed', message, 400),
};
