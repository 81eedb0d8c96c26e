// `npm start`: builds if needed, then runs the hub (with its embedded broker) and a small simulated
// fleet on this machine, and prints where to look. Ctrl-C stops everything.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const root = new URL('..', import.meta.url).pathname;
// Where the demo keeps its fleet (data, logs, certificates); a test points it at a folder of its own.
const work = process.env.LOOKOUT_DEV_DIR || join(root, '.lookout-dev');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The demo cameras' ONVIF and RTSP password (they listen on 127.0.0.1 only). */
const ONVIF_PASSWORD = process.env.ONVIF_PASSWORD ?? 'lookout-demo';

/** The three devices of the demo fleet: different images, layers and scenes. */
const FLEET = [
  { id: 'sim-cam-1', image: 'camera', layer: 'layer2_tracker', role: 'front_door', scenario: 'people-crossing', labels: ['front_door', 'canary'] },
  { id: 'sim-cam-2', image: 'camera', layer: 'full', role: 'lobby', scenario: 'crowd-occlusion', labels: ['lobby'] },
  {
    id: 'sim-cam-3',
    image: 'precision',
    layer: 'layer2_tracker',
    role: 'gate',
    scenario: 'plates-and-signs',
    labels: ['gate'],
    // The precision role's text cascade: routed here by SVC_DEVICE_ID (shadow2), on simulated Omni weights
    // that have plate and sign classes; the plates are small in the frame, hence the lower box minimum.
    env: { SIM_DET_CLASS_MAP: 'omni15', SVC_DEVICE_ID: 'sim-cam-3-shadow2', EDGE_V3_ENCODE_ONLY: '0', TROCR_MIN_BOX_PX: '3', TROCR_MAX_CROPS_PER_SEC: '2' },
  },
];

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const full = join(dir, name);
    const st = statSync(full);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(full) : name.endsWith('.ts') ? st.mtimeMs : 0);
  }
  return newest;
}

function ensureBuilt() {
  const run = (args) => {
    const r = spawnSync(npm, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  };
  if (!existsSync(join(root, 'node_modules', 'zod'))) run(['install', '--no-audit', '--no-fund']);
  const stamp = join(root, 'dist', 'tsconfig.tsbuildinfo');
  const sources = Math.max(
    ...['core', 'lib', join('native', 'ts'), 'plugins', 'edge', 'hub', 'operator', 'builder', 'test'].map((d) => newestMtime(join(root, d))),
  );
  const consolePage = join(root, 'dist', 'hub', 'plugins', 'console', 'web', 'index.html');
  if (!existsSync(stamp) || !existsSync(join(root, 'dist', 'schemas')) || !existsSync(consolePage) || statSync(stamp).mtimeMs < sources) run(['run', 'build']);
}

/**
 * The preferred port when free, else 0 (one the system picks when listening: a second `npm start`
 * still runs); `portOr(0)` answers a port free now.
 */
function portOr(preferred) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(0));
    server.listen(preferred, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Where a demo device's runtime writes its pid: the service command of a deploy (kill -TERM) reads it. */
const pidFile = (id) => join(work, 'run', `${id}.pid`);

function startDevice(device, brokerUrl, credentials, meshKey) {
  const dataDir = join(work, 'devices', device.id);
  // Where a device keeps its logs (/data/logs on a device): the hub reads them over the fleet's SSH (GET /debug/shadow/<id>/logs).
  mkdirSync(join(dataDir, 'data', 'logs'), { recursive: true });
  const logPath = join(dataDir, 'data', 'logs', 'lookout-edge.log');
  // As a device's service does: the layer an operator applied (apply-layer writes the durable file)
  // and the detector package pushed to /data/models are what the runtime starts with; a device that
  // has neither runs the demo's layer and the simulated detector.
  const applied = existsSync(join(dataDir, 'data', 'config', 'edge_v3_layer.env'));
  const pushed = existsSync(join(dataDir, 'data', 'models', 'rf_detr_edge4.tar'));
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin', 'lookout-edge.js'),
      '--source',
      'sim',
      '--device-id',
      device.id,
      '--image',
      device.image,
      ...(applied ? [] : ['--layer', device.layer]),
      '--role',
      device.role,
      '--mqtt',
      brokerUrl,
      '--tool-port',
      '0',
      '--data-dir',
      dataDir,
    ],
    {
      cwd: root,
      // Each device authenticates to the hub's broker as itself (its password derives from the fleet secret).
      env: {
        ...process.env,
        SIM_SCENARIO: device.scenario,
        HEALTH_INTERVAL_MS: '10000',
        // Three software encoders share this machine: a small stream and short chunks, so a clip is there in seconds.
        ENCODE_RESOLUTION: process.env.ENCODE_RESOLUTION ?? '640x360',
        ENCODE_FPS: process.env.ENCODE_FPS ?? '10',
        CHUNK_SECONDS: process.env.CHUNK_SECONDS ?? '10',
        ONVIF_USER: 'admin',
        ONVIF_PASSWORD,
        LOOKOUT_MQTT_USERNAME: credentials.username,
        LOOKOUT_MQTT_PASSWORD: credentials.password,
        // One mesh key for the demo fleet, derived from the hub's fleet secret (lookout device-credentials prints it too).
        MESH_KEY: meshKey,
        ...device.env,
        ...(pushed ? { RF_DETR_EDGE4_MODEL: '/data/models/rf_detr_edge4.tar' } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stderr.pipe(createWriteStream(logPath, { flags: 'a' }));
  mkdirSync(join(work, 'run'), { recursive: true });
  writeFileSync(pidFile(device.id), `${child.pid}\n`);
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.event === 'ready') resolve({ ...device, layer: msg.layer ?? device.layer, child, logPath, toolUrl: msg.tool_url, ports: msg.ports ?? {} });
      } catch {
        /* not the ready line */
      }
    });
    child.once('exit', (code) => reject(new Error(`${device.id} exited with ${code} before it was ready; see ${logPath}`)));
  });
}

