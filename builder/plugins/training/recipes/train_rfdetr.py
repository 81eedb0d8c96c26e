#!/usr/bin/env python3
"""The reference training recipe: RF-DETR (the `rfdetr` package) on a COCO-format dataset folder,
exported to ONNX with a fixed 1x3xHxW input matching the compile target (544 by default; the Omni
recipes 672). Speaks the builder's recipe protocol (builder/plugins/training/src/recipes/recipe-protocol.ts):
parameters from --params, LOOKOUT_PROGRESS lines per epoch, a LOOKOUT_EXPORT line at the end.
Its Python environment is made by scripts/setup-rfdetr-env.sh, never by npm.
"""
import argparse
import json
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.params, encoding="utf-8") as f:
        p = json.load(f)
    try:
        import rfdetr  # noqa: F401
    except ImportError:
        print("the rfdetr package is missing: run scripts/setup-rfdetr-env.sh", file=sys.stderr)
        return 2
    from rfdetr import RFDETRNano

    size = int(p["input_size"])
    epochs = int(p["epochs"])
    model = RFDETRNano(resolution=size, num_classes=len(p["classes"]))

    def on_epoch_end(log):
        metrics = {k: float(v) for k, v in log.items() if isinstance(v, (int, float))}
        epoch = int(log.get("epoch", 0)) + 1
        print("LOOKOUT_PROGRESS " + json.dumps({"epoch": epoch, "epochs": epochs, "metrics": metrics}), flush=True)

    model.callbacks["on_fit_epoch_end"].append(on_epoch_end)
    opts = p.get("options", {})
    model.train(
        dataset_dir=p["dataset"],
        epochs=epochs,
        batch_size=int(p["batch_size"]),
        grad_accum_steps=int(opts.get("grad_accum_steps", 1)),
        lr=float(opts.get("lr", 1e-4)),
        output_dir=args.out,
    )
    # The export keeps the training resolution and batch 1: a fixed [1, 3, size, size] input.
    model.export(output_dir=args.out)
    onnx = os.path.join(args.out, "inference_model.onnx")
    if not os.path.exists(onnx):
        print(f"the export wrote no {onnx}", file=sys.stderr)
        return 3
    print("LOOKOUT_EXPORT " + json.dumps({"onnx": onnx}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
