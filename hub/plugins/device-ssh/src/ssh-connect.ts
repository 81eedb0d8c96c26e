// Connecting with a pinned host key moved to lookout/core (core/src/ssh), shared with the operator CLI.
export { connectSsh, describeTarget, sshDetails, type SshTarget, type ConnectOptions } from 'lookout/core';
