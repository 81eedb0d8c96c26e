// The pinned known-hosts file moved to lookout/core (core/src/ssh), shared with the operator CLI.
export { KnownHosts, hostKeyOf, fingerprintOf, knownHostsLine, knownHostsName, parseKnownHosts, type HostKey, type HostKeyVerdict } from 'lookout/core';
