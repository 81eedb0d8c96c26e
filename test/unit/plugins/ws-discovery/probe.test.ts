import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesProbe, scopeMatches } from '../../../../plugins/ws-discovery/src/matching.js';
import { parseProbe } from '../../../../plugins/ws-discovery/src/probe.js';
import { NS } from '../../../../plugins/ws-discovery/src/namespaces.js';

const envelope = (header: string, body: string, extra = '') =>
  `<e:Envelope xmlns:e="${NS.env}" xmlns:w="${NS.wsa04}" ${extra}><e:Header>${header}</e:Header><e:Body>${body}</e:Body></e:Envelope>`;
const id = '<w:MessageID>uuid:1234</w:MessageID>';
const OURS = ['onvif://www.onvif.org/Profile/Streaming', 'onvif://www.onvif.org/name/cam-1', 'onvif://www.onvif.org/location/front_door'];

test('a Probe is read namespace-aware, whatever the prefixes', () => {
  const p = parseProbe(envelope(id, `<d:Probe xmlns:d="${NS.wsd}"><d:Types xmlns:t="${NS.tds}">t:Device</d:Types></d:Probe>`));
  assert.deepEqual(p, { messageId: 'uuid:1234', types: [{ ns: NS.tds, local: 'Device' }], scopes: [], matchBy: null });
  // Default namespace on the Probe, types prefix declared on the envelope, 2005/08 addressing.
  const q = parseProbe(
    envelope(
      `<a:MessageID xmlns:a="${NS.wsa}">urn:uuid:x</a:MessageID>`,
      `<Probe xmlns="${NS.wsd}"><Types>dn:NetworkVideoTransmitter</Types></Probe>`,
      `xmlns:dn="${NS.dn}"`,
    ),
  );
  assert.deepEqual(q?.types, [{ ns: NS.dn, local: 'NetworkVideoTransmitter' }]);
  assert.equal(q?.messageId, 'urn:uuid:x');
  // No Types element at all: any device.
  assert.deepEqual(parseProbe(envelope(id, `<Probe xmlns="${NS.wsd}"/>`))?.types, []);
});

test('anything but a well-formed Probe with a MessageID is null', () => {
  const body = `<Probe xmlns="${NS.wsd}"/>`;
  for (const text of [
    '',
    'garbage',
    envelope(id, body).slice(0, 120),
    envelope('', body),
    envelope('<w:MessageID> </w:MessageID>', body),
    envelope(`<w:MessageID>${'x'.repeat(300)}</w:MessageID>`, body),
    envelope(id, `<Hello xmlns="${NS.wsd}"/>`),
    envelope(id, '<Probe/>'),
    `<!DOCTYPE x [<!ENTITY a "b">]>${envelope(id, body)}`,
    `<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Header>${id}</e:Header><e:Body>${body}</e:Body></e:Envelope>`,
  ]) {
    assert.equal(parseProbe(text), null, text.slice(0, 80));
  }
});

test('the device answers NetworkVideoTransmitter and Device in ONVIF namespaces, or no types; nothing else', () => {
  const probe = (types: { ns: string | null; local: string }[], scopes: string[] = [], matchBy: string | null = null) => ({
    messageId: 'm',
    types,
    scopes,
    matchBy,
  });
  assert.equal(matchesProbe(probe([]), OURS), true);
  assert.equal(matchesProbe(probe([{ ns: NS.dn, local: 'NetworkVideoTransmitter' }]), OURS), true);
  assert.equal(matchesProbe(probe([{ ns: NS.dn, local: 'Device' }]), OURS), true, 'node-onvif-ts puts Device in the network namespace');
  assert.equal(
    matchesProbe(
      probe([
        { ns: NS.tds, local: 'Device' },
        { ns: null, local: 'NetworkVideoTransmitter' },
      ]),
      OURS,
    ),
    true,
  );
  assert.equal(matchesProbe(probe([{ ns: NS.dn, local: 'NetworkVideoDisplay' }]), OURS), false);
  assert.equal(matchesProbe(probe([{ ns: 'http://example.com/x', local: 'Device' }]), OURS), false);
  assert.equal(
    matchesProbe(
      probe([
        { ns: NS.dn, local: 'NetworkVideoTransmitter' },
        { ns: NS.dn, local: 'Printer' },
      ]),
      OURS,
    ),
    false,
  );
  assert.equal(matchesProbe(probe([], ['onvif://www.onvif.org/location']), OURS), true);
  assert.equal(matchesProbe(probe([], ['onvif://www.onvif.org/location/garage']), OURS), false);
});

test('scopes match by whole path segments (RFC 3986) or exactly (strcmp0)', () => {
  assert.equal(scopeMatches('onvif://www.onvif.org/name', 'onvif://www.onvif.org/name/cam-1', null), true);
  assert.equal(scopeMatches('onvif://www.onvif.org/name/', 'onvif://www.onvif.org/name/cam-1', null), true);
  assert.equal(scopeMatches('onvif://www.onvif.org/na', 'onvif://www.onvif.org/name/cam-1', null), false);
  const strcmp = 'http://schemas.xmlsoap.org/ws/2005/04/discovery/strcmp0';
  assert.equal(scopeMatches('onvif://www.onvif.org/name', 'onvif://www.onvif.org/name/cam-1', strcmp), false);
  assert.equal(scopeMatches('onvif://www.onvif.org/name/cam-1', 'onvif://www.onvif.org/name/cam-1', strcmp), true);
});
