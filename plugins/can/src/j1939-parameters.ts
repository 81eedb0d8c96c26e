import type { FieldSpec } from './j1939-value.js';

/** One suspect parameter (SPN) of a parameter group: where it sits, its scaling and offset, its unit. */
export interface ParameterSpec extends FieldSpec {
  spn: number;
  /** Our snake_case key in the published `value` map. */
  name: string;
  /** Physical value = raw × resolution + offset. */
  resolution: number;
  offset: number;
  unit: string;
}

export interface GroupSpec {
  pgn: number;
  /** The standard's acronym (EEC1, CCVS1, …). */
  acronym: string;
  parameters: ParameterSpec[];
}

const p = (spn: number, name: string, byte: number, bits: number, resolution: number, offset: number, unit: string, bit?: number): ParameterSpec => ({
  spn,
  name,
  byte,
  bits,
  resolution,
  offset,
  unit,
  ...(bit !== undefined ? { bit } : {}),
});

/**
 * The parameter groups a fleet telematics unit reads (SAE J1939-71 positions, resolutions and
 * offsets): engine speed and load, road speed, fuel level and use, temperatures, pressures,
 * odometer and engine hours, battery, gear. Groups outside this table are counted, not decoded.
 */
export const J1939_GROUPS: readonly GroupSpec[] = [
  {
    pgn: 61444,
    acronym: 'EEC1',
    parameters: [
      p(512, 'driver_demand_torque', 2, 8, 1, -125, '%'),
      p(513, 'actual_engine_torque', 3, 8, 1, -125, '%'),
      p(190, 'engine_speed', 4, 16, 0.125, 0, 'rpm'),
    ],
  },
  {
    pgn: 61443,
    acronym: 'EEC2',
    parameters: [p(91, 'accelerator_pedal_position', 2, 8, 0.4, 0, '%'), p(92, 'engine_load', 3, 8, 1, 0, '%')],
  },
  {
    pgn: 61445,
    acronym: 'ETC2',
    parameters: [p(524, 'selected_gear', 1, 8, 1, -125, 'gear'), p(523, 'current_gear', 4, 8, 1, -125, 'gear')],
  },
  {
    pgn: 65265,
    acronym: 'CCVS1',
    parameters: [
      p(70, 'parking_brake_switch', 1, 2, 1, 0, 'state', 3),
      p(84, 'wheel_based_vehicle_speed', 2, 16, 1 / 256, 0, 'km/h'),
      p(595, 'cruise_control_active', 4, 2, 1, 0, 'state', 1),
      p(597, 'brake_switch', 4, 2, 1, 0, 'state', 5),
      p(598, 'clutch_switch', 4, 2, 1, 0, 'state', 7),
    ],
  },
  { pgn: 65276, acronym: 'DD', parameters: [p(80, 'washer_fluid_level', 1, 8, 0.4, 0, '%'), p(96, 'fuel_level', 2, 8, 0.4, 0, '%')] },
  {
    pgn: 65262,
    acronym: 'ET1',
    parameters: [
      p(110, 'engine_coolant_temperature', 1, 8, 1, -40, '°C'),
      p(174, 'fuel_temperature', 2, 8, 1, -40, '°C'),
      p(175, 'engine_oil_temperature', 3, 16, 0.03125, -273, '°C'),
    ],
  },
  {
    pgn: 65263,
    acronym: 'EFL/P1',
    parameters: [
      p(94, 'fuel_delivery_pressure', 1, 8, 4, 0, 'kPa'),
      p(98, 'engine_oil_level', 3, 8, 0.4, 0, '%'),
      p(100, 'engine_oil_pressure', 4, 8, 4, 0, 'kPa'),
      p(111, 'coolant_level', 8, 8, 0.4, 0, '%'),
    ],
  },
  {
    pgn: 65266,
    acronym: 'LFE1',
    parameters: [
      p(183, 'fuel_rate', 1, 16, 0.05, 0, 'L/h'),
      p(184, 'instantaneous_fuel_economy', 3, 16, 1 / 512, 0, 'km/L'),
      p(51, 'throttle_position', 7, 8, 0.4, 0, '%'),
    ],
  },
  { pgn: 65257, acronym: 'LFC1', parameters: [p(182, 'trip_fuel', 1, 32, 0.5, 0, 'L'), p(250, 'total_fuel_used', 5, 32, 0.5, 0, 'L')] },
  { pgn: 65248, acronym: 'VD', parameters: [p(244, 'trip_distance', 1, 32, 0.125, 0, 'km'), p(245, 'total_vehicle_distance', 5, 32, 0.125, 0, 'km')] },
  {
    pgn: 65217,
    acronym: 'VDHR',
    parameters: [p(917, 'total_vehicle_distance_high_resolution', 1, 32, 0.005, 0, 'km'), p(918, 'trip_distance_high_resolution', 5, 32, 0.005, 0, 'km')],
  },
  { pgn: 65253, acronym: 'HOURS', parameters: [p(247, 'engine_total_hours', 1, 32, 0.05, 0, 'h'), p(249, 'engine_total_revolutions', 5, 32, 1000, 0, 'r')] },
  {
    pgn: 65271,
    acronym: 'VEP1',
    parameters: [
      p(167, 'charging_system_potential', 3, 16, 0.05, 0, 'V'),
      p(168, 'battery_potential', 5, 16, 0.05, 0, 'V'),
      p(158, 'keyswitch_battery_potential', 7, 16, 0.05, 0, 'V'),
    ],
  },
  {
    pgn: 65269,
    acronym: 'AMB',
    parameters: [p(108, 'barometric_pressure', 1, 8, 0.5, 0, 'kPa'), p(171, 'ambient_air_temperature', 4, 16, 0.03125, -273, '°C')],
  },
  { pgn: 65270, acronym: 'IC1', parameters: [p(102, 'boost_pressure', 2, 8, 2, 0, 'kPa'), p(105, 'intake_manifold_temperature', 3, 8, 1, -40, '°C')] },
];

const BY_PGN = new Map(J1939_GROUPS.map((g) => [g.pgn, g]));

/** The group of this PGN in the table, if it is one we decode. */
export function groupOf(pgn: number): GroupSpec | undefined {
  return BY_PGN.get(pgn);
}
