import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJ1939Id } from '../../../../plugins/can/src/j1939-id.js';
import { decodeJ1939Frame } from '../../../../plugins/can/src/j1939-decode.js';
import { rawState } from '../../../../plugins/can/src/j1939-value.js';

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const values = (id: number, hex: string) => Object.fromEntries(decodeJ1939Frame(id, bytes(hex)).parameters.map((p) => [p.name, p.value]));
const states = (id: number, hex: string) => Object.fromEntries(decodeJ1939Frame(id, bytes(hex)).parameters.map((p) => [p.name, p.state]));

describe('J1939 identifier', () => {
  it('PDU2 (PF ≥ 240): the PS byte is part of the PGN and the frame is global', () => {
    assert.deepEqual(decodeJ1939Id(0x18fef100), { priority: 6, pgn: 65265, source_address: 0x00, destination_address: 0xff });
    assert.deepEqual(decodeJ1939Id(0x0cf00400), { priority: 3, pgn: 61444, source_address: 0x00, destination_address: 0xff });
    assert.deepEqual(decodeJ1939Id(0x18ff0021), { priority: 6, pgn: 65280, source_address: 0x21, destination_address: 0xff });
  });

  it('PDU1 (PF < 240): the PS byte is the destination and leaves the PGN', () => {
    // Request (PGN 59904) from 0xF9 to 0x17: not PGN 59927.
    assert.deepEqual(decodeJ1939Id(0x18ea17f9), { priority: 6, pgn: 59904, source_address: 0xf9, destination_address: 0x17 });
    // TSC1 (PGN 0) to the engine, priority 3.
    assert.deepEqual(decodeJ1939Id(0x0c000003), { priority: 3, pgn: 0, source_address: 0x03, destination_address: 0x00 });
  });

  it('the data page and extended data page bits are in the PGN', () => {
    assert.equal(decodeJ1939Id(0x19fef100).pgn, 0x1fef1);
    assert.equal(decodeJ1939Id(0x1bfef100).pgn, 0x3fef1);
    assert.equal(decodeJ1939Id(0x1dfef100).priority, 7);
  });

  it('refuses what is not a 29-bit identifier', () => {
    assert.throws(() => decodeJ1939Id(0x20000000), RangeError);
    assert.throws(() => decodeJ1939Id(-1), RangeError);
  });
});

describe('J1939 parameters: scaling, offsets, not available and error', () => {
  it('EEC1: engine speed (SPN 190, 0.125 rpm/bit) and the torques (SPN 512, 513, offset -125 %)', () => {
    assert.deepEqual(values(0x0cf00400, 'F0AFA5E02EFFFFFF'), { driver_demand_torque: 50, actual_engine_torque: 40, engine_speed: 1500 });
    // The largest valid engine speed is 0xFAFF × 0.125; 0xFExx is an error, 0xFFxx not available.
    assert.equal(values(0x0cf00400, 'F0AFA5FFFAFFFFFF').engine_speed, 8031.875);
    assert.equal(states(0x0cf00400, 'F0AFA500FEFFFFFF').engine_speed, 'error');
    assert.equal(states(0x0cf00400, 'F0AFA5FFFFFFFFFF').engine_speed, 'not_available');
    assert.equal(values(0x0cf00400, 'F0AFA5FFFFFFFFFF').engine_speed, null);
  });

  it('CCVS1: wheel-based vehicle speed (SPN 84, 1/256 km/h) and two-bit switches', () => {
    assert.deepEqual(values(0x18fef100, 'F38058CDFFFFFFFF'), {
      parking_brake_switch: 0,
      wheel_based_vehicle_speed: 88.5,
      cruise_control_active: 1,
      brake_switch: 0,
      clutch_switch: null,
    });
    // Two-bit codes: 10 is an error, 11 not available.
    assert.equal(states(0x18fef100, 'FBFFFFFFFFFFFFFF').parking_brake_switch, 'error');
    assert.equal(states(0x18fef100, 'F38058CDFFFFFFFF').clutch_switch, 'not_available');
  });

  it('DD fuel level (SPN 96, 0.4 %/bit), ET1 coolant (SPN 110, -40 °C) and oil temperature (SPN 175, 0.03125 °C, -273)', () => {
    assert.deepEqual(values(0x18fefc17, 'FF9CFFFFFFFFFFFF'), { washer_fluid_level: null, fuel_level: 62.4 });
    assert.deepEqual(values(0x18feee00, '82FE402FFFFFFFFF'), { engine_coolant_temperature: 90, fuel_temperature: null, engine_oil_temperature: 105 });
    assert.equal(states(0x18feee00, '82FE402FFFFFFFFF').fuel_temperature, 'error');
    assert.equal(values(0x18feee00, '00FE402FFFFFFFFF').engine_coolant_temperature, -40, 'raw 0 is the offset, not a missing value');
  });

  it('odometer (VD SPN 245, 0.125 km) and engine hours (HOURS SPN 247, 0.05 h): four-byte fields', () => {
    assert.deepEqual(values(0x18fee000, '6400000006120F00'), { trip_distance: 12.5, total_vehicle_distance: 123456.75 });
    assert.deepEqual(values(0x18fee500, '9E510100FFFFFFFF'), { engine_total_hours: 4321.5, engine_total_revolutions: null });
    assert.equal(states(0x18fee500, '9E510100000000FE').engine_total_revolutions, 'error');
    assert.equal(states(0x18fee500, '9E510100000000FB').engine_total_revolutions, 'reserved');
  });

  it('a frame too short for a field says the field is missing, never zero', () => {
    const d = decodeJ1939Frame(0x0cf00401, bytes('F0AFA5'));
    assert.equal(d.name, 'EEC1');
    assert.equal(d.source_address, 1);
    assert.deepEqual(
      d.parameters.map((p) => [p.name, p.value, p.state]),
      [
        ['driver_demand_torque', 50, 'valid'],
        ['actual_engine_torque', 40, 'valid'],
        ['engine_speed', null, 'missing'],
      ],
    );
  });

  it('a group outside the table keeps its identifier fields and no parameters', () => {
    const d = decodeJ1939Frame(0x18ff0021, bytes('0102030405060708'));
    assert.equal(d.name, undefined);
    assert.deepEqual([d.pgn, d.source_address, d.parameters.length], [65280, 0x21, 0]);
  });

  it('range codes by width', () => {
    assert.deepEqual(
      [0xfa, 0xfb, 0xfd, 0xfe, 0xff].map((v) => rawState(v, 8)),
      ['valid', 'reserved', 'reserved', 'error', 'not_available'],
    );
    assert.deepEqual(
      [0xfaff, 0xfe00, 0xff00].map((v) => rawState(v, 16)),
      ['valid', 'error', 'not_available'],
    );
    assert.deepEqual(
      [0xfaffffff, 0xfe000000, 0xffffffff].map((v) => rawState(v, 32)),
      ['valid', 'error', 'not_available'],
    );
    assert.deepEqual(
      [0xd, 0xe, 0xf].map((v) => rawState(v, 4)),
      ['valid', 'error', 'not_available'],
    );
  });
});
