"""The course's one download helper: atomic and checksummed (introduced in notebook 05).

A download goes to a temporary file beside its destination and is renamed into place only
after its checksum matches, so an interrupted or corrupted download never leaves a half file
that a later run would trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse


class ChecksumError(RuntimeError):
    """A file's checksum does not match the expected one."""


def file_hash(path: str | os.PathLike, algorithm: str = "md5", chunk: int = 1 << 20) -> str:
    """Hex digest of a file, read in chunks (md5 for torchvision's archives, sha256 for ours)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify(path: str | os.PathLike, *, md5: str | None = None, sha256: str | None = None) -> bool:
    """True when ``path`` exists and matches every checksum given."""
    path = Path(path)
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
             timeout: float = 60.0, progress: bool = True) -> Path:
    """Fetch ``url`` to ``dest`` atomically; skip when ``dest`` already matches its checksum.

    Raises ``ChecksumError`` (and removes the partial file) when the data does not match, and
    ``ConnectionError`` with what to do when the network is not reachable.
    """
    dest = Path(dest)
    if verify(dest, md5=md5, sha256=sha256) and (md5 or sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(url, timeout=timeout)
            except (urllib.error.URLError, OSError) as error:
                host = urlparse(url).netloc or url
                raise ConnectionError(
                    f"could not download {url} ({error}). Check the network connection to {host}, "
                    f"or copy the file to {dest} by hand."
                ) from error
            with response:
                total = int(response.headers.get("Content-Length") or 0) or None
                bar = _progress(total, dest.name) if progress else None
                while block := response.read(1 << 20):
                    out.write(block)
                    if bar is not None:
                        bar.update(len(block))
                if bar is not None:
                    bar.close()
        for algorithm, expected in (("md5", md5), ("sha256", sha256)):
            if expected and (actual := file_hash(tmp, algorithm)) != expected.lower():
                raise ChecksumError(
                    f"{url} downloaded with {algorithm} {actual}, expected {expected}: the file is "
                    "corrupted or changed upstream. Nothing was kept; run again to retry."
                )
        os.chmod(tmp, _default_mode())
        os.replace(tmp, dest)  # atomic on the same file system
        return dest
    finally:
        tmp.unlink(missing_ok=True)


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
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _default_mode())  # mkstemp makes 0600 files; give the usual permissions
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
