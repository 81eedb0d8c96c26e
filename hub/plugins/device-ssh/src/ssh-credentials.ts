// The SSH credentials moved to lookout/core (core/src/ssh), shared with the operator CLI.
export { SshCredentials, type SshCredentialSource } from 'lookout/core';
