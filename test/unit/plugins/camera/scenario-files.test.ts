import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { listScenarios, loadScenario, loadScenarioFile, scenariosDir } from '../../../../plugins/camera/src/scenario-files.js';
import { parseScenario, type ScenarioInput } from '../../../../plugins/camera/src/scenario-schema.js';
import { NO_PRODUCTION_CLASS, classIdOf } from '../../../../plugins/camera/src/scenario-classes.js';
import { temperatureAt } from '../../../../plugins/camera/src/temperature-script.js';

const REQUIRED = ['people-crossing', 'crowd-occlusion', 'vehicles', 'weapon-appears', 'plates-and-signs'];

function minimal(): ScenarioInput {
  return {
    durationS: 5,
    objects: [
      {
        id: 1,
        class: 'person',
        trajectory: [
          { t: 0, x: 100, y: 300, z: 6 },
          { t: 5, x: 500, y: 300, z: 6 },
        ],
      },
      { id: 2, class: 'car', trajectory: [{ t: 0, x: 300, y: 330, z: 15 }] },
    ],
  };
}

/** Asserts a config_invalid error whose message names `field`. */
function rejectsNaming(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof LookoutError, `expected a LookoutError, got ${String(err)}`);
    assert.equal(err.code, 'config_invalid');
    assert.ok(err.message.includes(field), `message should name ${field}: ${err.message}`);
    return true;
  });
}

test('every bundled scenario file validates, and the required ones are there', () => {
  const names = listScenarios();
  for (const name of REQUIRED) assert.ok(names.includes(name), `missing scenario ${name} in ${scenariosDir()}`);
  for (const name of names) {
    const loaded = loadScenario(name);
    assert.equal(loaded.name, name, 'the name inside a file matches its file name');
    assert.equal(loaded.scenario.fps, 10);
    assert.ok(loaded.scenario.objects.length > 0);
  }
});

test('the scenarios hold what their names promise', () => {
  const classes = (name: string) => new Set(loadScenario(name).scenario.objects.map((o) => o.class));
  assert.equal(loadScenario('people-crossing').scenario.objects.filter((o) => o.class === 'person').length, 2);
  assert.ok(loadScenario('crowd-occlusion').scenario.objects.filter((o) => o.class === 'person').length >= 4);
  for (const c of ['car', 'bus', 'truck', 'bicycle'] as const) assert.ok(classes('vehicles').has(c), `vehicles has a ${c}`);
  const weapons = loadScenario('weapon-appears').scenario.objects.filter((o) => o.class === 'knife' || o.class === 'gun');
  assert.ok(weapons.length >= 1);
  for (const w of weapons) assert.ok((w.appearS ?? 0) > 0 && w.attachTo, 'a weapon appears later, beside a person');
  for (const c of ['license_plate', 'sign', 'car'] as const) assert.ok(classes('plates-and-signs').has(c), `plates-and-signs has a ${c}`);
});

test('class ids follow the production map; plates and signs have none', () => {
  assert.equal(classIdOf('person'), 0);
  assert.equal(classIdOf('truck'), 5);
  assert.equal(classIdOf('gun'), 10);
  assert.equal(classIdOf('shotgun'), 13);
  assert.equal(classIdOf('license_plate'), NO_PRODUCTION_CLASS);
  assert.equal(classIdOf('sign'), NO_PRODUCTION_CLASS);
});

test('defaults are filled in', () => {
  const s = parseScenario(minimal());
  assert.equal(s.fps, 10);
  assert.equal(s.seed, 1);
  assert.equal(s.background.horizonY, 250);
  assert.equal(s.background.sensorNoise, 3);
});

test('a bad field gives a config_invalid error naming that field', () => {
  const negativeDepth = minimal();
  negativeDepth.objects[1].trajectory![0].z = -3;
  rejectsNaming(() => parseScenario(negativeDepth), 'objects[1].trajectory[0].z');

  const unknownClass = minimal() as { objects: Record<string, unknown>[] };
  unknownClass.objects[0].class = 'dragon';
  rejectsNaming(() => parseScenario(unknownClass), 'objects[0].class');

  const typo = minimal() as Record<string, unknown>;
  typo.duration = 5;
  rejectsNaming(() => parseScenario(typo), 'duration');

  const noDuration = minimal() as Record<string, unknown>;
  delete noDuration.durationS;
  rejectsNaming(() => parseScenario(noDuration), 'durationS');

  const badColour = minimal();
  badColour.objects[0].colour = 'red';
  rejectsNaming(() => parseScenario(badColour), 'objects[0].colour');
});

test('cross-field rules name the field: ids, keyframe order, attachments, windows, temperature', () => {
  const dup = minimal();
  dup.objects[1].id = 1;
  rejectsNaming(() => parseScenario(dup), 'objects[1].id');

  const backwards = minimal();
  backwards.objects[0].trajectory![1].t = 0;
  rejectsNaming(() => parseScenario(backwards), 'objects[0].trajectory[1].t');

  const orphan = minimal();
  orphan.objects.push({ id: 3, class: 'knife', attachTo: { id: 42 } });
  rejectsNaming(() => parseScenario(orphan), 'objects[2].attachTo.id');

  const both = minimal();
  both.objects[0].attachTo = { id: 2 };
  rejectsNaming(() => parseScenario(both), 'objects[0].trajectory');

  const window = minimal();
  window.objects[0].appearS = 3;
  window.objects[0].disappearS = 2;
  rejectsNaming(() => parseScenario(window), 'objects[0].disappearS');

  const temps = minimal();
  temps.temperature = [
    { atS: 5, celsius: 60 },
    { atS: 2, celsius: 70 },
  ];
  rejectsNaming(() => parseScenario(temps), 'temperature[1].atS');
  temps.temperature = [{ atS: 0, celsius: 400 }];
  rejectsNaming(() => parseScenario(temps), 'temperature[0].celsius');
});

test('bad files: invalid JSON, an invalid scenario and an unknown name are clear errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lookout-scenarios-'));
  try {
    writeFileSync(join(dir, 'broken.json'), '{ "durationS": 5, ');
    assert.throws(
      () => loadScenarioFile(join(dir, 'broken.json')),
      (err: unknown) => {
        assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
        assert.match(err.message, /broken\.json is not readable JSON/);
        return true;
      },
    );
    const bad = minimal();
    bad.fps = 0;
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad));
    rejectsNaming(() => loadScenario(join(dir, 'bad.json')), 'fps');
    rejectsNaming(() => loadScenario(join(dir, 'bad.json')), 'bad.json');
    writeFileSync(join(dir, 'good.json'), JSON.stringify(minimal()));
    assert.equal(loadScenario(join(dir, 'good.json')).name, 'good', 'a path works and names the scenario after its file');
    assert.equal(loadScenario('good', dir).scenario.durationS, 5, 'a name resolves inside the given folder');
    assert.throws(
      () => loadScenario('no-such-scenario'),
      (err: unknown) => {
        assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
        assert.match(err.message, /SIM_SCENARIO/);
        assert.match(err.message, /people-crossing/, 'the message lists the bundled scenarios');
        return true;
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the temperature script interpolates and holds at both ends', () => {
  const { scenario } = loadScenario('thermal-soak');
  const script = scenario.temperature!;
  assert.ok(script.length >= 3);
  assert.equal(temperatureAt(script, 0), 55);
  assert.equal(temperatureAt(script, 10), 66.5);
  assert.equal(temperatureAt(script, 40), 92);
  assert.equal(temperatureAt(script, 1e6), script[script.length - 1].celsius);
  assert.equal(temperatureAt([{ atS: 5, celsius: 60 }], 0), 60);
});
