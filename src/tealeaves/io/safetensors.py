"""safetensors files read with numpy alone (no torch, no safetensors package).

The format: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor's name
to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the bytes after the header; an
optional "__metadata__" of strings), then the tensors' bytes, little-endian, C order. Every
length, offset and shape is checked against the file before anything is read; a damaged file is
a one-line `InputFileError` naming it."""

from __future__ import annotations

import math
import os

import numpy as np

from ..errors import InputFileError, shown
from ..files.records import parse_json
from ..files.textfile import check_regular
from ..util.limits import check_memory

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
          "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}
MAX_HEADER = 100 * 2**20  # the format's own limit on the header
MAX_DIMS, MAX_DIM = 64, 2**63 - 1  # what a numpy array can have (also in bytes, its 0s left out)


def read_safetensors(path: str | os.PathLike, what: str) -> dict[str, np.ndarray]:
    """Every tensor in the safetensors file at `path` (`what` names the file's role in errors:
    "BERTopic's c-TF-IDF file")."""
    p = os.fspath(path)
    where = f"{p} ({what}, safetensors)"
    check_regular(p, what)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            raw = fh.read(8)
            if len(raw) < 8:
                raise InputFileError(f"{where}: shorter than the 8-byte header length (truncated or not "
                                     "safetensors)")
            n = int.from_bytes(raw, "little")
            if n < 2 or n > MAX_HEADER or 8 + n > size:
                raise InputFileError(f"{where}: header length {n:,} does not fit the file's {size:,} bytes "
                                     "(truncated or not safetensors)")
            try:
                text = fh.read(n).decode("utf-8")
            except UnicodeDecodeError:
                raise InputFileError(f"{where}: the header is not UTF-8 JSON (not safetensors)") from None
            header = parse_json(text.rstrip(" "), where)
            if not isinstance(header, dict):
                raise InputFileError(f"{where}: the header is not a JSON object")
            data_size = size - 8 - n
            spans = _check_header(header, data_size, where)
            check_memory(f"{where}: its {len(spans)} tensors", sum(e - b for _, _, b, e in spans.values()))
            out = {}
            for name, (dtype, shape, begin, end) in spans.items():
                fh.seek(8 + n + begin)
                buf = fh.read(end - begin)
                if len(buf) != end - begin:
                    raise InputFileError(f"{where}: tensor {shown(name)} ends past the end of the file "
                                         "(truncated)")
                out[name] = np.frombuffer(buf, dtype=dtype).reshape(shape)
            return out
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None


def _check_header(header: dict, data_size: int, where: str) -> dict[str, tuple]:
    """Each tensor's numpy dtype, shape and byte span, checked: known dtypes, whole non-negative
    dimensions, spans inside the data that match the shape and do not overlap."""
    spans = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise InputFileError(f"{where}: tensor {shown(name)} is not described by dtype, shape and "
                                 "data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPES:
            raise InputFileError(f"{where}: tensor {shown(name)} has dtype {shown(dtype)} "
                                 f"(readable: {', '.join(DTYPES)})")
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise InputFileError(f"{where}: tensor {shown(name)} has shape {shown(shape)}, not whole numbers")
        if len(shape) > MAX_DIMS or any(d > MAX_DIM for d in shape):
            raise InputFileError(f"{where}: tensor {shown(name)} has shape {shown(shape, 80)}: more than "
                                 f"{MAX_DIMS} dimensions or one past {MAX_DIM:,} (damaged)")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data_size):
            raise InputFileError(f"{where}: tensor {shown(name)} has data_offsets {shown(offsets)} outside "
                                 f"the file's {data_size:,} bytes of data (truncated or damaged)")
        dt = np.dtype(DTYPES[dtype])
        if math.prod(d for d in shape if d) * dt.itemsize > MAX_DIM:  # numpy's limit, empty or not
            raise InputFileError(f"{where}: tensor {shown(name)} has shape {shown(shape, 80)}: more elements "
                                 "than an array can hold, even with a dimension of 0 (damaged)")
        need, span = math.prod(shape) * dt.itemsize, offsets[1] - offsets[0]
        if need != span:
            raise InputFileError(f"{where}: tensor {shown(name)} of shape {shape} and dtype {dtype} needs "
                                 f"{need:,} bytes, its offsets span {span:,}")
        spans[name] = (dt, tuple(shape), offsets[0], offsets[1])
    ordered = sorted(spans.items(), key=lambda kv: kv[1][2])
    ordered = [kv for kv in ordered if kv[1][2] < kv[1][3]]  # an empty tensor overlaps nothing
    for (a, sa), (b, sb) in zip(ordered, ordered[1:], strict=False):
        if sb[2] < sa[3]:
            raise InputFileError(f"{where}: tensors {shown(a)} and {shown(b)} overlap (damaged)")
    return spans
