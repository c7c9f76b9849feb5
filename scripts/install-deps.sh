#!/usr/bin/env bash
# Installs what beatnik needs from the distribution (Debian/Ubuntu). As root it installs the
# missing packages itself; otherwise it prints the exact command to run. Exit 0 when all is there.
set -euo pipefail
packages=(cmake g++ make pkg-config openmpi-bin libopenmpi-dev libfftw3-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev python3
          libhdf5-openmpi-dev python3-h5py python3-numpy python3-venv python3-pip
          python3-hypothesis python3-matplotlib chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "beatnik: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "beatnik: missing packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
