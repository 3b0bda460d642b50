"""The course's one download helper: atomic and checksummed (introduced in notebook 05).

A download goes to a temporary file beside its destination and is renamed into place only
after its size and checksum match, so an interrupted, truncated or corrupted download never
leaves a half file that a later run would trust. A checksum is required: pass ``md5=`` or
``sha256=``, or say ``verify=False`` out loud for a file that has none.

Errors say what happened: ``ChecksumError`` (the bytes are wrong), ``DownloadError`` (the
server answered with an HTTP error, or the transfer stopped half-way; a ``ConnectionError``)
and ``ConnectionError`` (the host cannot be reached).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import secrets
import socket
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["ChecksumError", "DownloadError", "download", "verify", "file_hash", "online", "atomic_write"]


class ChecksumError(RuntimeError):
    """A file's checksum does not match the expected one."""


class DownloadError(ConnectionError):
    """The server refused the file (an HTTP error) or the transfer stopped before the end."""


def file_hash(path: str | os.PathLike, algorithm: str = "md5", chunk: int = 1 << 20) -> str:
    """Hex digest of a file, read in chunks (md5 for torchvision's archives, sha256 for ours)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify(path: str | os.PathLike, *, md5: str | None = None, sha256: str | None = None) -> bool:
    """True when ``path`` exists and matches every checksum given (no checksum: it exists)."""
    return _matches(Path(path), md5, sha256)


def _matches(path: Path, md5: str | None, sha256: str | None) -> bool:
    if not path.is_file():
        return False
    if md5 and file_hash(path, "md5") != md5.lower():
        return False
    if sha256 and file_hash(path, "sha256") != sha256.lower():
        return False
    return True


def online(host: str = "pypi.org", port: int = 443, timeout: float = 2.0) -> bool:
    """True when ``host`` answers within ``timeout`` seconds (a quick offline check)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def download(url: str, dest: str | os.PathLike, *, md5: str | None = None, sha256: str | None = None,
             verify: bool = True, size: int | None = None, timeout: float = 60.0, progress: bool = True) -> Path:
    """Fetch ``url`` to ``dest`` atomically; skip when ``dest`` already matches its checksum.

    ``md5``/``sha256``: the expected checksum (one is required unless ``verify=False``).
    ``size``: the expected number of bytes, checked as well when given (and against the
    server's Content-Length always). ``timeout``: seconds a stalled connection may stay
    silent (per network operation, not for the whole transfer).

    Raises ``ChecksumError`` when the bytes do not match, ``DownloadError`` for an HTTP error
    or a transfer cut short, ``ConnectionError`` when the host cannot be reached; in every
    case nothing is left at ``dest`` or beside it.
    """
    dest = Path(dest)
    checksums = {"md5": md5, "sha256": sha256}
    if verify and not (md5 or sha256):
        raise ValueError(
            f"download({url!r}) needs md5= or sha256= to verify the file; pass verify=False only for a "
            "file that has no published checksum (it is then trusted as it arrives).")
    if dest.is_file() and _size_ok(dest, size) and (not verify or _matches(dest, md5, sha256)):
        return dest  # already here and right: no download
    dest.parent.mkdir(parents=True, exist_ok=True)
    host = urlparse(url).netloc or url
    tmp = _new_temp_file(dest)
    bar = None
    try:
        try:
            response = urllib.request.urlopen(url, timeout=timeout)
        except urllib.error.HTTPError as error:  # the server answered: say what it said
            raise DownloadError(
                f"{host} answered HTTP {error.code} ({error.reason}) for {url}: the file is not (or no longer) "
                f"at this address. Check the address, or copy the file to {dest} by hand.") from error
        except (urllib.error.URLError, OSError) as error:
            raise ConnectionError(
                f"could not download {url} ({getattr(error, 'reason', error)}). Check the network connection "
                f"to {host}, or copy the file to {dest} by hand.") from error
        received = 0
        with response, open(tmp, "wb") as out:
            announced = int(response.headers.get("Content-Length") or 0) or None
            bar = _progress(announced, dest.name) if progress else None
            try:
                while block := response.read(1 << 20):
                    out.write(block)
                    received += len(block)
                    if bar is not None:
                        bar.update(len(block))
            except (OSError, http.client.HTTPException) as error:  # timeout, reset, incomplete read
                raise DownloadError(
                    f"the download of {url} stopped after {received:,} bytes ({type(error).__name__}: {error}). "
                    "Nothing was kept; run again to retry.") from error
            out.flush()
            os.fsync(out.fileno())  # the bytes are on disk before the name points at them
        for expected, what in ((announced, "the server announced"), (size, "expected")):
            if expected is not None and received != expected:
                raise DownloadError(
                    f"the download of {url} is incomplete: {received:,} bytes received, {expected:,} {what}. "
                    "Nothing was kept; run again to retry.")
        for algorithm, expected in checksums.items():
            if expected and (actual := file_hash(tmp, algorithm)) != expected.lower():
                raise ChecksumError(
                    f"{url} downloaded with {algorithm} {actual}, expected {expected}: the file is "
                    "corrupted or changed upstream. Nothing was kept; run again to retry.")
        os.replace(tmp, dest)  # atomic on the same file system
        _fsync_folder(dest.parent)
        return dest
    finally:
        if bar is not None:
            bar.close()
        tmp.unlink(missing_ok=True)


def _size_ok(path: Path, size: int | None) -> bool:
    return size is None or path.stat().st_size == size


def _new_temp_file(dest: Path) -> Path:
    """Create an empty, unique temporary file beside ``dest``, with the usual permissions.

    ``os.open`` with mode 0o666 lets the kernel apply the process's umask, as for any new
    file, without changing the umask (which would race with other threads).
    """
    for _ in range(100):
        tmp = dest.parent / f".{dest.name}.{secrets.token_hex(6)}.part"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {dest}")


def _fsync_folder(folder: Path) -> None:
    """Make a rename durable (best effort: not every system can open a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _progress(total, name):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="B", unit_scale=True, desc=f"downloading {name}", leave=False)


@contextlib.contextmanager
def atomic_write(dest: str | os.PathLike):
    """Yield a temporary path beside ``dest``; it replaces ``dest`` only if the block succeeds.

    ``with atomic_write("g.pt") as tmp: torch.save(model.state_dict(), tmp)`` — readers see
    the old file or the whole new one, never half of it.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_temp_file(dest)
    try:
        yield tmp
        with open(tmp, "rb+") as written:  # what the block wrote reaches the disk before the rename
            os.fsync(written.fileno())
        os.replace(tmp, dest)
        _fsync_folder(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)