/**
 * A demo device kept running as a device's service manager keeps it (Restart=always): when its
 * runtime exits it starts again, reading what was applied and pushed meanwhile. `entry` is updated
 * in place with the running child and its addresses.
 */
async function superviseDevice(device, brokerUrl, credentials, meshKey, isStopping) {
  const entry = await startDevice(device, brokerUrl, credentials, meshKey);
  const watch = (child) =>
    child.once('exit', () => {
      if (isStopping()) return;
      entry.restarting = startDevice(device, brokerUrl, credentials, meshKey).then(
        (next) => {
          Object.assign(entry, next);
          watch(next.child);
        },
        (err) => console.error(String(err)),
      );
    });
  watch(entry.child);
  return entry;
}

/**
 * The simulated fleet's SSH: a loopback OpenSSH server (the tests' own, test/support/sshd.ts) that
 * lets in the key it made, as root, so that the builder's deploy reaches the demo devices' roots
 * with the operator's push-models and apply-layer, as it reaches real devices. Without sshd (apt
 * install openssh-server; scripts/setup-system.sh does) or root, the demo runs without deploys.
 */
async function startFleetSsh() {
  const { startSshd } = await import(join(root, 'dist', 'test', 'support', 'sshd.js'));
  try {
    const sshd = await startSshd();
    const knownHosts = join(work, 'ssh_known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    return { sshd, knownHosts };
  } catch (err) {
    return { why: String(err.message ?? err).split('\n')[0] };
  }
}

/**
 * A small YOLO dataset for the README's walk-through, in the builder's dataset root: ten clips of
 * three 320x240 pictures (ffmpeg's test pattern), each labelled with one person box. Written once.
 */
function ensureDemoDataset(dir) {
  if (existsSync(join(dir, 'classes.txt'))) return;
  const frames = join(dir, '.frames');
  mkdirSync(frames, { recursive: true });
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=5', '-frames:v', '30', join(frames, '%02d.jpg')]);
  if (r.status !== 0) throw new Error(`ffmpeg could not write the demo dataset: ${r.stderr}`);
  for (let i = 0; i < 30; i++) {
    const clip = `clip${Math.floor(i / 3)}`;
    const name = String(i % 3).padStart(3, '0');
    mkdirSync(join(dir, 'images', clip), { recursive: true });
    mkdirSync(join(dir, 'labels', clip), { recursive: true });
    renameSync(join(frames, `${String(i + 1).padStart(2, '0')}.jpg`), join(dir, 'images', clip, `${name}.jpg`));
    writeFileSync(join(dir, 'labels', clip, `${name}.txt`), '0 0.5 0.5 0.2 0.4\n');
  }
  rmSync(frames, { recursive: true, force: true });
  writeFileSync(join(dir, 'classes.txt'), 'person\n');
}

async function main() {
  ensureBuilt();
  const { startHub } = await import(join(root, 'dist', 'hub', 'src', 'start-hub.js'));
  const { createLogger } = await import(join(root, 'dist', 'core', 'src', 'log', 'logger.js'));
  const { LogRing } = await import(join(root, 'dist', 'core', 'src', 'log', 'log-ring.js'));
  const hubDir = join(work, 'hub');
  mkdirSync(hubDir, { recursive: true });
  const registryFile = join(hubDir, 'registry.json');
  const ssh = await startFleetSsh();
  // Each demo device is reached over the fleet's SSH at its own root (LOOKOUT_BUILDER_DEPLOY_ROOT below).
  const sshEntry = ssh.sshd ? { ips: ['127.0.0.1'], ssh_port: ssh.sshd.port, ssh_user: ssh.sshd.user } : {};
  // What the hub reads over SSH of a device (its newest chunk, a pull) is in that device's root here, not /data/recordings.
  const recordingsOf = (d) => (ssh.sshd ? { recordings_root: join(work, 'devices', d.id, 'data', 'recordings') } : {});
  writeFileSync(
    registryFile,
    `${JSON.stringify({ bus_id: 'lookout-demo', devices: FLEET.map((d) => ({ device_id: d.id, labels: d.labels, roles: [d.role], ...sshEntry, ...recordingsOf(d) })) }, null, 2)}\n`,
  );

  // The fleet CA and every demo device's certificate (the peer sidecars' mutual TLS), and the hub's
  // client certificate for signed peer queries: made once, kept while valid (lookout certs does the same).
  const { provisionFleetCertificates } = await import(join(root, 'dist', 'lib', 'tls', 'index.js'));
  await provisionFleetCertificates({
    caDir: join(work, 'ca'),
    devices: FLEET.map((d) => ({ deviceId: d.id, dataRoot: join(work, 'devices', d.id), ips: ['127.0.0.1'] })),
    hubDataDir: hubDir,
  });
  // The model builder beside the hub (docs/builder.md): the hub passes /api/* to it, and its deploy
  // stage asks the hub for a device's detector status and waits on the hub's broker for a restarted
  // device's hello, so the hub's and the broker's ports are chosen first.
  const hubPort = Number(process.env.LOOKOUT_HUB_PORT ?? (await portOr(8788))) || (await portOr(0));
  const brokerPort = Number(process.env.LOOKOUT_BROKER_PORT ?? (await portOr(1883))) || (await portOr(0));
  const { loadFleetSecret, fleetMeshKey, busPassword, OPERATOR_BUS_USER } = await import(join(root, 'dist', 'lib', 'auth', 'index.js'));
  // The hub's fleet secret (made now on a first start, as the hub would): the builder's deploy signs in to the broker as the operator.
  const fleetSecret = (await loadFleetSecret(hubDir, process.env.LOOKOUT_FLEET_SECRET || undefined)).secret;
  const datasetDir = join(work, 'builder', 'imports', 'demo');
  ensureDemoDataset(datasetDir);
  const { startBuilder } = await import(join(root, 'dist', 'builder', 'src', 'start-builder.js'));
  const builder = await startBuilder({
    port: Number(process.env.LOOKOUT_BUILDER_PORT ?? (await portOr(8790))),
    dataDir: join(work, 'builder'),
    env: {
      ...process.env,
      LOOKOUT_BUILDER_HUB_URL: `http://127.0.0.1:${hubPort}`,
      // A deploy to the demo fleet (docs/builder.md, stage 5): the operator's commands over the fleet's
      // SSH to each device's root, the restart a kill of its runtime (the supervisor below starts it
      // again, as systemd does on a device), the new hello awaited on the hub's broker.
      ...(ssh.sshd
        ? {
            LOOKOUT_REGISTRY_FILE: registryFile,
            LOOKOUT_SSH_KEY_FILE: ssh.sshd.clientKeyPath,
            LOOKOUT_SSH_KNOWN_HOSTS: ssh.knownHosts,
            LOOKOUT_BUILDER_DEPLOY_ROOT: join(work, 'devices', '{device}'),
            LOOKOUT_BUILDER_SERVICE_COMMAND: `kill -TERM "$(cat '${pidFile('{device}')}')"`,
            LOOKOUT_MQTT_URL: `mqtt://127.0.0.1:${brokerPort}`,
            LOOKOUT_MQTT_USERNAME: OPERATOR_BUS_USER,
            LOOKOUT_MQTT_PASSWORD: busPassword(fleetSecret, OPERATOR_BUS_USER),
          }
        : {}),
    },
    logger: createLogger({ name: 'lookout-builder', level: process.env.LOOKOUT_LOG_LEVEL ?? 'warn' }),
  });
  const hubLogRing = new LogRing();
  const terminalLevel = process.env.LOOKOUT_LOG_LEVEL ?? 'warn';
  const hub = await startHub({
    port: hubPort,
    builderUrl: builder.url,
    brokerPort,
    dataDir: hubDir,
    registryFile,
    // GET /debug/log/tail and the debug export read the hub's lines from its ring (info and up, as
    // lookout-hub keeps them, or more with LOOKOUT_LOG_LEVEL); the terminal shows LOOKOUT_LOG_LEVEL
    // and up (warnings by default), under the summary below.
    logRing: hubLogRing,
    logger: createLogger({ name: 'lookout-hub', level: moreVerbose(terminalLevel, 'info'), ring: hubLogRing, destination: terminalAtLeast(terminalLevel) }),
    // The demo devices record on this machine: the hub reads their chunks from disk (real devices: over SFTP).
    env: {
      LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(work, 'devices', '{device}', 'data', 'recordings'),
      // The demo's tokenizer: a small test vocabulary (an operator points this at a TrOCR processor's files).
      LOOKOUT_HUB_OCR_TOKENIZER_DIR: join(root, 'test', 'fixtures', 'trocr'),
      // The console's live view reads the cameras' RTSP preview with their credentials.
      LOOKOUT_LIVE_RTSP_PASSWORD: ONVIF_PASSWORD,
      // The devices' logs over the fleet's SSH, each in its own root on this machine.
      ...(ssh.sshd
        ? {
            LOOKOUT_SSH_KEY_FILE: ssh.sshd.clientKeyPath,
            LOOKOUT_SSH_KNOWN_HOSTS: ssh.knownHosts,
            LOOKOUT_DEVICE_LOGS_DIR: join(work, 'devices', '{device}', 'data', 'logs'),
          }
        : {}),
    },
  });
  const meshKey = fleetMeshKey(fleetSecret);
  await ensureDemoTextModels(join(work, 'devices', 'sim-cam-3', 'data', 'models'));
  const devices = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    // A runtime a deploy is restarting comes up first, then stops with the rest.
    await Promise.all(devices.map((d) => d.restarting));
    for (const d of devices) d.child.kill('SIGTERM');
    await Promise.all(devices.map((d) => new Promise((r) => (d.child.exitCode !== null || d.child.signalCode !== null ? r() : d.child.once('exit', r)))));
    await hub.close();
    await builder.close();
    await ssh.sshd?.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    devices.push(...(await Promise.all(FLEET.map((d) => superviseDevice(d, hub.brokerUrl, hub.deviceCredentials(d.id), meshKey, () => stopping)))));
  } catch (err) {
    console.error(String(err));
    await stop();
  }

  const u = hub.url;
  console.log(`
Lookout is running: a hub, its embedded broker and ${devices.length} simulated cameras.

  console        ${u}/   (the fleet console: open it in a browser)
  hub            ${u}
  fleet cache    ${u}/fleet/mqtt/latest
  registry       ${u}/fleet/registry
  fleet health   ${u}/fleet/health
  text reads     ${u}/fleet/ocr?target=sim-cam-3
  readiness      ${u}/fleet/readiness   (summary ${u}/fleet/grade; node bin/lookout.js readiness --hub ${u})
  debug events   ${u}/debug/events?limit=20
  playback       ${u}/fleet/playback-ready?shadow=front_door&limit=5
  recorders      ${u}/fleet/recorder-inventory
  snapshot       ${u}/stream/snapshot?target=sim-cam-1&w=640
  play a clip    (printed below once sim-cam-1 has recorded a chunk; they are listed at ${u}/fleet/playback-ready)
  model builder  ${u}/api/ontology   (lookout-builder at ${builder.url}; docs/builder.md)
  demo dataset   ${datasetDir}   (YOLO; import it with POST ${u}/api/datasets)
  deploys        ${ssh.sshd ? `over the fleet's SSH at 127.0.0.1:${ssh.sshd.port} to each device's root ${join(work, 'devices', '<device>')}` : `none: no SSH for the demo fleet (${ssh.why})`}
  OpenAPI        ${u}/openapi.json
  metrics        ${u}/metrics
  broker         ${hub.brokerUrl}

Devices:
${devices.map((d) => `  ${d.id.padEnd(10)} ${d.image.padEnd(9)} ${d.layer.padEnd(15)} scene ${d.scenario.padEnd(17)} tools ${d.toolUrl}  log ${d.logPath}`).join('\n')}

Camera surface (ONVIF and RTSP user admin, password ${ONVIF_PASSWORD}; WS-Discovery answers on 127.0.0.1 only):
${devices.map((d) => `  ${d.id.padEnd(10)} rtsp://127.0.0.1:${d.ports.rtsp ?? '-'}/preview (H.265)  rtsp://127.0.0.1:${d.ports.rtsp ?? '-'}/preview_h264  ONVIF http://127.0.0.1:${d.ports.onvif ?? '-'}/onvif/device_service`).join('\n')}

Try:
  curl -s ${u}/fleet/mqtt/latest
  curl -s -X POST '${u}/tools/call?target=canary' -H 'content-type: application/json' -d '{"tool":"get_latest_dets","arguments":{}}'
  curl -s -X POST '${u}/tools/call?target=sim-cam-2' -H 'content-type: application/json' -d '{"tool":"get_system_health","arguments":{}}'
  curl -s -X POST '${u}/tools/call?target=sim-cam-1' -H 'content-type: application/json' -d '{"tool":"get_peer_mesh_status","arguments":{}}'
  curl -s -X POST ${u}/fleet/validate
  env $(node bin/lookout.js bus-credentials operator --reveal${hubDir === join(root, '.lookout-dev', 'hub') ? '' : ` --hub-data-dir ${hubDir}`}) node bin/lookout.js verify-contract --mqtt-host 127.0.0.1 --mqtt-port ${new URL(hub.brokerUrl).port} --device-id sim-cam-1 --duration-s 5

Ctrl-C stops everything.`);
  const clip = await firstClip(u);
  console.log(clip ? `\nA clip of sim-cam-1 is recorded: ${u}${clip}` : `\nNo chunk of sim-cam-1 yet: see ${u}/fleet/playback-ready`);
}

const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** The more verbose of two pino level names. */
function moreVerbose(a, b) {
  return (LOG_LEVELS[a] ?? LOG_LEVELS.warn) < LOG_LEVELS[b] ? a : b;
}

/** A destination for pino's lines that passes to stdout only those at `level` or above. */
function terminalAtLeast(level) {
  const min = LOG_LEVELS[level] ?? LOG_LEVELS.warn;
  return {
    write(line) {
      let at = Infinity; // a line that is not pino's JSON is shown
      try {
        at = JSON.parse(line).level ?? Infinity;
      } catch {
        /* shown as it is */
      }
      if (at >= min) process.stdout.write(line);
    },
  };
}

/**
 * The demo's TrOCR pair: no real weights ship with Lookout and nothing is downloaded, so the demo
 * writes a small generated encoder/decoder of the spec's exact signatures (the tests' generator) on
 * first start. Its reads are untrained tokens, but the whole cascade runs: crops, the decoder loop,
 * events/ocr and the hub's text decoding.
 */
async function ensureDemoTextModels(dir) {
  if (existsSync(join(dir, 'trocr_decoder.onnx')) && existsSync(join(dir, 'trocr_encoder.onnx'))) return;
  const { buildTrocrPair, writeTrocrPair } = await import(join(root, 'dist', 'test', 'support', 'trocr-onnx-model.js'));
  mkdirSync(dir, { recursive: true });
  await writeTrocrPair(dir, buildTrocrPair({ seed: 11, eosAtStep: 7 }));
}

/**
 * The playUrl of a whole chunk sim-cam-1 recorded (chunks are 10 s in the demo), or null after a
 * while. At least a second long: the newest chunk may be the stub of a run stopped by the last
 * Ctrl-C, closed at this boot.
 */
async function firstClip(base) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${base}/fleet/playback-ready?shadow=front_door&limit=5`);
      const body = await r.json();
      const whole = (body.recent_chunks ?? []).find((c) => c.playUrl && (c.duration_s ?? 0) >= 1);
      if (whole) return whole.playUrl;
    } catch {
      /* the hub is still starting its routes */
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return null;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
