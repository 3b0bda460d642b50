"""course.download: atomic, checksummed downloads (tested on local files, offline)."""

import hashlib

import pytest

from course import download


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.bin"
    path.write_bytes(b"course data " * 1000)
    return path


def test_download_verifies_and_places_the_file(tmp_path, source):
    md5 = hashlib.md5(source.read_bytes()).hexdigest()
    dest = download.download(source.as_uri(), tmp_path / "out" / "data.bin", md5=md5, progress=False)
    assert dest.read_bytes() == source.read_bytes()
    assert download.verify(dest, md5=md5)
    assert list(dest.parent.iterdir()) == [dest], "no temporary file may stay behind"


def test_bad_checksum_leaves_nothing_behind(tmp_path, source):
    dest = tmp_path / "out" / "data.bin"
    with pytest.raises(download.ChecksumError, match="corrupted"):
        download.download(source.as_uri(), dest, sha256="0" * 64, progress=False)
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_unreachable_url_says_what_to_do(tmp_path):
    with pytest.raises(ConnectionError, match="copy the file"):
        download.download((tmp_path / "missing.bin").as_uri(), tmp_path / "x.bin", progress=False)
    assert not (tmp_path / "x.bin").exists()


def test_existing_good_file_is_not_fetched_again(tmp_path, source):
    dest = tmp_path / "data.bin"
    dest.write_bytes(source.read_bytes())
    sha = hashlib.sha256(dest.read_bytes()).hexdigest()
    assert download.download("file:///nonexistent/never-read", dest, sha256=sha) == dest


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    dest = tmp_path / "weights.pt"
    dest.write_text("old")
    with pytest.raises(RuntimeError):
        with download.atomic_write(dest) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert dest.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["weights.pt"]
    with download.atomic_write(dest) as tmp:
        tmp.write_text("new")
    assert dest.read_text() == "new"
    assert dest.stat().st_mode & 0o044, "the file must be readable by others like any new file, not 0600"
