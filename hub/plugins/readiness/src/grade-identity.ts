import { answerOf, enrichmentMissing, grader, pluginNotOk, pluginValue, withoutAnswer } from './grade-kit.js';
import { pluginOf, type DeviceFacts } from './device-facts.js';
import { deviceCertificateEnd, deviceCertificateWarning } from './device-certificate-expiry.js';
import type { ModuleResult } from './readiness-schemas.js';

/** SHA-256 of a certificate as identity writes it: 32 bytes in colon hex. */
const SHA256_FINGERPRINT = /^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}$/;

/**
 * device_identity_fp: the device's certificate fingerprint, from cert_fingerprint and
 * cert_fingerprint_present of its enriched health (get_device_identity). Applies to every device.
 *  - ready: a certificate is present and its SHA-256 fingerprint is shown
 *  - degraded: present but its fingerprint could not be read or is not a SHA-256 one; or the
 *    identity plugin runs degraded (e.g. its key is not yet durable on a full disk)
 *  - not_ready: no certificate; no answer; the identity plugin failed; the certificate its hello
 *    announced (`cert_not_after`) has ended: clients refuse its TLS surfaces. One ending within 30
 *    days keeps its grade (it still works) and warns (the device's and the fleet's `warnings`).
 */
export function gradeDeviceIdentity(facts: DeviceFacts): ModuleResult {
  const result = gradeFingerprint(facts);
  const end = deviceCertificateEnd(facts);
  if (!end) return result;
  const evidence = { ...result.evidence, value: { ...(result.evidence.value as object | null), cert_not_after: end.notAfter, cert_days_left: end.daysLeft } };
  if (end.state !== 'expired') return { ...result, evidence };
  const expired = deviceCertificateWarning(facts.deviceId, end)!;
  return { grade: 'not_ready', evidence: { ...evidence, reason: result.grade === 'not_ready' ? `${expired}; ${result.evidence.reason}` : expired } };
}

function gradeFingerprint(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'cert_fingerprint and cert_fingerprint_present of the enriched get_system_health (get_device_identity); cert_not_after of its hello');
  const noAnswer = withoutAnswer(facts);
  if (noAnswer) return g.notReady(null, noAnswer);
  const answer = answerOf(facts)!;
  const fingerprint = typeof answer.cert_fingerprint === 'string' ? answer.cert_fingerprint : null;
  const plugin = pluginOf(facts, 'identity');
  const value = {
    cert_fingerprint_present: answer.cert_fingerprint_present ?? null,
    cert_fingerprint: fingerprint,
    ...(plugin ? { plugin: pluginValue(plugin) } : {}),
  };
  if (plugin && (plugin.state === 'failed' || plugin.state === 'skipped' || plugin.state === 'stopped')) {
    return g.notReady(value, pluginNotOk(plugin)!);
  }
  if (answer.cert_fingerprint_present !== true) {
    return g.notReady(value, `no device certificate: ${enrichmentMissing(answer, 'cert_fingerprint') ?? 'cert_fingerprint_present is not true'}`);
  }
  if (fingerprint === null) {
    return g.degraded(
      value,
      `a certificate is present but its fingerprint could not be read: ${enrichmentMissing(answer, 'cert_fingerprint') ?? 'not reported'}`,
    );
  }
  if (!SHA256_FINGERPRINT.test(fingerprint))
    return g.degraded(value, `cert_fingerprint is not a SHA-256 fingerprint (32 bytes in colon hex): ${fingerprint.slice(0, 120)}`);
  const notOk = plugin ? pluginNotOk(plugin) : null;
  if (notOk) return g.degraded(value, notOk);
  return g.ready(value);
}
