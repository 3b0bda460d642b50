"""Train the tiny DCGAN generator that the course ships in data/ (notebook 07; loaded again in 07).

    .venv/bin/python tools/train_dcgan.py            # writes data/dcgan_digits_generator.pt and .json

Data: scikit-learn's real handwritten digits (``course.datasets.digits_images``), upscaled to
32×32 — offline, so anyone can rebuild the weights. The loop is the one notebook 07 teaches:
Adam(2e-4, betas=(0.5, 0.999)), BCE with logits, the non-saturating generator loss, 60 epochs
(1,680 steps). On one CPU thread (the default, so that every run writes the same bytes) it takes
about ten minutes. The weights are saved as a ``state_dict`` (written atomically); the .json
beside them records the config, the sha256 and this exact command; after a rebuild, copy the new
sha256 into ``PRETRAINED_SHA256`` in ``course/models/dcgan.py`` (the hash
``course.models.load_pretrained_generator`` pins in code; the tool says when they differ).
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--nz", type=int, default=100, help="length of the noise vector z")
    p.add_argument("--ngf", type=int, default=32, help="generator width (channels before the last layer)")
    p.add_argument("--ndf", type=int, default=32, help="discriminator width (channels after the first layer)")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu (reproducible, the default) or cuda")
    p.add_argument("--threads", type=int, default=1,
                   help="CPU threads; 1 (the default) gives the same bytes on every run, more may differ in the last bits")
    p.add_argument("--out", type=Path, default=ROOT / "data" / "dcgan_digits_generator.pt")
    return p.parse_args(argv)


def train(args, on_epoch=None):
    """Train G and D on the digits; return G (on the CPU, eval mode) and the loss history."""
    import torch

    threads_before = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return _train(args, on_epoch)
    finally:
        torch.set_num_threads(threads_before)


def _train(args, on_epoch):
    import torch
    from torch import nn
    from tqdm.auto import tqdm

    import course
    from course.models.dcgan import DCGANDiscriminator, DCGANGenerator, weights_init

    course.env.seed_everything(args.seed)
    device = torch.device(args.device)
    images, _ = course.datasets.digits_images(args.image_size, seed=args.seed)
    images = images * 2 - 1  # [0, 1] → [-1, 1], the range of the generator's Tanh
    G = DCGANGenerator(args.nz, args.image_size, 1, args.ngf).to(device)
    D = DCGANDiscriminator(args.image_size, 1, args.ndf).to(device)
    G.apply(weights_init)
    D.apply(weights_init)
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    shuffle = torch.Generator().manual_seed(args.seed)
    history = {"loss_d": [], "loss_g": []}
    for epoch in tqdm(range(args.epochs), desc="epochs"):
        order = torch.randperm(len(images), generator=shuffle)
        for start in range(0, len(images) - args.batch_size + 1, args.batch_size):  # full batches only
            real = images[order[start:start + args.batch_size]].to(device)
            n = real.shape[0]
            fake = G(torch.randn(n, args.nz, 1, 1, device=device))
            # D: push real up, fake down; detach so this step does not reach into G
            loss_d = bce(D(real), torch.ones(n, device=device)) + bce(D(fake.detach()), torch.zeros(n, device=device))
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()
            # G: make D call the fakes real (the non-saturating loss)
            loss_g = bce(D(fake), torch.ones(n, device=device))
            opt_g.zero_grad(set_to_none=True)
            loss_g.backward()
            opt_g.step()
            history["loss_d"].append(loss_d.item())
            history["loss_g"].append(loss_g.item())
        if on_epoch is not None:
            on_epoch(epoch, G)
    return G.cpu().eval(), history


def save(G, history, args, seconds):
    """Write the state_dict atomically (byte-for-byte reproducible) and the .json beside it."""
    import torch

    import course

    buffer = io.BytesIO()  # saving to a buffer names the archive "archive/", not after a temp file
    torch.save({k: v.contiguous() for k, v in G.state_dict().items()}, buffer)
    with course.download.atomic_write(args.out) as tmp:
        tmp.write_bytes(buffer.getvalue())
    flags = []
    defaults = vars(parse_args([]))
    for key, value in vars(args).items():
        if value != defaults[key]:
            flags.append(f"--{key.replace('_', '-')} {shlex.quote(str(value))}")
    meta = {
        "file": args.out.name,
        "sha256": course.download.file_hash(args.out, "sha256"),
        "bytes": args.out.stat().st_size,
        "config": G.config(),
        "data": f"scikit-learn digits (1,797 real 8×8 scans) upscaled to {args.image_size}×{args.image_size}, scaled to [-1, 1]",
        "training": {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "betas": [0.5, 0.999],
                     "seed": args.seed, "device": args.device, "threads": args.threads, "steps": len(history["loss_d"]),
                     "final_loss_d": round(sum(history["loss_d"][-20:]) / 20, 4),
                     "final_loss_g": round(sum(history["loss_g"][-20:]) / 20, 4),
                     "seconds": round(seconds, 1), "torch": torch.__version__},
        "command": " ".join([".venv/bin/python tools/train_dcgan.py", *flags]),
    }
    with course.download.atomic_write(args.out.with_suffix(".json")) as tmp:
        tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    G, history = train(args)
    meta = save(G, history, args, time.perf_counter() - start)
    print(json.dumps(meta, indent=2))
    from course.models.dcgan import PRETRAINED_SHA256

    if meta["sha256"] != PRETRAINED_SHA256 and args.out == parse_args([]).out:
        print(f"The weights changed: set PRETRAINED_SHA256 = \"{meta['sha256']}\" in course/models/dcgan.py.")


if __name__ == "__main__":
    main()
