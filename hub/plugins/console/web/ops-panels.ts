import type { FunctionComponent } from 'preact';
import { ProvisioningPanel } from './provisioning-panel.js';
import { TransfersPanel } from './transfers-panel.js';
import { RemediationPanel } from './remediation-panel.js';

/** A section of the operations page: its id (the section's data-testid is `ops-<id>`), its heading and its component. */
export interface OpsPanel {
  id: string;
  title: string;
  Panel: FunctionComponent;
}

/** The operations page's sections, in the order shown. */
export const OPS_PANELS: OpsPanel[] = [
  { id: 'remediation', title: 'Remediation', Panel: RemediationPanel },
  { id: 'provisioning', title: 'Provisioning', Panel: ProvisioningPanel },
  { id: 'transfers', title: 'Transfers', Panel: TransfersPanel },
];
