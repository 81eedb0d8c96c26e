/** The codes an SSH connection to a device and a session on it reject with: for the routes that use them to declare. */
export const SSH_ERRORS = ['ssh_not_configured', 'ssh_host_key_unknown', 'ssh_host_key_changed', 'ssh_auth_failed', 'ssh_failed', 'ssh_timeout'] as const;
