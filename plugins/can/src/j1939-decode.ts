import { decodeJ1939Id, type J1939Id } from './j1939-id.js';
import { groupOf } from './j1939-parameters.js';
import { rawField, rawState, type ParameterState } from './j1939-value.js';

/** One parameter as read: its physical value, or null with the state that says why. */
export interface DecodedParameter {
  spn: number;
  name: string;
  value: number | null;
  unit: string;
  state: ParameterState | 'missing';
}

export interface DecodedGroup extends J1939Id {
  /** The standard's acronym when the group is in our table. */
  name?: string;
  parameters: DecodedParameter[];
}

/** Rounds away binary-fraction noise (0.4 × 3 = 1.2000000000000002) without losing a resolution step. */
function physical(raw: number, resolution: number, offset: number): number {
  return Math.round((raw * resolution + offset) * 1e6) / 1e6;
}

/** Decodes a frame with a 29-bit identifier: the id's fields, and every parameter of a group we know. */
export function decodeJ1939Frame(id: number, data: Uint8Array): DecodedGroup {
  const head = decodeJ1939Id(id);
  const group = groupOf(head.pgn);
  if (!group) return { ...head, parameters: [] };
  const parameters = group.parameters.map((spec): DecodedParameter => {
    const raw = rawField(data, spec);
    // A short frame (DLC below the field) holds no reading: said as missing, never as zero.
    if (raw === undefined) return { spn: spec.spn, name: spec.name, value: null, unit: spec.unit, state: 'missing' };
    const state = rawState(raw, spec.bits);
    return { spn: spec.spn, name: spec.name, value: state === 'valid' ? physical(raw, spec.resolution, spec.offset) : null, unit: spec.unit, state };
  });
  return { ...head, name: group.acronym, parameters };
}
