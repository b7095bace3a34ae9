"""ULTRA folders sent as one file: a ``.zip`` or ``.tar(.gz)`` archive read safely into a
temporary folder (uploads cannot send folders).

Only the files an ULTRA reader uses are extracted (``settings.json`` and ``train/train.init_list``,
``train.feature``, ``train.clicks``, ``train.labels``, found at any depth under one common prefix);
links, absolute paths and ``..`` are never followed or written, and the uncompressed size is capped.

>>> import io, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("K=1/train/train.init_list", "0 0 1\\n")
>>> is_archive(buf.getvalue())
True
>>> with ultra_folder(buf.getvalue(), "K1.zip") as root:
...     sorted(p.name for p in (root / "train").iterdir())
['train.init_list']
"""
from __future__ import annotations

import contextlib
import gzip
import io
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from ultr_core.errors import DataFormatError

__all__ = ["is_archive", "ultra_folder", "ultra_root", "ultra_files_or_one", "MAX_UNPACKED_BYTES", "ULTRA_FILES"]

MAX_UNPACKED_BYTES = 1 << 30
ULTRA_FILES = ("train/train.init_list", "train/train.feature", "train/train.clicks", "train/train.labels",
               "settings.json")


def _tar_bytes(data: bytes) -> bytes | None:
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                head = g.read(512)
        except (OSError, EOFError):
            return None
        return head if head[257:262] == b"ustar" else None
    return data[:512] if data[257:262] == b"ustar" else None


def is_archive(data) -> bool:
    """Whether bytes hold a zip or (gzipped) tar archive."""
    data = bytes(data[:1 << 16])
    return data[:4] == b"PK\x03\x04" or _tar_bytes(data) is not None


def _members(data: bytes, name: str):
    """(posix path, declared size, opener) of the regular files in the archive."""
    if data[:4] == b"PK\x03\x04":
        try:
            z = zipfile.ZipFile(io.BytesIO(data))
            infos = z.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            raise DataFormatError(name, f"not a readable zip archive ({e})") from None
        return [(i.filename, i.file_size, (lambda i=i: _zip_open(z, i, name))) for i in infos if not i.is_dir()]
    try:
        t = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        members = t.getmembers()
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError) as e:
        raise DataFormatError(name, f"not a readable tar archive ({e})") from None
    return [(m.name, m.size, (lambda m=m: t.extractfile(m))) for m in members if m.isfile()]


def _zip_open(z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str):
    if info.flag_bits & 0x1:
        raise DataFormatError(name, f"member {info.filename[:60]!r} is encrypted: password-protected archives are "
                                    "not read")
    return z.open(info)


def _copy_bounded(opener, target: Path, budget: int, name: str, member: str, declared: int | None = None) -> int:
    """Copy one member into ``target`` in 1 MiB chunks, counting the bytes it really unpacks to (a
    zip header's declared size can lie); refuse past ``budget``.  Returns the bytes written."""
    written = 0
    try:
        with opener() as src, open(target, "wb") as dst:
            while chunk := src.read(1 << 20):
                written += len(chunk)
                if written > budget:
                    raise DataFormatError(name, f"the ULTRA files unpack to more than "
                                                f"{MAX_UNPACKED_BYTES / 2**20:,.0f} MB "
                                                f"(the limit; at member {member[:60]!r})")
                dst.write(chunk)
    except DataFormatError:
        raise
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, zlib.error, ValueError,
            NotImplementedError, RuntimeError) as e:      # bad CRC, truncation, encryption, unknown compression
        raise DataFormatError(name, f"cannot unpack member {member[:60]!r} "
                                    f"({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})") from None
    if declared is not None and written != declared:        # a truncated tar stream ends early without an error
        raise DataFormatError(name, f"member {member[:60]!r} is truncated ({written:,} of {declared:,} bytes)")
    return written


@contextlib.contextmanager
def ultra_folder(data: bytes, name: str):
    """A temporary ULTRA folder holding the archive's ULTRA files (removed on exit)."""
    found = {}
    for path, size, read in _members(bytes(data), name):
        p = PurePosixPath(path.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts:
            continue
        for want in ULTRA_FILES:
            n = len(PurePosixPath(want).parts)
            if p.parts[-n:] == PurePosixPath(want).parts:
                prefix = PurePosixPath(*p.parts[:-n]) if len(p.parts) > n else PurePosixPath(".")
                found.setdefault(prefix, {})[want] = (size, read, path)
    roots = [k for k, v in found.items() if "train/train.init_list" in v]
    if not roots:
        raise DataFormatError(name, "the archive holds no train/train.init_list: an ULTRA folder needs it "
                                    "(with train.feature to key documents by feature vector)")
    if len(roots) > 1:
        raise DataFormatError(name, f"the archive holds {len(roots)} ULTRA folders "
                                    f"({', '.join(sorted(str(r) for r in roots))[:120]}); upload one at a time")
    files = found[roots[0]]
    total = sum(size for size, _, _ in files.values())
    if total > MAX_UNPACKED_BYTES:
        raise DataFormatError(name, f"the ULTRA files unpack to {total / 2**20:,.0f} MB; the limit is "
                                    f"{MAX_UNPACKED_BYTES / 2**20:,.0f} MB")
    with tempfile.TemporaryDirectory(prefix="ultr_ultra_") as tmp:
        root = Path(tmp)
        (root / "train").mkdir()
        budget = MAX_UNPACKED_BYTES
        for want, (size, opener, member) in files.items():
            budget -= _copy_bounded(opener, root / want, budget, name, member, size)
        yield root


def ultra_files_or_one(files: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """(name, bytes) of one upload: a single file as it is, or the files of an ULTRA folder dropped
    together (``train.init_list``, ``train.feature``, optional ``train.clicks``, ``train.labels``,
    ``settings.json``) packed as an in-memory zip of that folder (read by :func:`ultra_folder`).

    >>> name, data = ultra_files_or_one([("train.init_list", b"0 0 1\\n"), ("train.feature", b"0 0:1\\n1 1:1\\n")])
    >>> name, is_archive(data)
    ('ULTRA folder (train.feature, train.init_list)', True)
    """
    if len(files) == 1:
        return files[0]
    allowed = {PurePosixPath(f).name: f for f in ULTRA_FILES}
    names = [PurePosixPath(str(n).replace("\\", "/")).name for n, _ in files]
    wrong = [n for n in names if n not in allowed]
    if wrong or len(set(names)) < len(names) or "train.init_list" not in names:
        shown = ", ".join(sorted(set(names)))[:120]
        raise DataFormatError("upload", f"{len(files)} files ({shown}): upload one log at a time, or the files of one "
                                        "ULTRA folder together (train.init_list, train.feature, optional train.clicks, "
                                        "train.labels, settings.json)")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, (_, data) in zip(names, files):
            z.writestr(allowed[n], data)
    return f"ULTRA folder ({', '.join(sorted(names))})", buf.getvalue()


@contextlib.contextmanager
def ultra_root(source, name: str):
    """The folder of an ULTRA source: a path to a folder as it is, bytes (an upload) as the
    temporary folder of :func:`ultra_folder`."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        with ultra_folder(bytes(source), name) as root:
            yield root
        return
    root = Path(str(source))
    if not root.is_dir():
        raise DataFormatError(name, "an ULTRA dataset is a folder (train/train.init_list, train.feature) or a "
                                    "zip / tar.gz of one")
    yield root
