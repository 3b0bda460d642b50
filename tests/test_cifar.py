"""course.datasets.cifar: the real loader on a tiny fake CIFAR-10 archive (never downloading), and the stand-in."""

import hashlib
import io
import pickle
import tarfile

import numpy as np
import pytest
import torch
import torchvision

import course
from course.datasets import cifar

PER_BATCH = 4  # images in each fake batch file: 5 train batches → 20 train images, 4 test images


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _fake_files(seed=0):
    """The files of cifar-10-batches-py in CIFAR's python format: pickled dicts of uint8 rows."""
    rng = np.random.default_rng(seed)
    files, arrays = {}, {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (PER_BATCH, 3 * 32 * 32), dtype=np.uint8)  # rows: R plane, G plane, B plane
        labels = [int(v) for v in rng.integers(0, 10, PER_BATCH)]
        files[name] = pickle.dumps({"batch_label": name, "data": data, "labels": labels})
        arrays[name] = (data, labels)
    files["batches.meta"] = pickle.dumps({"label_names": list(cifar.CIFAR10_CLASSES), "num_vis": 3072})
    return files, arrays


def _tar_gz(files: dict) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{cifar.FOLDER_NAME}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def fake_cifar(tmp_path, monkeypatch):
    """A fake archive in tmp_path/cifar10, with the checksums torchvision and our loader expect patched in."""
    files, arrays = _fake_files()
    archive = _tar_gz(files)
    root = tmp_path / "cifar10"
    root.mkdir()
    (root / cifar.ARCHIVE_NAME).write_bytes(archive)
    monkeypatch.setattr(cifar, "CIFAR10_MD5", _md5(archive))
    tv = torchvision.datasets.CIFAR10
    monkeypatch.setattr(tv, "train_list", [[f"data_batch_{i}", _md5(files[f"data_batch_{i}"])] for i in range(1, 6)])
    monkeypatch.setattr(tv, "test_list", [["test_batch", _md5(files["test_batch"])]])
    monkeypatch.setattr(tv, "meta", {**tv.meta, "md5": _md5(files["batches.meta"])})

    def no_network(*args, **kwargs):
        raise AssertionError("the tests must never download")

    monkeypatch.setattr(course.download, "download", no_network)
    return root, archive, arrays


def _leftovers(root):
    return [p.name for p in root.iterdir() if p.name.startswith(".")]


def test_constants_are_torchvisions():
    tv = torchvision.datasets.CIFAR10
    assert (cifar.CIFAR10_URL, cifar.CIFAR10_MD5, cifar.ARCHIVE_NAME, cifar.FOLDER_NAME) == (
        tv.url, tv.tgz_md5, tv.filename, tv.base_folder)


def test_real_loader_reads_the_python_batches(fake_cifar):
    root, _, arrays = fake_cifar
    train = cifar.cifar10(root, train=True, download=False, stand_in=False, verbose=False)
    test = cifar.cifar10(root, train=False, download=False, stand_in=False, verbose=False)
    assert train.is_real and train.name == "CIFAR-10" and train.classes == cifar.CIFAR10_CLASSES
    assert train.images.shape == (5 * PER_BATCH, 3, 32, 32) and train.images.dtype == torch.uint8
    assert test.images.shape == (PER_BATCH, 3, 32, 32) and not test.train
    data, labels = arrays["data_batch_1"]
    # a CIFAR row is the red plane, then green, then blue: image 0's green pixel (5, 7) is byte 1024 + 5*32 + 7
    assert int(train.images[0, 1, 5, 7]) == int(data[0, 1024 + 5 * 32 + 7])
    assert train.labels[:PER_BATCH].tolist() == labels
    assert test.labels.tolist() == arrays["test_batch"][1]
    assert (root / cifar.FOLDER_NAME).is_dir() and _leftovers(root) == []
    assert "real data" in train.describe()


