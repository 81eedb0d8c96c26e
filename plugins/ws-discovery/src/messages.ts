import { declare, xmlEscape } from './namespaces.js';
import { messageId } from './endpoint.js';

const ACTION = 'http://schemas.xmlsoap.org/ws/2005/04/discovery';
const ANONYMOUS = 'http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous';
/** Where multicast announcements are addressed (WS-Discovery 2005/04). */
const DISCOVERY_URN = 'urn:schemas-xmlsoap-org:ws:2005:04:discovery';

/** What the device says about itself in every discovery message. */
export interface Endpoint {
  /** The stable `urn:uuid:…` of the device. */
  address: string;
  metadataVersion: number;
  scopes: readonly string[];
}

/** WS-Discovery AppSequence: InstanceId changes per run, MessageNumber rises per message sent. */
export interface AppSequence {
  instanceId: number;
  messageNumber: number;
}

// Every prefix an envelope uses is declared on it (an undeclared one breaks Home Assistant).
const PREFIXES = declare('env', 'wsa04', 'wsd', 'dn', 'tds');
const TYPES = 'dn:NetworkVideoTransmitter tds:Device';

function envelope(header: string, body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope ${PREFIXES}><env:Header>${header}</env:Header><env:Body>${body}</env:Body></env:Envelope>`;
}

function headers(action: string, to: string, seq: AppSequence, relatesTo?: string): string {
  return (
    `<wsa04:MessageID>${messageId()}</wsa04:MessageID>` +
    (relatesTo === undefined ? '' : `<wsa04:RelatesTo>${xmlEscape(relatesTo)}</wsa04:RelatesTo>`) +
    `<wsa04:To>${to}</wsa04:To>` +
    `<wsa04:Action>${ACTION}/${action}</wsa04:Action>` +
    `<wsd:AppSequence InstanceId="${seq.instanceId}" MessageNumber="${seq.messageNumber}"/>`
  );
}

function endpointBody(e: Endpoint, xaddrs: readonly string[] | null): string {
  return (
    `<wsa04:EndpointReference><wsa04:Address>${xmlEscape(e.address)}</wsa04:Address></wsa04:EndpointReference>` +
    `<wsd:Types>${TYPES}</wsd:Types>` +
    `<wsd:Scopes>${e.scopes.map(xmlEscape).join(' ')}</wsd:Scopes>` +
    (xaddrs === null ? '' : `<wsd:XAddrs>${xaddrs.map(xmlEscape).join(' ')}</wsd:XAddrs>`) +
    `<wsd:MetadataVersion>${e.metadataVersion}</wsd:MetadataVersion>`
  );
}

/** The one ProbeMatch answering a Probe, sent unicast to its sender. */
export function probeMatch(e: Endpoint, probeMessageId: string, xaddrs: readonly string[], seq: AppSequence): string {
  return envelope(
    headers('ProbeMatches', ANONYMOUS, seq, probeMessageId),
    `<wsd:ProbeMatches><wsd:ProbeMatch>${endpointBody(e, xaddrs)}</wsd:ProbeMatch></wsd:ProbeMatches>`,
  );
}

/** Hello, multicast when the device starts. */
export function hello(e: Endpoint, xaddrs: readonly string[], seq: AppSequence): string {
  return envelope(headers('Hello', DISCOVERY_URN, seq), `<wsd:Hello>${endpointBody(e, xaddrs)}</wsd:Hello>`);
}

/** Bye, multicast when the device stops: only the endpoint reference is required. */
export function bye(e: Endpoint, seq: AppSequence): string {
  return envelope(
    headers('Bye', DISCOVERY_URN, seq),
    `<wsd:Bye><wsa04:EndpointReference><wsa04:Address>${xmlEscape(e.address)}</wsa04:Address></wsa04:EndpointReference></wsd:Bye>`,
  );
}
