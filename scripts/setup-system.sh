#!/usr/bin/env bash
# Installs the system packages Lookout's tests and `npm start` need on Debian (bookworm):
#   ffmpeg          real transcodes, RTSP playback and snapshot tails in tests
#   mosquitto       the external broker tests run beside the embedded one
#   mosquitto-clients, python3-paho-mqtt  MQTT 5 clients no one on the project wrote (mosquitto_sub -V
#                   mqttv5, paho with Debian's /usr/bin/python3) that the bus tests point at the default broker
#   redis-server    the shared state of hub replicas (tests start their own on 127.0.0.1, in a temp dir)
#   openssh-server  the sshd tests start for SSH/SFTP fallbacks (sshd in /usr/sbin)
#   openssh-client  ssh-keygen for the host and client keys those tests make
#   iproute2        `ip netns` and veth for tests that cross a network
#   can-utils       candump, the CAN plugin's SocketCAN reader (Node has no PF_CAN socket), and cansend,
#                   which the CAN test feeds a vcan interface with where the kernel has vcan
#   iw              nl80211 readings (SSID, BSSID, frequency) for the wifi plugin
#   openssl         device certificates generated on first start in development
#   g++ make python3  the toolchain node-gyp drives to build the native addon (native/) during npm install
#   chromium        the browser the console's tests drive with playwright-core (which downloads none)
#   libnss3-tools   certutil, which gives a test browser's NSS database the fleet CA (console over HTTPS)
#   nginx           the load balancer in front of hub replicas in tests: Debian's package is only
#                   unpacked (apt-get download, dpkg -x) into .lookout-dev/nginx, never installed, so
#                   no service is set up and nothing listens on :80; its shared libraries come by apt
#   promtool        checks the /metrics of the hub and the device (`promtool check metrics`): only the
#                   binary of Debian's prometheus package, unpacked into .lookout-dev/promtool (no server)
# Idempotent: when every binary is there it prints one line and changes nothing. Package installs
# never start daemons (tests start their own mosquitto and sshd): a temporary policy-rc.d refuses
# them and the one that was there before, if any, is put back. Needs no stdin (CI).
set -euo pipefail

# binary (a path, or a name looked up with command -v) → package that provides it
declare -A PROVIDER=(
  [ffmpeg]=ffmpeg
  [ffprobe]=ffmpeg
  [/usr/sbin/mosquitto]=mosquitto
  [mosquitto_sub]=mosquitto-clients
  [/usr/lib/python3/dist-packages/paho/mqtt]=python3-paho-mqtt
  [/usr/bin/redis-server]=redis-server
  [/usr/sbin/sshd]=openssh-server
  [ssh-keygen]=openssh-client
  [ip]=iproute2
  [candump]=can-utils
  [cansend]=can-utils
  [/usr/sbin/iw]=iw
  [openssl]=openssl
  [g++]=g++
  [make]=make
  [python3]=python3
  [chromium]=chromium
  [certutil]=libnss3-tools
  [onvif-util]=onvif-tools
)

