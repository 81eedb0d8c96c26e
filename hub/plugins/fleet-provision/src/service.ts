import { serviceToken } from 'lookout/core';

/**
 * Where the hub would write a device's files over SSH, or why it cannot: the fleet CA (a renewal
 * signs with it), the device's SSH address (its provisioning record, else its registry entry) and
 * the hub's SSH credentials. Nothing on the device is checked: that is the remedy's own work.
 */
export type DeviceFilesAvailability = { ok: true; via: string } | { ok: false; reason: string };

/** What a remedy did on the device: `changed` false when the files were as wanted already. */
export interface DeviceFilesOutcome {
  device_id: string;
  /** `user@host:port` and the device root the files went under. */
  via: string;
  changed: boolean;
  /** What was done (a certificate's fingerprint and end, the files written); never a secret. */
  detail: string;
  /** The layer re-applied (reapplyLayer). */
  layer?: string;
}

/**
 * The provisioner's steps for a device already in the fleet, for the remedies of POST /fleet/remediate:
 * each connects with the hub's SSH credentials (DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE), the host key
 * pinned, and writes atomically only what differs. Failures are the provisioning's typed errors
 * (fleet-provision.fleet_ca_unavailable, ssh_not_configured, target_unknown, device_unreachable, ssh_*).
 */
export interface FleetProvision {
  /** Whether renewCertificate ('certificate') or reapplyLayer ('layer') can run for the device now. */
  availability(deviceId: string, what: 'certificate' | 'layer'): Promise<DeviceFilesAvailability>;
  /**
   * The peer certificate (`/data/config/shadow_peer.crt` and `.key`) issued again by the fleet CA when
   * the one there has ended, ends within 30 days, is another CA's or device's, or does not match its
   * key; kept otherwise. The device reads it when it announces again (announce_identity).
   */
  renewCertificate(deviceId: string, signal?: AbortSignal): Promise<DeviceFilesOutcome>;
  /**
   * The layer's shipped env written again (durable path and mirror); when it changed, the device's
   * service restarted (LOOKOUT_PROVISION_START_COMMAND) and its hello awaited. `layer`: the one its
   * hello announced; default its provisioning's.
   */
  reapplyLayer(deviceId: string, layer: string | null, signal?: AbortSignal): Promise<DeviceFilesOutcome>;
}

export const FLEET_PROVISION = serviceToken<FleetProvision>('fleet-provision');
