/**
 * The fleet's certificates (`lookout certs`): a P-256 fleet CA, device certificates for the peer
 * sidecars and the hub's client certificate, and the check a holder runs before it trusts its files.
 * `certificate-check.ts` and `tls-paths.ts` need node:crypto alone (what plugins import); issuing loads @peculiar/x509.
 */
export { checkIssuedBy, keyMatchesCertificate, commonNameOf, type CertificateCheck } from './certificate-check.js';
export { deviceTlsPaths, hubServerTlsPaths, hubTlsPaths, HUB_CERT_COMMON_NAME, type TlsPaths } from './tls-paths.js';
export { certificateExpiry, expiryWarning, EXPIRY_WARNING_DAYS, type CertificateExpiry } from './certificate-expiry.js';
export { readManaged, recordManaged, caCertPathOf, MANAGED_FILE, type ManagedCertificate } from './managed-certificates.js';
export { openFleetCa, CA_FILES, CA_COMMON_NAME, type FleetCa } from './fleet-ca.js';
export { issueCertificate, type CertificateRequest, type CertificateUsage, type IssuedCertificate } from './issue-certificate.js';
export {
  provisionDeviceCertificate,
  provisionHubCertificate,
  provisionHubServerCertificate,
  RENEW_BEFORE_DAYS,
  type CertificateRole,
  type ProvisionedCertificate,
} from './provision-certificates.js';
export { provisionFleetCertificates, type FleetCertificatesRequest, type FleetCertificatesReport } from './provision-fleet.js';
export { createSelfSignedCertificate, type SelfSignedCertificate } from './self-signed-lazy.js';
export * from './certificate-names.js';
export * from './device-agents.js';
export * from './device-pin.js';
export * from './exclusive-write.js';
export * from './key-file-mode.js';
export * from './read-if-there.js';
export * from './reloading-certificate.js';
export * from './self-signed.js';
export * from './served-pair.js';
export * from './surface-transport.js';
export * from './x509-provider.js';
