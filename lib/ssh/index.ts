/** SSH to devices, shared by the hub's device-ssh plugin and the operator CLI: pinned host keys, credentials, one connection. */
export { KnownHosts, hostKeyOf, fingerprintOf, knownHostsLine, knownHostsName, parseKnownHosts, type HostKey, type HostKeyVerdict } from './known-hosts.js';
export { SshCredentials, loadSsh2, type SshCredentialSource } from './ssh-credentials.js';
export { connectSsh, describeTarget, sshDetails, type SshTarget, type ConnectOptions } from './ssh-connect.js';
export { abortError, guarded, type GuardOptions } from './op-guard.js';
