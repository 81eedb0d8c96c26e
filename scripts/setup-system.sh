#!/usr/bin/env bash
# Installs the system packages Lookout's tests and `npm start` need on Debian (bookworm):
#   ffmpeg          real transcodes, RTSP playback and snapshot tails in tests
#   mosquitto       the external broker tests run beside the embedded one
#   redis-server    the shared state of hub replicas (tests start their own on 127.0.0.1, in a temp dir)
#   openssh-server  the sshd tests start for SSH/SFTP fallbacks (sshd in /usr/sbin)
#   openssh-client  ssh-keygen for the host and client keys those tests make
#   iproute2        `ip netns` and veth for tests that cross a network
#   openssl         device certificates generated on first start in development
#   g++ make python3  the toolchain node-gyp drives to build the native addon (native/) during npm install
#   chromium        the browser the console's tests drive with playwright-core (which downloads none)
# Idempotent: when every binary is there it prints one line and changes nothing. Package installs
# never start daemons (tests start their own mosquitto and sshd): a temporary policy-rc.d refuses
# them and the one that was there before, if any, is put back. Needs no stdin (CI).
set -euo pipefail

# binary (a path, or a name looked up with command -v) → package that provides it
declare -A PROVIDER=(
  [ffmpeg]=ffmpeg
  [ffprobe]=ffmpeg
  [/usr/sbin/mosquitto]=mosquitto
  [/usr/bin/redis-server]=redis-server
  [/usr/sbin/sshd]=openssh-server
  [ssh-keygen]=openssh-client
  [ip]=iproute2
  [openssl]=openssl
  [g++]=g++
  [make]=make
  [python3]=python3
  [chromium]=chromium
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

mapfile -t packages < <(missing_packages)
if ((${#packages[@]} == 0)); then
  echo "setup-system: ffmpeg, mosquitto, redis-server, sshd, ssh-keygen, ip, openssl, g++, make, python3 and chromium are present; nothing to do"
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
}
trap restore_policy EXIT
printf '#!/bin/sh\n# written by lookout scripts/setup-system.sh for the duration of an install\nexit 101\n' >"$POLICY.lookout-tmp"
chmod 0755 "$POLICY.lookout-tmp"
mv -f "$POLICY.lookout-tmp" "$POLICY"

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

# A failing mirror among several should not stop an install the remaining lists can satisfy.
if ! apt-get "${APT_OPTS[@]}" update </dev/null; then
  echo "setup-system: apt-get update reported errors; trying the install with the package lists there are" >&2
fi
apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${packages[@]}" </dev/null

mapfile -t still < <(missing_packages)
if ((${#still[@]} > 0)); then
  echo "setup-system: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "setup-system: installed ${packages[*]}"