have() {
  case "$1" in
    /*) [[ -x "$1" ]] ;;
    *) command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" || -x "/sbin/$1" ]] ;;
  esac
}

missing_packages() {
  local bin
  declare -A wanted=()
  for bin in "${!PROVIDER[@]}"; do
    have "$bin" || wanted[${PROVIDER[$bin]}]=1
  done
  if ((${#wanted[@]} > 0)); then printf '%s\n' "${!wanted[@]}" | sort; fi
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NGINX_DIR="$ROOT/.lookout-dev/nginx" # git ignores .lookout-dev; test/support/nginx.ts looks here
NGINX_BIN="$NGINX_DIR/usr/sbin/nginx"
NGINX_DEB=""
NGINX_TMP=""
# The downloaded package goes on any exit (the policy-rc.d restore below calls this too).
remove_download() { [[ -z "$NGINX_TMP" ]] || rm -rf "$NGINX_TMP"; }
trap remove_download EXIT

# -V loads the binary with its shared libraries: a missing library fails here, not in a test.
nginx_runs() { [[ -x "$NGINX_BIN" ]] && "$NGINX_BIN" -V >/dev/null 2>&1; }

APT_UPDATED=0
apt_update() {
  ((APT_UPDATED)) && return 0
  APT_UPDATED=1
  # A failing mirror among several should not stop an install the remaining lists can satisfy.
  if ! apt-get "${APT_OPTS[@]}" update </dev/null; then
    echo "setup-system: apt-get update reported errors; trying with the package lists there are" >&2
  fi
}

# The nginx package file (the binary; nginx-common holds /etc/nginx and the service unit, which the
# tests do not use) into a temp dir, as NGINX_DEB. Without package lists (a fresh system) root
# fetches them first.
download_nginx() {
  NGINX_TMP="$(mktemp -d)"
  # apt fetches as the _apt user, which must be able to write here (else it warns and fetches as root).
  if [[ "$(id -u)" == 0 ]] && id -u _apt >/dev/null 2>&1; then chown _apt "$NGINX_TMP"; fi
  if ! (cd "$NGINX_TMP" && apt-get "${APT_OPTS[@]}" download nginx </dev/null); then
    if [[ "$(id -u)" != 0 ]]; then
      echo "setup-system: apt-get download nginx failed; run as root (sudo bash scripts/setup-system.sh)" >&2
      exit 1
    fi
    apt_update
    (cd "$NGINX_TMP" && apt-get "${APT_OPTS[@]}" download nginx </dev/null)
  fi
  NGINX_DEB="$(find "$NGINX_TMP" -maxdepth 1 -name 'nginx_*.deb' -print -quit)"
  [[ -n "$NGINX_DEB" ]] || {
    echo "setup-system: apt-get download nginx left no nginx_*.deb" >&2
    exit 1
  }
}

# The libraries the nginx binary links (its Depends, less nginx-common and iproute2, which only its
# maintainer scripts use) that are not installed.
nginx_library_packages() {
  local dep
  dpkg-deb -f "$NGINX_DEB" Depends | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/[[:space:]]//g' | sort -u | while read -r dep; do
    case "$dep" in '' | nginx* | iproute2) continue ;; esac
    dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'install ok installed' || echo "$dep"
  done
}

# Unpacks beside the old copy and swaps it in, owned by whoever owns the checkout (run with sudo,
# .lookout-dev must stay writable for `npm start`'s hub data); then checks that it runs.
unpack_nginx() {
  local staging owner
  owner="$(stat -c %u:%g "$ROOT")"
  if [[ ! -d "$ROOT/.lookout-dev" ]]; then
    mkdir -p "$ROOT/.lookout-dev"
    [[ "$(id -u)" != 0 ]] || chown "$owner" "$ROOT/.lookout-dev"
  fi
  staging="$(mktemp -d "$ROOT/.lookout-dev/.nginx.XXXXXX")"
  dpkg -x "$NGINX_DEB" "$staging"
  chmod 0755 "$staging"
  [[ "$(id -u)" != 0 ]] || chown -R "$owner" "$staging"
  rm -rf "$NGINX_DIR"
  mv "$staging" "$NGINX_DIR"
  nginx_runs || {
    echo "setup-system: $NGINX_BIN does not run: $("$NGINX_BIN" -V 2>&1 | tail -1)" >&2
    exit 1
  }
  echo "setup-system: nginx unpacked into $NGINX_DIR"
}

# promtool is a static binary: taken from the prometheus package (apt-get download, dpkg -x) into
# .lookout-dev/promtool, so that no Prometheus server is installed or enabled.
PROMTOOL_BIN="$ROOT/.lookout-dev/promtool/promtool"
unpack_promtool() {
  "$PROMTOOL_BIN" --version >/dev/null 2>&1 && return 0
  local tmp deb
  tmp="$(mktemp -d)"
  if [[ "$(id -u)" == 0 ]] && id -u _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
  (cd "$tmp" && apt-get "${APT_OPTS[@]}" download prometheus </dev/null) ||
    { [[ "$(id -u)" == 0 ]] && apt_update && (cd "$tmp" && apt-get "${APT_OPTS[@]}" download prometheus </dev/null); } || {
    rm -rf "$tmp"
    echo "setup-system: apt-get download prometheus failed (for promtool); run as root after apt-get update" >&2
    exit 1
  }
  deb="$(find "$tmp" -maxdepth 1 -name 'prometheus_*.deb' -print -quit)"
  dpkg -x "$deb" "$tmp/x"
  mkdir -p "$(dirname "$PROMTOOL_BIN")"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$PROMTOOL_BIN"
  [[ "$(id -u)" != 0 ]] || chown -R "$(stat -c %u:%g "$ROOT")" "$ROOT/.lookout-dev/promtool"
  rm -rf "$tmp"
  "$PROMTOOL_BIN" --version >/dev/null
  echo "setup-system: promtool unpacked into $PROMTOOL_BIN"
}

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

unpack_promtool
mapfile -t packages < <(missing_packages)
need_nginx=0
nginx_runs || need_nginx=1
if ((${#packages[@]} == 0 && need_nginx == 0)); then
  echo "setup-system: ffmpeg, mosquitto (and its clients), paho-mqtt, redis-server, sshd, ssh-keygen, ip, candump, cansend, iw, openssl, g++, make, python3, chromium, certutil and nginx (.lookout-dev/nginx) are present; nothing to do"
  exit 0
fi
if ((need_nginx)); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-system: nginx is fetched from Debian's package (apt-get download), and there is no apt-get here" >&2
    exit 1
  fi
  download_nginx
  mapfile -t nginx_libs < <(nginx_library_packages)
  packages+=("${nginx_libs[@]}")
fi
if ((${#packages[@]} == 0)); then
  unpack_nginx
  exit 0
fi

if [[ "$(id -u)" != 0 ]]; then
  echo "setup-system: missing system packages: ${packages[*]}" >&2
  echo "setup-system: run as root (sudo bash scripts/setup-system.sh) or install them: apt-get install ${packages[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-system: missing system packages: ${packages[*]}; no apt-get here, install them with this system's package manager" >&2
  exit 1
fi

echo "setup-system: installing ${packages[*]}"

# Keep package scripts from starting daemons: invoke-rc.d (and deb-systemd-invoke) ask policy-rc.d,
# and 101 means "action forbidden". Whatever policy was there before comes back on any exit.
POLICY=/usr/sbin/policy-rc.d
SAVED=""
if [[ -e "$POLICY" || -L "$POLICY" ]]; then
  SAVED="$(mktemp /usr/sbin/.policy-rc.d.lookout-saved.XXXXXX)"
  cp -a "$POLICY" "$SAVED"
fi
restore_policy() {
  if [[ -n "$SAVED" ]]; then
    mv -f "$SAVED" "$POLICY"
  else
    rm -f "$POLICY"
  fi
  remove_download
}
trap restore_policy EXIT
printf '#!/bin/sh\n# written by lookout scripts/setup-system.sh for the duration of an install\nexit 101\n' >"$POLICY.lookout-tmp"
chmod 0755 "$POLICY.lookout-tmp"
mv -f "$POLICY.lookout-tmp" "$POLICY"

apt_update
apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${packages[@]}" </dev/null

mapfile -t still < <(missing_packages)
if ((${#still[@]} > 0)); then
  echo "setup-system: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "setup-system: installed ${packages[*]}"
if ((need_nginx)); then
  unpack_nginx
fi