def test_truncated_archive_is_reported_and_nothing_is_extracted(fake_cifar):
    root, archive, _ = fake_cifar
    (root / cifar.ARCHIVE_NAME).write_bytes(archive[: len(archive) // 2])  # an interrupted copy
    with pytest.raises(cifar.CorruptDataError, match="partial or corrupted.*Delete it"):
        cifar.cifar10(root, download=False, stand_in=False, verbose=False)
    assert not (root / cifar.FOLDER_NAME).exists() and _leftovers(root) == []


def test_archive_that_fails_to_extract_leaves_nothing(fake_cifar, monkeypatch):
    root, archive, _ = fake_cifar
    broken = archive[: len(archive) - 40]
    (root / cifar.ARCHIVE_NAME).write_bytes(broken)
    monkeypatch.setattr(cifar, "CIFAR10_MD5", _md5(broken))  # the checksum passes, the gzip stream is cut
    with pytest.raises(cifar.CorruptDataError, match="could not be extracted"):
        cifar.cifar10(root, download=False, stand_in=False, verbose=False)
    assert not (root / cifar.FOLDER_NAME).exists() and _leftovers(root) == []


def test_corrupted_extracted_file_says_which_folder_to_delete(fake_cifar):
    root, _, _ = fake_cifar
    cifar.cifar10(root, download=False, stand_in=False, verbose=False)
    batch = root / cifar.FOLDER_NAME / "data_batch_3"
    batch.write_bytes(batch.read_bytes()[:100])
    with pytest.raises(cifar.CorruptDataError, match=r"incomplete or corrupted.*rm -r"):
        cifar.cifar10(root, download=False, stand_in=False, verbose=False)


def test_download_goes_through_course_download_with_the_md5(tmp_path, monkeypatch, fake_cifar):
    source_root, archive, _ = fake_cifar
    root = tmp_path / "elsewhere"
    calls = []

    def fake_download(url, dest, *, md5=None, **kwargs):
        calls.append((url, md5))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(archive)
        return dest

    monkeypatch.setattr(course.download, "download", fake_download)
    data = cifar.cifar10(root, train=False, download=True, stand_in=False, verbose=False)
    assert calls == [(cifar.CIFAR10_URL, cifar.CIFAR10_MD5)] and data.is_real


def test_failed_download_falls_back_to_the_stand_in_or_raises(tmp_path, monkeypatch, capsys):
    def offline(url, dest, **kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(course.download, "download", offline)
    monkeypatch.setenv("COURSE_MODE", "cpu")
    data = cifar.cifar10(tmp_path, download=True)
    assert not data.is_real and "download failed" in data.note and "cifar10(download=True)" in data.note
    assert "Using digits stand-in" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="copy cifar-10-python.tar.gz"):
        cifar.cifar10(tmp_path, download=True, stand_in=False)
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_fast_mode_uses_the_stand_in_without_touching_the_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_MODE", "fast")
    data = cifar.cifar10(tmp_path / "never", verbose=False)
    assert not data.is_real and "fast mode" in data.describe() and not (tmp_path / "never").exists()


def test_fast_mode_still_reads_real_data_when_asked(fake_cifar, monkeypatch):
    root, _, _ = fake_cifar
    monkeypatch.setenv("COURSE_MODE", "fast")
    assert cifar.cifar10(root, train=False, stand_in=False, verbose=False).is_real
    assert not cifar.cifar10(root, train=False, verbose=False).is_real  # the default stays the stand-in


def test_stand_in_is_cifar_shaped_deterministic_and_split():
    train = cifar.cifar10(stand_in=True, verbose=False)
    test = cifar.cifar10(train=False, stand_in=True, verbose=False)
    assert train.images.shape[1:] == (3, 32, 32) and train.images.dtype == torch.uint8
    assert len(train) + len(test) == 1797 and len(test) == round(1797 * cifar.STAND_IN_TEST_FRACTION)
    assert set(train.labels.tolist()) == set(test.labels.tolist()) == set(range(10))
    assert len(train.classes) == 10 and train.name == "digits stand-in"
    assert torch.equal(train.images, cifar.cifar10(stand_in=True, verbose=False).images)
    # disjoint: no test image is also a training image
    flat_train = {bytes(img.flatten().tolist()) for img in train.images}
    assert not any(bytes(img.flatten().tolist()) in flat_train for img in test.images)
    image, label = train[0]
    assert image.dtype == torch.float32 and 0 <= image.min() and image.max() <= 1 and isinstance(label, int)
    train.images[0] = 0  # the caller's copy is its own: a second call is unaffected
    assert cifar.cifar10(stand_in=True, verbose=False).images[0].any()


def test_data_pickles_for_dataloader_workers_and_transforms_work():
    train = cifar.cifar10(stand_in=True, verbose=False).subset(64)
    mean, std = train.mean_std()
    x = train.images.double() / 255
    assert np.allclose(mean, x.mean((0, 2, 3)), atol=1e-4) and np.allclose(std, x.std((0, 2, 3)), atol=1e-3)
    augmented = train.with_transform(cifar.train_transform(mean, std, translate=4))
    clone = pickle.loads(pickle.dumps(augmented))  # what a spawn/forkserver worker receives
    image, label = clone[3]
    assert image.shape == (3, 32, 32) and image.dtype == torch.float32 and label == int(train.labels[3])
    plain, _ = train.with_transform(cifar.eval_transform(mean, std))[3]
    expected = (train.images[3].float() / 255 - torch.tensor(mean).view(3, 1, 1)) / torch.tensor(std).view(3, 1, 1)
    assert torch.allclose(plain, expected, atol=1e-5)
    loader = torch.utils.data.DataLoader(augmented, batch_size=16, num_workers=0)
    xb, yb = next(iter(loader))
    assert xb.shape == (16, 3, 32, 32) and yb.dtype == torch.int64
    xt, yt = train.tensors(mean=mean, std=std)
    assert torch.allclose(xt[3], expected, atol=1e-5) and torch.equal(yt, train.labels)
    assert len(train.subset(10)) == 10 and train.subset(None) is train
