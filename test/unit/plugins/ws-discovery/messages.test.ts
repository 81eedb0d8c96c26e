import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOMParser, onErrorStopParsing, type Element } from '@xmldom/xmldom';
import { endpointAddress } from '../../../../plugins/onvif/src/service.js';
import { bye, hello, probeMatch } from '../../../../plugins/ws-discovery/src/messages.js';
import { NS } from '../../../../plugins/ws-discovery/src/namespaces.js';

const endpoint = { address: endpointAddress('cam-1'), metadataVersion: 1, scopes: ['onvif://www.onvif.org/name/a&b', 'onvif://www.onvif.org/Profile/T'] };
const seq = { instanceId: 1700000000, messageNumber: 3 };

function parse(xml: string): Element {
  return new DOMParser({ onError: onErrorStopParsing }).parseFromString(xml, 'text/xml').documentElement!;
}

/** Every element and prefixed attribute resolves to a namespace: no prefix is used undeclared. */
function assertDeclared(e: Element): void {
  assert.ok(e.namespaceURI, `${e.tagName} has a namespace`);
  for (let i = 0; i < e.attributes.length; i++) {
    const a = e.attributes[i];
    if (a.prefix && a.prefix !== 'xmlns') assert.ok(a.namespaceURI, `${a.name} has a namespace`);
  }
  for (let n = e.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) assertDeclared(n as Element);
}

const text = (root: Element, ns: string, local: string) => root.getElementsByTagNameNS(ns, local)[0]?.textContent;

test('the ProbeMatch carries what clients check, every prefix declared, values escaped', () => {
  const root = parse(probeMatch(endpoint, 'uuid:probe-1', ['http://127.0.0.1:8080/onvif/device_service'], seq));
  assertDeclared(root);
  assert.equal(root.namespaceURI, NS.env);
  assert.equal(text(root, NS.wsa04, 'RelatesTo'), 'uuid:probe-1');
  assert.match(text(root, NS.wsa04, 'MessageID')!, /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(text(root, NS.wsa04, 'To'), 'http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous');
  assert.equal(root.getElementsByTagNameNS(NS.wsd, 'ProbeMatch').length, 1);
  assert.equal(text(root, NS.wsd, 'Scopes'), 'onvif://www.onvif.org/name/a&b onvif://www.onvif.org/Profile/T');
  assert.equal(text(root, NS.wsd, 'XAddrs'), 'http://127.0.0.1:8080/onvif/device_service');
  assert.equal(text(root, NS.wsd, 'MetadataVersion'), '1');
  const appSeq = root.getElementsByTagNameNS(NS.wsd, 'AppSequence')[0];
  assert.equal(appSeq.getAttribute('InstanceId'), '1700000000');
  assert.equal(appSeq.getAttribute('MessageNumber'), '3');
  // Two messages never share a MessageID.
  const again = parse(probeMatch(endpoint, 'uuid:probe-1', [], seq));
  assert.notEqual(text(again, NS.wsa04, 'MessageID'), text(root, NS.wsa04, 'MessageID'));
});

test('Hello and Bye are addressed to the discovery URN with the endpoint reference', () => {
  const h = parse(hello(endpoint, ['http://10.0.0.5/onvif/device_service'], seq));
  assertDeclared(h);
  assert.equal(text(h, NS.wsa04, 'To'), 'urn:schemas-xmlsoap-org:ws:2005:04:discovery');
  assert.equal(text(h, NS.wsa04, 'Action'), 'http://schemas.xmlsoap.org/ws/2005/04/discovery/Hello');
  assert.equal(text(h, NS.wsa04, 'Address'), endpoint.address);
  assert.equal(text(h, NS.wsd, 'XAddrs'), 'http://10.0.0.5/onvif/device_service');
  const b = parse(bye(endpoint, seq));
  assertDeclared(b);
  assert.equal(text(b, NS.wsa04, 'Action'), 'http://schemas.xmlsoap.org/ws/2005/04/discovery/Bye');
  assert.equal(text(b, NS.wsa04, 'Address'), endpoint.address);
  assert.equal(b.getElementsByTagNameNS(NS.wsd, 'XAddrs').length, 0);
});

test('the endpoint address is a stable version-5 urn:uuid per device', () => {
  assert.equal(endpointAddress('cam-1'), endpointAddress('cam-1'));
  assert.notEqual(endpointAddress('cam-1'), endpointAddress('cam-2'));
  assert.match(endpointAddress('cam-1'), /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});
