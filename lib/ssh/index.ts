/** SSH to devices, shared by the hub (device-ssh, fleet-provision) and the operator CLI: pinned host keys, credentials, one connection, a session on it. */
export { KnownHosts, hostKeyOf, fingerprintOf, knownHostsLine, knownHostsName, parseKnownHosts, type HostKey, type HostKeyVerdict } from './known-hosts.js';
export { SshCredentials, loadSsh2, type SshCredentialSource } from './ssh-credentials.js';
export { connectSsh, describeTarget, sshDetails, type SshTarget, type ConnectOptions } from './ssh-connect.js';
export { abortError, guarded, type GuardOptions } from './op-guard.js';
export { RemoteSession, SFTP_NO_SUCH_FILE, isSftpMissing, shellQuote, type ExecResult } from './remote-session.js';
export { SSH_ERRORS } from './ssh-errors.js';
