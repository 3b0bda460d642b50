"""course.download: atomic, checksummed downloads (tested offline, on local files and a local HTTP server)."""

import hashlib
import http.server
import os
import threading
import time

import pytest

from course import download

PAYLOAD = b"course data " * 1000


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.bin"
    path.write_bytes(PAYLOAD)
    return path


class _Handler(http.server.BaseHTTPRequestHandler):
    """/ok: the payload; /short: announces more bytes than it sends; /slow: stalls; else 404."""

    def do_GET(self):
        if self.path == "/ok":
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD)
        elif self.path == "/short":
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD[:1000])  # then the connection closes: a cut transfer
            self.close_connection = True
        elif self.path == "/slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD[:10])
            self.wfile.flush()
            time.sleep(1.5)  # longer than the client's timeout
        else:
            self.send_error(404, "Not Found")

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _left_in(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_verifies_and_places_the_file(tmp_path, source):
    md5 = hashlib.md5(PAYLOAD).hexdigest()
    dest = download.download(source.as_uri(), tmp_path / "out" / "data.bin", md5=md5, progress=False)
    assert dest.read_bytes() == PAYLOAD
    assert download.verify(dest, md5=md5)
    assert _left_in(dest.parent) == ["data.bin"], "no temporary file may stay behind"
    assert dest.stat().st_mode & 0o777 == 0o666 & ~_umask(), "the usual permissions of a new file"


def test_over_http_with_size(tmp_path, server):
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    dest = download.download(f"{server}/ok", tmp_path / "a.bin", sha256=sha, size=len(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD


def test_a_checksum_is_required_unless_verify_false(tmp_path, source):
    with pytest.raises(ValueError, match="verify=False"):
        download.download(source.as_uri(), tmp_path / "x.bin", progress=False)
    assert not (tmp_path / "x.bin").exists()
    dest = download.download(source.as_uri(), tmp_path / "x.bin", verify=False, progress=False)
    assert dest.read_bytes() == PAYLOAD


def test_bad_checksum_leaves_nothing_behind(tmp_path, source):
    dest = tmp_path / "out" / "data.bin"
    with pytest.raises(download.ChecksumError, match="corrupted"):
        download.download(source.as_uri(), dest, sha256="0" * 64, progress=False)
    assert not dest.exists() and _left_in(dest.parent) == []


def test_wrong_size_is_refused(tmp_path, source):
    md5 = hashlib.md5(PAYLOAD).hexdigest()
    with pytest.raises(download.DownloadError, match="incomplete"):
        download.download(source.as_uri(), tmp_path / "d.bin", md5=md5, size=len(PAYLOAD) + 1, progress=False)
    assert _left_in(tmp_path) == ["source.bin"]


def test_http_error_is_reported_as_such(tmp_path, server):
    with pytest.raises(download.DownloadError, match="HTTP 404"):
        download.download(f"{server}/gone", tmp_path / "g.bin", md5="0" * 32, progress=False)
    assert _left_in(tmp_path) == []


def test_transfer_cut_short_keeps_nothing(tmp_path, server):
    with pytest.raises(download.DownloadError, match="stopped after|incomplete"):
        download.download(f"{server}/short", tmp_path / "s.bin", md5="0" * 32, progress=False)
    assert _left_in(tmp_path) == []


def test_stalled_transfer_times_out(tmp_path, server):
    with pytest.raises(download.DownloadError, match="stopped after .*timed out"):
        download.download(f"{server}/slow", tmp_path / "t.bin", md5="0" * 32, timeout=0.3, progress=False)
    assert _left_in(tmp_path) == []


def test_unreachable_url_says_what_to_do(tmp_path):
    with pytest.raises(ConnectionError, match="copy the file"):
        download.download((tmp_path / "missing.bin").as_uri(), tmp_path / "x.bin", md5="0" * 32, progress=False)
    assert not (tmp_path / "x.bin").exists()


def test_existing_good_file_is_not_fetched_again(tmp_path, source):
    dest = tmp_path / "data.bin"
    dest.write_bytes(PAYLOAD)
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    assert download.download("file:///nonexistent/never-read", dest, sha256=sha) == dest


def test_existing_bad_file_is_replaced(tmp_path, source):
    dest = tmp_path / "data.bin"
    dest.write_bytes(b"half a file")
    md5 = hashlib.md5(PAYLOAD).hexdigest()
    assert download.download(source.as_uri(), dest, md5=md5, progress=False).read_bytes() == PAYLOAD


def test_progress_bar_is_closed_on_error(tmp_path, source, monkeypatch):
    bars = []

    class Bar:
        closed = False

        def update(self, n):
            raise OSError("disk full")

        def close(self):
            self.closed = True

    monkeypatch.setattr(download, "_progress", lambda total, name: bars.append(Bar()) or bars[-1])
    with pytest.raises(download.DownloadError):
        download.download(source.as_uri(), tmp_path / "b.bin", md5="0" * 32)
    assert bars and bars[0].closed
    assert _left_in(tmp_path) == ["source.bin"]


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
    assert dest.stat().st_mode & 0o777 == 0o666 & ~_umask(), "readable like any new file, not 0600"


def _umask():
    with open("/proc/self/status") as status:  # read without changing it (Linux)
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0)
    os.umask(mask)
    return mask
