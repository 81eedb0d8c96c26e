#!/usr/bin/env bash
# Makes the Python environment of the builder's reference RF-DETR recipe
# (builder/plugins/training/recipes/train_rfdetr.py): a venv with the rfdetr package and the ONNX
# export's dependencies. On demand only (a GPU machine that trains); npm install and npm test never run it.
# Usage: scripts/setup-rfdetr-env.sh [venv dir]   (default .lookout-dev/rfdetr-venv, LOOKOUT_BUILDER_RFDETR_VENV)
set -euo pipefail
venv="${1:-${LOOKOUT_BUILDER_RFDETR_VENV:-.lookout-dev/rfdetr-venv}}"
python3 -m venv "$venv"
"$venv/bin/pip" install --upgrade pip
"$venv/bin/pip" install 'rfdetr[onnxexport]'
"$venv/bin/python" -c 'import rfdetr; print("rfdetr", getattr(rfdetr, "__version__", "?"), "ready in '"$venv"'")'
