"""CIFAR-10, and the digits stand-in used when CIFAR-10 cannot be had (notebook 05; reused in 07).

``cifar10(train=True)`` returns a ``CifarData``: uint8 images N×3×32×32, int64 labels, the
class names, and one line (``describe()``) saying which data it is and how to get the real one.

- **Real CIFAR-10**: the 170 MB archive is fetched with ``course.download`` (atomic, md5-checked)
  into ``course.env.cache_dir() / "cifar10"``, extracted atomically, and read by torchvision's
  ``CIFAR10`` class, which checks every batch file's md5 before unpickling it.
- **The stand-in**, in fast mode or when CIFAR-10 cannot be downloaded: scikit-learn's 1,797
  real handwritten digits, upscaled to 32×32 and coloured (``colour_digits``), split 80/20.
  Same shape, 10 classes, always offline — a real learning problem, not random noise.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import Callable, Optional

import torch

__all__ = ["cifar10", "CifarData", "CorruptDataError", "train_transform", "eval_transform",
           "CIFAR10_CLASSES", "CIFAR10_URL", "CIFAR10_MD5"]

# The same values as torchvision.datasets.CIFAR10.url / .tgz_md5 (tests/test_cifar.py checks).
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
ARCHIVE_NAME = "cifar-10-python.tar.gz"
FOLDER_NAME = "cifar-10-batches-py"  # what the archive extracts to
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")
STAND_IN_TEST_FRACTION = 0.2


class CorruptDataError(RuntimeError):
    """A CIFAR-10 archive or folder on disk is partial or corrupted."""


@dataclasses.dataclass(eq=False, repr=False)
class CifarData(torch.utils.data.Dataset):
    """Images, labels and where they came from; also a ``Dataset`` of (float image, label) pairs.

    ``images`` are uint8 N×3×32×32 (as stored on disk); ``data[i]`` gives the image as float32
    in [0, 1] — or ``transform(uint8 image)`` when a transform is set — and its label. The
    object pickles, so DataLoader workers work with every start method (fork, spawn).
    """

    name: str                # "CIFAR-10" or "digits stand-in"
    classes: tuple           # class names, index = label
    images: torch.Tensor     # uint8, N×3×32×32
    labels: torch.Tensor     # int64, N
    train: bool
    is_real: bool            # True for real CIFAR-10
    flips_keep_labels: bool = True  # a mirrored cat is a cat; a mirrored 2 is not a 2
    note: str = ""          # why this data, and how to get CIFAR-10 when it is the stand-in
    transform: Optional[Callable] = None

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index):
        image = self.images[index]
        image = self.transform(image) if self.transform is not None else image.float() / 255
        return image, int(self.labels[index])

    def describe(self) -> str:
        """One line: which data, how many images, and (for the stand-in) how to get CIFAR-10."""
        split = "train" if self.train else "test"
        text = f"{self.name}: {len(self):,} {split} images, {len(self.classes)} classes"
        return f"{text} — {self.note}" if self.note else text

    def __repr__(self) -> str:
        return f"CifarData({self.describe()})"

    def with_transform(self, transform: Optional[Callable]) -> "CifarData":
        """The same images with a per-image ``transform`` (applied by ``data[i]``, e.g. in a DataLoader)."""
        return dataclasses.replace(self, transform=transform)

    def subset(self, n: Optional[int]) -> "CifarData":
        """The first ``n`` images (all when ``n`` is None or larger than the set)."""
        if n is None or n >= len(self):
            return self
        return dataclasses.replace(self, images=self.images[:n], labels=self.labels[:n])

    def tensors(self, device=None, *, mean=None, std=None):
        """All images as one float32 tensor on ``device`` (normalised when mean/std are given), and the labels."""
        x = (self.images if device is None else self.images.to(device)).float().div_(255)
        if mean is not None:
            shape = (1, -1, 1, 1)
            x = (x - torch.tensor(mean, device=x.device).view(shape)) / torch.tensor(std, device=x.device).view(shape)
        return x, (self.labels if device is None else self.labels.to(device))

    def mean_std(self):
        """Per-channel mean and standard deviation of the images in [0, 1], as two tuples."""
        total = torch.zeros(3, dtype=torch.float64)
        squares = torch.zeros(3, dtype=torch.float64)
        for chunk in self.images.split(4096):  # chunks: full CIFAR-10 as float64 would take 1.2 GB
            x = chunk.double() / 255
            total += x.sum((0, 2, 3))
            squares += (x * x).sum((0, 2, 3))
        count = self.images.shape[0] * self.images.shape[2] * self.images.shape[3]
        mean = total / count
        std = (squares / count - mean**2).sqrt()
        return tuple(round(v, 4) for v in mean.tolist()), tuple(round(v, 4) for v in std.tolist())


def train_transform(mean, std, *, translate: int = 4, flip: bool = True):
    """Per-image augmentation for a DataLoader: random shift (reflect padding), flip, normalise."""
    from torchvision.transforms import v2

    steps = []
    if translate:
        steps.append(v2.RandomCrop(32, padding=translate, padding_mode="reflect"))
    if flip:
        steps.append(v2.RandomHorizontalFlip())
    return v2.Compose(steps + [v2.ToDtype(torch.float32, scale=True), v2.Normalize(list(mean), list(std))])


def eval_transform(mean, std):
    """Per-image transform for evaluation: to float in [0, 1], then normalise."""
    from torchvision.transforms import v2

    return v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize(list(mean), list(std))])


# ---------------------------------------------------------------- the entry point

def cifar10(root=None, train: bool = True, *, download: Optional[bool] = None,
            stand_in: Optional[bool] = None, verbose: bool = True) -> CifarData:
    """CIFAR-10's train or test split as a ``CifarData``; the digits stand-in when CIFAR-10 cannot be had.

    root:      folder for the archive and its files (default ``course.env.cache_dir() / "cifar10"``).
    download:  None — download when missing, unless in fast mode or offline; True — download
               when missing (in fast mode too); False — never use the network.
    stand_in:  None — the stand-in in fast mode (unless ``download=True``) or when CIFAR-10 is
               missing and cannot be downloaded; True — always; False — real CIFAR-10 or an error.

    A partial or corrupted archive or folder raises ``CorruptDataError`` saying what to delete.
    """
    from course import env

    root = Path(root) if root is not None else env.cache_dir() / "cifar10"
    how_to_get = (f"to use CIFAR-10, run in cpu/gpu mode with internet, or call "
                  f"course.datasets.cifar10(download=True) (170 MB into {root})")
    if stand_in is None and env.is_fast() and download is not True:
        return _stand_in(train, note=f"fast mode uses the stand-in; {how_to_get}", verbose=verbose)
    if stand_in:
        return _stand_in(train, note=f"asked for the stand-in; {how_to_get}", verbose=verbose)

    if not (root / FOLDER_NAME).is_dir():
        archive = root / ARCHIVE_NAME
        if not archive.exists():
            reason = _fetch(archive, download)
            if reason is not None:
                if stand_in is False:
                    raise FileNotFoundError(f"CIFAR-10 is not in {root} and {reason}. {how_to_get[0].upper()}"
                                            f"{how_to_get[1:]}, or copy {ARCHIVE_NAME} there by hand.")
                return _stand_in(train, note=f"CIFAR-10 is not in {root} and {reason}; {how_to_get}",
                                 verbose=verbose)
        _extract(archive, root)
    data = _read(root, train)
    if verbose:
        print(f"Using {data.describe()}")
    return data


@functools.lru_cache(maxsize=None)
def _host_answers(host: str) -> bool:
    from course import download

    return download.online(host)


def _fetch(archive: Path, download: Optional[bool]) -> Optional[str]:
    """Download the archive; return None on success, else why it is not there."""
    from urllib.parse import urlparse

    from course import download as dl

    if download is False:
        return "download=False"
    if download is None and not _host_answers(urlparse(CIFAR10_URL).netloc):
        return f"{urlparse(CIFAR10_URL).netloc} cannot be reached (offline?)"
    try:
        dl.download(CIFAR10_URL, archive, md5=CIFAR10_MD5)  # atomic: no half file is ever left
    except (ConnectionError, dl.ChecksumError, OSError) as error:
        return f"the download failed ({error})"
    return None


def _extract(archive: Path, root: Path) -> None:
    """Check the archive's md5, then extract it into a temporary folder renamed into place."""
    from course import download as dl

    if not dl.verify(archive, md5=CIFAR10_MD5):
        raise CorruptDataError(
            f"{archive} is partial or corrupted (its md5 is not {CIFAR10_MD5}). Delete it "
            f"(rm {archive}) and run again with internet to download it afresh.")
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=root))
    try:
        try:
            with tarfile.open(archive, "r:gz") as tar:
                members = [m for m in tar.getmembers() if m.name.startswith(FOLDER_NAME + "/")]
                # filter="data" refuses absolute paths, links out of the folder and device files
                kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tar.extractall(tmp, members=members, **kwargs)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
            raise CorruptDataError(
                f"{archive} could not be extracted ({error}): it is partial or corrupted. Delete it "
                f"(rm {archive}) and run again with internet to download it afresh.") from error
        if not (tmp / FOLDER_NAME).is_dir():
            raise CorruptDataError(f"{archive} holds no {FOLDER_NAME}/ folder: it is not the CIFAR-10 "
                                   f"python archive. Delete it (rm {archive}) and run again with internet.")
        os.replace(tmp / FOLDER_NAME, root / FOLDER_NAME)  # atomic: the folder is whole or absent
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read(root: Path, train: bool) -> CifarData:
    """Read the extracted batches with torchvision (it checks each file's md5 before unpickling)."""
    from torchvision.datasets import CIFAR10

    try:
        dataset = CIFAR10(str(root), train=train, download=False)
    except RuntimeError as error:
        folder = root / FOLDER_NAME
        raise CorruptDataError(
            f"the CIFAR-10 files in {folder} are incomplete or corrupted ({error}). Delete the folder "
            f"(rm -r {folder}) and run again: the archive is extracted again, or downloaded with internet."
        ) from error
    images = torch.from_numpy(dataset.data).permute(0, 3, 1, 2).contiguous()  # N×H×W×C → N×C×H×W
    labels = torch.tensor(dataset.targets, dtype=torch.int64)
    return CifarData("CIFAR-10", tuple(dataset.classes), images, labels, train, True,
                     note=f"real data from {root}")


@functools.lru_cache(maxsize=1)
def _stand_in_tensors():
    """All 1,797 digits, coloured, as uint8 (built once per process: it takes a second or two)."""
    from course.datasets.digits import colour_digits, digits_images

    grey, labels = digits_images(32, seed=0)  # shuffled with a fixed seed: a deterministic split
    images = (colour_digits(grey, seed=0) * 255).round().to(torch.uint8)
    return images, labels


def _stand_in(train: bool, *, note: str, verbose: bool) -> CifarData:
    images, labels = _stand_in_tensors()
    n_test = round(len(labels) * STAND_IN_TEST_FRACTION)
    part = slice(None, -n_test) if train else slice(-n_test, None)
    data = CifarData("digits stand-in", tuple(str(d) for d in range(10)), images[part].clone(),
                     labels[part].clone(), train, False, flips_keep_labels=False,
                     note=f"scikit-learn's real handwritten digits, coloured, 3×32×32; {note}")
    if verbose:
        print(f"Using {data.describe()}")
    return data
