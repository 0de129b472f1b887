#!/usr/bin/env python3
"""Write a TorchScript file of a torchvision model with random weights (no download), for
infprof-sample-script. Works with Debian's python3-torch / python3-torchvision (1.13 / 0.14) and
later versions.

    torchvision_script.py [--model resnet18] [--out model.pt]
"""
import argparse

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18", help="a torchvision.models builder name")
    ap.add_argument("--out", default="model.pt")
    args = ap.parse_args()
    torch.manual_seed(0)
    builder = getattr(torchvision.models, args.model)
    model = builder(weights=None).eval()
    torch.jit.script(model).save(args.out)
    print(f"wrote {args.out} ({args.model}, random weights)")


if __name__ == "__main__":
    main()
