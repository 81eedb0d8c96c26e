import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { READINESS_ENRICHMENT_FIELDS } from '../../../../../core/src/contracts/index.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { DeviceReadinessSchema, READINESS_MODULES, type ModuleResult } from '../../../../../hub/plugins/readiness/src/readiness-schemas.js';
import { MAX_EVIDENCE_JSON_CHARS, MAX_EVIDENCE_REASON_CHARS, MAX_EVIDENCE_STRING_CHARS } from '../../../../../hub/plugins/readiness/src/clip-evidence.js';
import { CAMERA_PLUGINS, DEVICE, FINGERPRINT, healthAnswer, ISO_NOW, meshStatus, plugins, recordedFacts, withHealth } from './recorded-facts.js';

/** Another certificate's SHA-256 fingerprint, in the same colon hex. */
const OTHER_FINGERPRINT = FINGERPRINT.split(':').reverse().join(':');
const valueOf = (r: ModuleResult) => r.evidence.value as Record<string, unknown>;
const NO_MESH_TOOL = `get_peer_mesh_status failed: ${DEVICE} has no tool named "get_peer_mesh_status"`;

describe('readiness of one device', () => {
  it('grades a healthy camera ready in every module, with evidence of what was seen and when', () => {
    const r = gradeDevice(recordedFacts(), 'hub-a');
    assert.ok(DeviceReadinessSchema.safeParse(r).success, JSON.stringify(DeviceReadinessSchema.safeParse(r).error?.issues));
    for (const m of READINESS_MODULES) assert.equal(r.modules[m].grade, 'ready', `${m}: ${r.modules[m].evidence.reason}`);
    assert.equal(r.grade, 'ready');
    assert.equal(r.reason, null);
    assert.equal(r.checked_at, ISO_NOW);
    assert.equal(r.checked_by, 'hub-a');
    const mesh = r.modules.hermes_mesh.evidence;
    assert.equal(mesh.at, ISO_NOW);
    assert.match(mesh.checked, /get_peer_mesh_status/);
    assert.equal((mesh.value as { peers_up: number }).peers_up, 1);
    assert.equal(r.five_minute_check.passed, true);
    assert.deepEqual(Object.keys(r.five_minute_check.fields).sort(), [...READINESS_ENRICHMENT_FIELDS].sort());
  });

  it('a device without the peer-mesh plugin: hermes_mesh and peer_sidecar not_ready, saying the tool is missing', () => {
    const names = CAMERA_PLUGINS.filter((p) => p !== 'peer-mesh');
    const r = gradeDevice(withHealth({ mesh: null, plugins: plugins(names) }), 'hub-a');
    for (const m of ['hermes_mesh', 'peer_sidecar'] as const) {
      assert.equal(r.modules[m].grade, 'not_ready');
      assert.match(r.modules[m].evidence.reason!, /get_peer_mesh_status.*has no tool named/);
    }
    // The five-minute check names each failing field and the hub's reason.
    const check = r.five_minute_check;
    assert.equal(check.passed, false);
    assert.equal(check.fields.peer_mesh.ok, false);
    assert.equal(check.fields.peer_mesh.reason, NO_MESH_TOOL);
    assert.equal(check.fields.peer_comm_status.reason, NO_MESH_TOOL);
    assert.equal(check.fields.overlay_mount.ok, false);
    assert.equal(check.fields.cert_fingerprint_present.ok, true);
    // overlay_mount came from the mesh: the tool server answered, so mcp_health is degraded, not not_ready.
    assert.equal(r.modules.mcp_health.grade, 'degraded');
    assert.match(r.modules.mcp_health.evidence.reason!, /overlay_mount/);
    assert.equal(r.grade, 'not_ready');
    assert.match(r.reason!, /^not_ready: peer_sidecar \(.*\); hermes_mesh \(.*\) \| degraded: mcp_health/);
  });

  it('follows peer_comm_status: degraded with the peers not up, isolated and no_key not_ready', () => {
    const suspect = meshStatus({
      peer_comm_status: 'degraded',
      reason: 'a peer missed heartbeats',
      peers_up: 0,
      peers: [{ ...meshStatus().peers[0], state: 'suspect' }],
    });
    const degraded = gradeDevice(withHealth({ mesh: suspect }), 'h').modules.hermes_mesh;
    assert.equal(degraded.grade, 'degraded');
    assert.match(degraded.evidence.reason!, /a peer missed heartbeats; peers not up: cam-2 suspect/);
    const isolated = gradeDevice(withHealth({ mesh: meshStatus({ peer_comm_status: 'isolated', reason: 'no peer up', peers_up: 0 }) }), 'h');
    assert.equal(isolated.modules.hermes_mesh.grade, 'not_ready');
    assert.equal(isolated.five_minute_check.fields.peer_comm_status.value, 'isolated');
    const noKey = gradeDevice(
      withHealth({ mesh: meshStatus({ peer_comm_status: 'no_key', reason: 'no MESH_KEY and no key file', mesh_key_present: false }) }),
      'h',
    );
    assert.equal(noKey.modules.hermes_mesh.grade, 'not_ready');
    assert.match(noKey.modules.hermes_mesh.evidence.reason!, /no_key: no MESH_KEY/);
  });

  it('refuses a peer_mesh outside the contract (a double with a few fields) rather than trusting its status', () => {
    const double = { peer_comm_status: 'ok', peers: [{ device_id: 'x', last_seen_s: 1 }], overlay_mount: '/overlay' };
    const r = gradeDevice(withHealth({ mesh: double }), 'h');
    assert.equal(r.modules.hermes_mesh.grade, 'not_ready');
    assert.match(r.modules.hermes_mesh.evidence.reason!, /outside its contract/);
    assert.equal(r.five_minute_check.fields.peer_comm_status.ok, true);
    assert.equal(r.five_minute_check.fields.peer_mesh.ok, false);
  });

  it('grades the sidecar: not listening with its problem, an unannounced or different port degraded', () => {
    const down = meshStatus({ sidecar: { ...meshStatus().sidecar, listening: false, port: null, problem: 'no fleet CA at /data/config/fleet_ca.crt' } });
    const r = gradeDevice(withHealth({ mesh: down }), 'h').modules.peer_sidecar;
    assert.equal(r.grade, 'not_ready');
    assert.match(r.evidence.reason!, /not listening: no fleet CA/);
    const base = recordedFacts();
    const unannounced = gradeDevice({ ...base, registered: { ...base.registered!, ports: { tools: 8765 } } }, 'h').modules.peer_sidecar;
    assert.equal(unannounced.grade, 'degraded');
    assert.match(unannounced.evidence.reason!, /announces no sidecar port/);
    const other = gradeDevice({ ...base, registered: { ...base.registered!, ports: { tools: 8765, sidecar: 9999 } } }, 'h').modules.peer_sidecar;
    assert.equal(other.grade, 'degraded');
    assert.match(other.evidence.reason!, /listens on 8777 but .* announces 9999/);
  });

  it('grades the identity fingerprint: none not_ready, unreadable degraded, identity degraded', () => {
    const none = gradeDevice(withHealth({ fingerprint: null, present: false }), 'h');
    assert.equal(none.modules.device_identity_fp.grade, 'not_ready');
    assert.match(none.modules.device_identity_fp.evidence.reason!, /no device certificate: the device reports no certificate/);
    assert.equal(none.five_minute_check.fields.cert_fingerprint_present.ok, false);
    const unreadable = gradeDevice(withHealth({ fingerprint: null, present: true }), 'h').modules.device_identity_fp;
    assert.equal(unreadable.grade, 'degraded');
    const notDurable = plugins(CAMERA_PLUGINS, { identity: { state: 'degraded', message: 'key not yet durable: ENOSPC' } });
    const slow = gradeDevice(withHealth({ plugins: notDurable }), 'h').modules.device_identity_fp;
    assert.equal(slow.grade, 'degraded');
    assert.match(slow.evidence.reason!, /identity plugin is degraded \(key not yet durable: ENOSPC\)/);
  });

  it('a device that does not answer: every module reading its answer not_ready with the failure, the sidecar still graded', () => {
    const facts = recordedFacts({
      health: { ok: false, code: 'device_unreachable', reason: 'calling get_system_health on cam-1 failed: ECONNREFUSED' },
      presence: 'offline',
    });
    const r = gradeDevice(facts, 'h');
    for (const m of READINESS_MODULES.filter((m) => m !== 'cross_a2a_federation')) {
      assert.equal(r.modules[m].grade, 'not_ready', m);
      assert.match(r.modules[m].evidence.reason!, /did not answer get_system_health.*device_unreachable.*ECONNREFUSED/, m);
    }
    assert.equal(r.modules.cross_a2a_federation.grade, 'ready');
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.five_minute_check.passed, false);
    assert.match(r.five_minute_check.fields.listen_ports.reason!, /device_unreachable/);
  });

  it('mcp_health degraded when the device reports itself critical, naming the failed plugin', () => {
    const list = plugins(CAMERA_PLUGINS, { detector: { state: 'failed', code: 'model_shape_mismatch' } });
    const r = gradeDevice(withHealth({ status: 'critical', plugins: list }), 'h').modules.mcp_health;
    assert.equal(r.grade, 'degraded');
    assert.match(r.evidence.reason!, /health status is critical \(detector failed\)/);
  });

  it('cross_a2a_federation: no a2a plugin, a failed query, another device answering, another certificate', () => {
    const absent = gradeDevice(recordedFacts({ peerHello: { absent: 'the hub runs no a2a plugin' } }), 'h').modules.cross_a2a_federation;
    assert.equal(absent.grade, 'not_ready');
    assert.equal(absent.evidence.reason, 'the hub runs no a2a plugin');
    const failed = gradeDevice(recordedFacts({ peerHello: { ok: false, code: 'a2a.peer_unreachable', reason: 'handshake refused' } }), 'h');
    assert.equal(failed.modules.cross_a2a_federation.grade, 'not_ready');
    assert.match(failed.modules.cross_a2a_federation.evidence.reason!, /a2a.peer_unreachable: handshake refused/);
    const ack = recordedFacts().peerHello as { ok: true; value: Record<string, unknown> };
    const impostor = gradeDevice(recordedFacts({ peerHello: { ok: true, value: { ...ack.value, device_id: 'cam-9' } } }), 'h');
    assert.equal(impostor.modules.cross_a2a_federation.grade, 'not_ready');
    assert.match(impostor.modules.cross_a2a_federation.evidence.reason!, /sidecar at 127.0.0.2:8777 answered as "cam-9"/);
    // Colon hex in either case is the same certificate.
    const lower = gradeDevice(
      recordedFacts({ peerHello: { ok: true, value: { ...ack.value, cert_fingerprint: String(ack.value.cert_fingerprint).toLowerCase() } } }),
      'h',
    );
    assert.equal(lower.modules.cross_a2a_federation.grade, 'ready');
    assert.equal(valueOf(lower.modules.cross_a2a_federation).tls_fingerprint, FINGERPRINT, 'the certificate the hub saw is in the evidence');
  });

  it('cross_a2a_federation grades against the certificate the sidecar presented over TLS, not what the device says', () => {
    const ack = recordedFacts().peerHello as { ok: true; value: Record<string, unknown> };
    const presented = OTHER_FINGERPRINT;
    // The acknowledgement and get_device_identity agree with each other, but not with the certificate the hub saw.
    const claims = gradeDevice(recordedFacts({ peerHello: { ok: true, value: { ...ack.value, tls_fingerprint: presented } } }), 'h');
    const a2a = claims.modules.cross_a2a_federation;
    assert.equal(a2a.grade, 'not_ready');
    assert.equal(a2a.evidence.reason, `the sidecar's acknowledgement claims certificate ${FINGERPRINT}, but it presented ${presented} over TLS`);
    assert.equal(valueOf(a2a).tls_fingerprint, presented);
    assert.equal(valueOf(a2a).cert_fingerprint, FINGERPRINT);
    assert.equal(claims.grade, 'not_ready');
    // An acknowledgement naming no certificate: get_device_identity is held to the one presented.
    const silent = gradeDevice(recordedFacts({ peerHello: { ok: true, value: { ...ack.value, cert_fingerprint: null, tls_fingerprint: presented } } }), 'h');
    assert.equal(silent.modules.cross_a2a_federation.grade, 'degraded');
    assert.equal(
      silent.modules.cross_a2a_federation.evidence.reason,
      `get_device_identity reports certificate ${FINGERPRINT}, but the sidecar presented ${presented} over TLS`,
    );
    const agree = gradeDevice(recordedFacts({ peerHello: { ok: true, value: { ...ack.value, cert_fingerprint: null } } }), 'h');
    assert.equal(agree.modules.cross_a2a_federation.grade, 'ready');
    // No certificate from the handshake: nothing the device says can stand in for it.
    const { tls_fingerprint: _seen, ...unseen } = ack.value;
    const blind = gradeDevice(recordedFacts({ peerHello: { ok: true, value: unseen } }), 'h').modules.cross_a2a_federation;
    assert.equal(blind.grade, 'not_ready');
    assert.match(blind.evidence.reason!, /did not say which certificate the sidecar presented/);
  });

  it('clips what a device supplies before it is stored: a 4 MB overlay_mount, a long reason, a flood of ports', () => {
    const huge = `/data/${'x'.repeat(4 * 1024 * 1024)}`;
    const message = `key not yet durable: ${'y'.repeat(1024 * 1024)}`;
    const flooded = plugins(CAMERA_PLUGINS, { identity: { state: 'degraded', message } });
    const answer = { ...healthAnswer({ overlay: huge, plugins: flooded }), listen_ports: Array.from({ length: 100_000 }, (_, i) => `port-${i}`) };
    const record = gradeDevice(withHealth({ plugins: flooded }, { health: { ok: true, value: answer } }), 'h');
    DeviceReadinessSchema.parse(record);

    const overlay = record.five_minute_check.fields.overlay_mount;
    assert.equal(overlay.ok, true, 'a device that names its mount is not failed for it');
    assert.equal(typeof overlay.value, 'string');
    assert.ok((overlay.value as string).startsWith('/data/xxx') && (overlay.value as string).endsWith('...'));
    assert.equal((overlay.value as string).length, MAX_EVIDENCE_STRING_CHARS);
    assert.equal(valueOf(record.modules.mcp_health).overlay_mount, overlay.value);

    const ports = record.five_minute_check.fields.listen_ports;
    assert.equal(ports.ok, false);
    assert.ok(JSON.stringify(ports.value).length <= MAX_EVIDENCE_JSON_CHARS, 'the ports the device sent, clipped');
    assert.ok(JSON.stringify(valueOf(record.modules.mcp_health)).length <= MAX_EVIDENCE_JSON_CHARS);

    const identity = record.modules.device_identity_fp;
    assert.equal(identity.grade, 'degraded');
    assert.ok(identity.evidence.reason!.startsWith('its identity plugin is degraded (key not yet durable: yyy'));
    assert.equal(identity.evidence.reason!.length, MAX_EVIDENCE_REASON_CHARS);
    assert.ok(JSON.stringify(identity.evidence.value).length <= MAX_EVIDENCE_JSON_CHARS);
    assert.ok(record.reason!.length <= 2000);
    // Eleven modules and five fields, each bounded: the whole record stays small.
    assert.ok(JSON.stringify(record).length < 64 * 1024, `${JSON.stringify(record).length} characters`);
  });
});
