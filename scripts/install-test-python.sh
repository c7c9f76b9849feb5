#!/usr/bin/env bash
# Python for the I/O tests: a virtual environment at build/test-venv over the system's Python
# (it sees Debian's python3-h5py and python3-numpy) with VTK from PyPI (without its optional
# dependencies, so that numpy stays the one h5py was built for), whose vtkXdmfReader
# reads our XDMF files the way ParaView does. Run by `make deps`; idempotent. Exit 0 when ready.
set -euo pipefail
cd "$(dirname "$0")/.."
VTK_VERSION=9.5.2
venv=build/test-venv
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import h5py, numpy; from vtkmodules.vtkIOXdmf2 import vtkXdmfReader" 2>/dev/null; then
  exit 0
fi
mkdir -p build
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/python" -c "import h5py, numpy" || { echo "beatnik: $py lacks h5py/numpy (apt-get install python3-h5py python3-numpy)" >&2; exit 1; }
echo "beatnik: installing vtk==$VTK_VERSION (PyPI) into $venv for the XDMF reader tests"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "vtk==$VTK_VERSION"
"$venv/bin/python" -c "import h5py, numpy; from vtkmodules.vtkIOXdmf2 import vtkXdmfReader"
