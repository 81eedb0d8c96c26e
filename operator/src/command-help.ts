/**
 * `--help` of the commands that came before the SSH ones: usage, options, examples and exit codes,
 * as every `lookout` command has them.
 */
const GENERIC_EXIT = `Exit codes:
  0  done
  1  failed (the message says why)
  2  usage: an unknown option, a missing or bad argument`;

export const VERIFY_CONTRACT_HELP = `lookout verify-contract --mqtt-host <host> --device-id <id> [--mqtt-port 1883] [--duration-s 20] [--username <user>] [--json]

The contract verifier (spec 01's verify_fleet_contract.py): samples a device's telemetry and dets on
the bus for --duration-s, validates them against the wire contracts and checks their rate is within
3-15 Hz; passes when at least 80% of the sampled messages are valid. The spec's flag spellings
(--mqtt_host, --mqtt_port, --device_id, --duration_s) are accepted too. The broker password comes
from LOOKOUT_MQTT_PASSWORD only (never a flag).

Examples:
  lookout verify-contract --mqtt-host 10.0.0.2 --device-id cam-1 --duration-s 20
  LOOKOUT_MQTT_PASSWORD=… lookout verify-contract --mqtt_host 10.0.0.2 --device_id cam-1 --username operator --json

Exit codes:
  0  the contract holds
  1  it does not (the report says which fields and rates), or the broker cannot be reached
  2  usage`;

export const DEVICE_CREDENTIALS_HELP = `lookout device-credentials <device-id> [--hub-data-dir <dir>] [--json]

Prints the environment a device started by hand needs, derived from the hub's fleet secret
(LOOKOUT_FLEET_SECRET, else <hub-data-dir>/fleet-secret; never created here): its bus user and
password, its tool token and the fleet's mesh key, as env lines (or JSON).

Options:
  --hub-data-dir <dir>   the hub's data folder (default .lookout-dev/hub)
  --json                 one JSON object

Examples:
  env $(lookout device-credentials cam-1) lookout-edge --device-id cam-1 --mqtt mqtt://10.0.0.2:1883
  lookout device-credentials cam-2 --hub-data-dir /var/lib/lookout-hub --json

${GENERIC_EXIT}`;

export const BUS_CREDENTIALS_HELP = `lookout bus-credentials <hub|operator|device-id> [--reveal] [--url <mqtt-url>] [--json] [--hub-data-dir <dir>]

Prints a bus user derived from the hub's fleet secret (LOOKOUT_FLEET_SECRET, else
<hub-data-dir>/fleet-secret; never created here): the hub (lookout-hub), the operator and its tools
(lookout-operator), or a device (its id). The password is printed only with --reveal; without it
stderr says which client ids the user connects with.

Options:
  --reveal               print the password (LOOKOUT_MQTT_PASSWORD=…, or inside --url)
  --url <mqtt-url>       print this broker URL with the user (and with --reveal the password) in it
  --json                 one JSON object {username, client_ids, password?, url?}
  --hub-data-dir <dir>   the hub's data folder (default .lookout-dev/hub)

Examples:
  export LOOKOUT_HUB_MQTT=$(lookout bus-credentials hub --reveal --url mqtt://broker.lan:1884)
  env $(lookout bus-credentials operator --reveal) lookout tap all --mqtt mqtt://broker.lan:1884
  lookout bus-credentials cam-1

${GENERIC_EXIT}`;

export const BROKER_ACL_HELP = `lookout broker-acl [--out <acl_file>] [--password-file <file> --devices <id,id,…>] [--admin-password-file <file>]
                   [--conf <snippet> [--bind <ip>] [--port <n>] [--admin-port <n>]
                    [--certfile <f> --keyfile <f> [--cafile <f> [--require-certificate]]]] [--hub-data-dir <dir>]

Writes the bus ACL as a mosquitto acl_file (each device writes only its own topics; the hub and the
operator read all). --password-file writes the devices' password_file (the given devices), and
--admin-password-file the one of the hub and the operator, their passwords derived from the hub's
fleet secret. --conf writes the mosquitto.conf lines that use them: two listeners with their own
settings, the devices' (port 1883; 8883 with TLS), where a device's client id is its user name so
that no device can take another's session, and the hub's and operator tools' (1884; 8884 with TLS),
where each client keeps a client id of its own (two hubs, a hub's replicas, several lookout tap).
Plain MQTT listens on 127.0.0.1 unless --bind gives another address; with --certfile and --keyfile
the listeners are TLS and serve every interface (or --bind). With --cafile (the fleet CA) and
--require-certificate, each device authenticates by its fleet certificate instead of a password:
its CN, the device id, is its user name (require_certificate, use_identity_as_username); the ACL
and the client id rule stay. Without --out the ACL goes to stdout.

Examples:
  lookout broker-acl --out /etc/mosquitto/lookout/acl --password-file /etc/mosquitto/lookout/passwd --devices cam-1,cam-2 \\
    --admin-password-file /etc/mosquitto/lookout/passwd-admin --conf /etc/mosquitto/conf.d/lookout.conf \\
    --certfile /etc/mosquitto/certs/broker.crt --keyfile /etc/mosquitto/certs/broker.key

${GENERIC_EXIT}`;

export const PLUGINS_HELP = `lookout plugins [--json]

Lists the first-party plugins of the device images and the hub's plugin set: the layer each starts
at, the services it provides and requires, the topics it publishes, the tools and routes it serves
(a markdown table, or JSON).

Examples:
  lookout plugins
  lookout plugins --json | jq '.[] | select(.layer == "layer2")'

${GENERIC_EXIT}`;

export const READINESS_HELP = `lookout readiness [--hub <url>] [--json]

The fleet's readiness grades from a hub (GET /fleet/readiness) as a table, or the JSON as it came.
The hub's bearer token comes from LOOKOUT_HUB_TOKEN only.

Options:
  --hub <url>   the hub (default http://127.0.0.1:8788)
  --json        the hub's answer as it came

Examples:
  LOOKOUT_HUB_TOKEN=… lookout readiness --hub https://hub.local:8788
  lookout readiness --json

Exit codes:
  0  the fleet is ready
  1  not ready, or the hub cannot be reached
  2  usage
  3  degraded`;

export const LAYERS_HELP = `lookout layers

Lists the configuration layers (cumulative: each adds to the ones before) and their aliases, which
every command taking a layer accepts.

Examples:
  lookout layers
  lookout apply-layer layer3_depth cam-1 --dry-run

${GENERIC_EXIT}`;
