import { declare, xmlEscape } from './namespaces.js';
import type { SoapFault } from './soap-fault.js';

export const SOAP_CONTENT_TYPE = 'application/soap+xml; charset=utf-8';

/**
 * A response envelope around body content. The service prefixes are declared on the Envelope too, so
 * an empty response is a bare element (`<tds:SetScopesResponse/>`): clients built on xml2js (npm
 * onvif, UniFi Protect) take one with attributes, even xmlns ones, for a wrong answer.
 */
export function soapEnvelope(bodyContent: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope ${declare('env', 'tds', 'trt', 'tr2', 'tev', 'wsnt', 'timg', 'tt')}><env:Body>${bodyContent}</env:Body></env:Envelope>`;
}

/** A SOAP 1.2 Fault: env:Sender/env:Receiver, the ONVIF subcode(s) (ter:…), the reason. */
export function soapFaultEnvelope(fault: SoapFault): string {
  const inner = fault.detailSubcode ? `<env:Subcode><env:Value>${xmlEscape(fault.detailSubcode)}</env:Value></env:Subcode>` : '';
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope ${declare('env', 'ter')}><env:Body><env:Fault>` +
    `<env:Code><env:Value>env:${fault.code}</env:Value><env:Subcode><env:Value>${xmlEscape(fault.subcode)}</env:Value>${inner}</env:Subcode></env:Code>` +
    `<env:Reason><env:Text xml:lang="en">${xmlEscape(fault.message)}</env:Text></env:Reason>` +
    `</env:Fault></env:Body></env:Envelope>`
  );
}
