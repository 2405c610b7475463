"""A pickle read as data: nothing named in the file is imported or run.

Python's own pickle machine (the pure-Python `pickle._Unpickler`) reads the opcodes, but every
class or function the file names goes through `find_class`, which imports nothing. It gives back
only a few builders of plain data, each checking its arguments:

- numpy arrays and dtypes (numpy's `_reconstruct` and `dtype`, whose state BUILD then sets), kept
  as `Stored` records and made into arrays only when read (`as_array`, `as_dtype`: the byte count
  checked against the shape first); protocol 5's arrays (`_frombuffer`) and numpy scalars
  (`scalar(dtype, bytes)`), built at once, their bytes checked the same way;
- builtins (`set`, `frozenset`, `bytes` and `bytearray` of bytes) and `collections` (`OrderedDict`,
  `Counter` and `defaultdict` as plain dicts), `_codecs.encode` of latin-1 text (protocol 2's bytes);

and for every other name a `Stand`: calling it (REDUCE, NEWOBJ, INST) gives a `Stored` record of
the class's name, the arguments and the state BUILD gives it, and of items appended or set.
No method of the named class runs. Any other callable on the stack is refused.

joblib's format (scikit-learn's and BERTopic's `save`) is read too: each numpy array is a
`NumpyArrayWrapper` record followed by the array's raw bytes (after a padding byte and padding,
joblib 1.2+), or, for an array of objects, by a nested pickle read the same way. Every read is
bounded by the file's size, so a declared size never allocates more than the file holds."""

from __future__ import annotations

import _compat_pickle
import math
import os
import pickle
import re
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from ..errors import InputFileError, shorten
from ..util.limits import check_memory

ARRAY_WRAPPERS = ("joblib.numpy_pickle.NumpyArrayWrapper",
                  "sklearn.externals.joblib.numpy_pickle.NumpyArrayWrapper")
MAX_NESTING = 8  # pickles of object arrays inside pickles of object arrays
DTYPE_CODE = re.compile(r"b1|[iu][1248]|f(2|4|8|12|16)|c(8|16|24|32)|[USV][0-9]{1,9}|O[48]")  # no dates
COMPRESSED = {b"\x78": "zlib", b"\x1f\x8b": "gzip", b"BZ": "bz2", b"\xfd7zXZ": "xz", b"\x5d\x00": "lzma",
              b"\x04\x22\x4d\x18": "lz4"}


class Stored:
    """An object of a class the pickle names and this reader does not build: the class's name
    ("bertopic._bertopic.BERTopic"), the arguments it was made with, its `state` (BUILD: usually a
    dict of attributes), the `items` appended (list-like classes) and `entries` set (dict-like).
    `value` caches the array or dtype a numpy record stands for."""

    __slots__ = ("cls", "args", "state", "items", "entries", "value")

    def __init__(self, cls: str, args: tuple = ()) -> None:
        self.cls, self.args, self.state = cls, args, None
        self.items: list[Any] = []
        self.entries: dict[Any, Any] = {}
        self.value: Any = None

    def append(self, item: Any) -> None:
        self.items.append(item)

    def extend(self, items: list[Any]) -> None:
        self.items.extend(items)

    def add(self, item: Any) -> None:
        self.items.append(item)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.entries[key] = value

    def attrs(self) -> dict[str, Any]:
        """The attributes BUILD gave it (a state dict, or the dict of a (dict, slots) pair)."""
        state = self.state
        if isinstance(state, tuple) and len(state) == 2:
            merged = {**(state[0] or {})} if isinstance(state[0], dict) else {}
            merged.update(state[1] if isinstance(state[1], dict) else {})
            return merged
        return state if isinstance(state, dict) else {}

    def __repr__(self) -> str:
        return f"<stored {self.cls!r}>"  # the name as the file spells it, control characters escaped


class Stand:
    """What `find_class` gives for a name it does not build: calling it records a `Stored`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Stored:
        return Stored(self.name, args)

    def __repr__(self) -> str:
        return f"<class {self.name!r}>"


def _error(where: str, what: str) -> InputFileError:
    return InputFileError(f"{where}: not a readable pickle ({what})")


# -- numpy ------------------------------------------------------------------------------------------

def as_dtype(x: Any, where: str) -> np.dtype:
    """A numpy dtype from its pickled record (`numpy.dtype(code, align, copy)` and its state:
    version, byte order, subarray, names, fields, ...): plain dtypes only (no fields, no subarray)."""
    if isinstance(x, np.dtype):
        return x
    if not isinstance(x, Stored) or x.cls != "numpy.dtype":
        raise _error(where, f"a dtype is {shorten(repr(x))}")
    if x.value is None:
        code = x.args[0] if x.args else None
        state = x.state if isinstance(x.state, tuple) else ()
        if not isinstance(code, str) or not DTYPE_CODE.fullmatch(code) or len(state) < 6:
            raise _error(where, f"the dtype {shorten(repr(code))} is not a plain number, text or object "
                                "type")
        order, subarray, names, fields = state[1], state[2], state[3], state[4]
        if subarray is not None or names is not None or fields is not None:
            raise _error(where, f"a structured dtype ({code})")
        dt = np.dtype(code)
        if order in ("<", ">") and dt.byteorder != "|":
            dt = dt.newbyteorder(order)
        x.value = dt
    return x.value


def _readable_dtype(x: Any, where: str) -> np.dtype | tuple[int, str]:
    """`as_dtype`, or for a dtype it does not build (structured, dates) its item size and what it is."""
    try:
        return as_dtype(x, where)
    except InputFileError:
        code = x.args[0] if isinstance(x, Stored) and x.cls == "numpy.dtype" and x.args else None
        size = re.fullmatch(r"[A-Za-z]([0-9]{1,9})", code) if isinstance(code, str) else None
        if size is None:
            raise
        return int(size.group(1)), f"dtype {code} (structured or dates)"


def as_array(x: Any, where: str) -> np.ndarray:
    """The numpy array a pickled record stands for (numpy's own pickling, or joblib's), its byte
    count checked against its shape and dtype before anything is allocated."""
    if isinstance(x, np.ndarray):
        return x
    if not isinstance(x, Stored) or x.cls != "numpy.ndarray":
        raise _error(where, f"expected an array, got {shorten(repr(x))}")
    if x.value is None:
        state = x.state
        if state is None and x.args and isinstance(x.args[0], str):  # skipped by `_joblib_array`
            raise _error(where, f"{x.args[0]}, which this reader does not build")
        if not (isinstance(state, tuple) and len(state) == 5):
            raise _error(where, "an array without its state")
        _, shape, dtype, fortran, raw = state
        shape = _shape(shape, where)
        dt = as_dtype(dtype, where)
        count = math.prod(shape)
        order = "F" if fortran else "C"
        if dt.hasobject:
            if not isinstance(raw, list) or len(raw) != count:
                raise _error(where, f"an object array of shape {shape} without its {count:,} items")
            arr = np.empty(count, dtype=object)
            arr[:] = raw
            x.value = arr.reshape(shape, order=order)
        else:
            if not isinstance(raw, bytes | bytearray) or len(raw) != count * dt.itemsize:
                raise _error(where, f"an array of shape {shape} ({dt}) whose data is not its "
                                    f"{count * dt.itemsize:,} bytes")
            x.value = np.frombuffer(bytes(raw), dtype=dt).reshape(shape, order=order)
    return x.value


def _shape(shape: Any, where: str) -> tuple[int, ...]:
    if not isinstance(shape, tuple | list) or len(shape) > 64 or not all(
            type(n) is int and n >= 0 for n in shape):
        raise _error(where, f"an array's shape is {shorten(repr(shape))}")
    return tuple(shape)


def _reconstruct(subtype: Any, shape: Any, typecode: Any) -> Stored:
    return Stored("numpy.ndarray", (subtype,))


def _dtype(*args: Any) -> Stored:
    return Stored("numpy.dtype", args)


# -- the builders find_class gives ------------------------------------------------------------------

def _plain(*types: type) -> Callable[..., Any]:
    """A builder of `types[0]` from at most one argument of the types that follow (or none)."""
    def build(*args: Any) -> Any:
        if len(args) > 1 or (args and not isinstance(args[0], types[1:])):
            raise TypeError(f"{types[0].__name__} of {shorten(repr(args))}")
        return types[0](*args)
    return build


def _as_dict(*args: Any) -> dict:
    """OrderedDict(pairs), Counter(mapping), defaultdict(factory): a plain dict of the entries."""
    first = args[0] if args else None
    if isinstance(first, dict):
        return dict(first)
    if isinstance(first, list) and all(isinstance(p, tuple | list) and len(p) == 2 for p in first):
        return dict(first)
    return {}  # defaultdict's factory (a Stand) or nothing: the entries follow (SETITEMS)


def _encode(text: Any, encoding: Any = "latin1") -> bytes:
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise TypeError("_codecs.encode of something other than latin-1 text")
    return text.encode("latin-1")


def _reconstructor(cls: Any, base: Any, state: Any = None) -> Stored:
    if not isinstance(cls, Stand):
        raise TypeError(f"copyreg._reconstructor of {shorten(repr(cls))}")
    return cls()


def _newobj(cls: Any, *args: Any) -> Stored:
    if not isinstance(cls, Stand):
        raise TypeError(f"__newobj__ of {shorten(repr(cls))}")
    return cls(*args)


class _Reader(pickle._Unpickler):  # type: ignore[name-defined]  # the pure-Python machine
    """The restricted machine (see the module notes). `where` names the file in errors."""

    dispatch = pickle._Unpickler.dispatch.copy()  # type: ignore[attr-defined]

    def __init__(self, fh: BinaryIO, where: str, depth: int = 0) -> None:
        super().__init__(fh, fix_imports=False)
        self.fh, self.where, self.depth = fh, where, depth
        self.stands: dict[str, Stand] = {}
        self.builders: dict[str, Callable[..., Any]] = {
            "builtins.set": _plain(set, list, tuple, set, frozenset),
            "builtins.frozenset": _plain(frozenset, list, tuple, set, frozenset),
            "builtins.bytearray": _plain(bytearray, bytes), "builtins.bytes": _plain(bytes, bytes),
            "collections.OrderedDict": _as_dict, "collections.Counter": _as_dict,
            "collections.defaultdict": _as_dict, "_codecs.encode": _encode,
            "copyreg._reconstructor": _reconstructor, "copyreg.__newobj__": _newobj,
            "numpy.dtype": _dtype, "numpy._core.multiarray._reconstruct": _reconstruct,
            "numpy.core.multiarray._reconstruct": _reconstruct,
            "numpy._core.multiarray.scalar": self._scalar, "numpy.core.multiarray.scalar": self._scalar,
            "numpy._core.numeric._frombuffer": self._frombuffer,
            "numpy.core.numeric._frombuffer": self._frombuffer,
        }
        self.callables = set(map(id, self.builders.values()))

    def find_class(self, module: str, name: str) -> Any:
        """A builder for the few names of plain data, a `Stand` for any other: nothing imported."""
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2's names (protocol 0-2)
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        key = f"{module}.{name}"
        if key in self.builders:
            return self.builders[key]
        return self.stands.setdefault(key, Stand(key))

    def persistent_load(self, pid: Any) -> Any:
        raise _error(self.where, "it refers to objects outside the file (persistent ids)")

    def _scalar(self, dtype: Any, data: Any = None) -> Any:
        """numpy's `scalar(dtype, bytes)`: a numpy scalar (an object scalar is the object; one of a
        dtype this reader does not build, a record naming it)."""
        dt = _readable_dtype(dtype, self.where)
        if not isinstance(dt, np.dtype):
            return Stored("numpy.generic", (f"a scalar of {dt[1]}",))
        if dt.hasobject:
            return data
        if not isinstance(data, bytes) or len(data) != dt.itemsize:
            raise _error(self.where, f"a numpy {dt} scalar of {shorten(repr(data))}")
        return np.frombuffer(data, dtype=dt)[0]

    def _frombuffer(self, buf: Any, dtype: Any, shape: Any, order: Any = "C") -> np.ndarray:
        """numpy's protocol-5 array: `_frombuffer(bytes, dtype, shape, order)` (of a dtype this
        reader does not build: a record that names it when read, as `_joblib_array` leaves)."""
        shape, dt = _shape(shape, self.where), _readable_dtype(dtype, self.where)
        if not isinstance(dt, np.dtype):
            return Stored("numpy.ndarray", (f"an array of {dt[1]}",))  # type: ignore[return-value]
        if not isinstance(buf, bytes | bytearray) or dt.hasobject or order not in ("C", "F") \
                or len(buf) != math.prod(shape) * dt.itemsize:
            raise _error(self.where, f"an array of shape {shape} ({dt}) whose data is not its "
                                     f"{math.prod(shape) * dt.itemsize:,} bytes")
        return np.frombuffer(bytes(buf), dtype=dt).reshape(shape, order=order)

    def _call(self, func: Any, args: Any, kwargs: Any = None) -> Any:
        if not isinstance(args, tuple) or (kwargs is not None and not isinstance(kwargs, dict)):
            raise _error(self.where, "a call whose arguments are not a tuple")
        if isinstance(func, Stand) or id(func) in self.callables:
            return func(*args, **(kwargs or {}))
        raise _error(self.where, f"it calls {shorten(repr(func))}, which is not a class it names")

    def load_reduce(self) -> None:
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)

    def load_newobj(self) -> None:
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)

    def load_newobj_ex(self) -> None:
        kwargs, args = self.stack.pop(), self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args, kwargs)

    def load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, Stored):
            raise _error(self.where, f"it sets the state of a {type(inst).__name__}")
        inst.state = state
        if inst.cls in ARRAY_WRAPPERS:
            self.stack[-1] = inst.value = self._joblib_array(inst)

    def _joblib_array(self, wrapper: Stored) -> np.ndarray:
        """The array joblib wrote after its wrapper: a padding byte and padding (when the wrapper
        records an alignment), then the bytes, or a nested pickle for an array of objects."""
        a = wrapper.attrs()
        shape, order = _shape(a.get("shape"), self.where), a.get("order", "C")
        dt: np.dtype | tuple[int, str] = _readable_dtype(a.get("dtype"), self.where)
        if order not in ("C", "F"):
            raise _error(self.where, f"an array of order {shorten(repr(order))}")
        if isinstance(dt, np.dtype) and dt.hasobject:
            if self.depth >= MAX_NESTING:
                raise _error(self.where, f"arrays of objects nested more than {MAX_NESTING} deep")
            inner = _Reader(self.fh, self.where, self.depth + 1).load()
            arr = as_array(inner, self.where)
            if arr.shape != shape:
                raise _error(self.where, f"an array of objects of shape {arr.shape}, declared {shape}")
            return arr
        if a.get("numpy_array_alignment_bytes") is not None:
            padding = self.fh.read(1)
            if len(padding) != 1 or len(self.fh.read(padding[0])) != padding[0]:
                raise _error(self.where, "truncated inside an array")
        nbytes = math.prod(shape) * (dt.itemsize if isinstance(dt, np.dtype) else dt[0])
        left = self.fh.left()  # type: ignore[attr-defined]
        if nbytes > left:
            raise _error(self.where, f"an array of shape {shape} ({nbytes:,} bytes) where the file has "
                                     f"{left:,} bytes left (truncated or damaged)")
        if not isinstance(dt, np.dtype):  # a dtype this reader does not build: skipped, named if read
            while nbytes:
                nbytes -= len(self.fh.read(min(nbytes, 2**24)))
            skipped = Stored("numpy.ndarray", (f"an array of {dt[1]}",))
            return skipped  # type: ignore[return-value]
        check_memory(f"{self.where}: an array of shape {shape}", nbytes)
        arr = np.frombuffer(self.fh.read(nbytes), dtype=dt)
        return arr.reshape(shape[::-1]).T if order == "F" else arr.reshape(shape)

    def load_bytearray8(self) -> None:
        """BYTEARRAY8 (protocol 5): the bytes read first, bounded by the file (pickle's own reader
        allocates the declared length, up to 2^63 bytes, before reading)."""
        (n,) = struct.unpack("<Q", self.read(8))
        data = self.read(n)
        if len(data) != n:
            raise _error(self.where, f"a bytearray of {n:,} bytes where the file holds {len(data):,}")
        self.append(bytearray(data))

    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.BYTEARRAY8[0]] = load_bytearray8
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex
    dispatch[pickle.BUILD[0]] = load_build


class _Bounded:
    """The file, read no further than its size (a declared length never allocates more)."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh, self.size = fh, size

    def left(self) -> int:
        return self.size - self.fh.tell()

    def read(self, n: int = -1) -> bytes:
        return self.fh.read(self.left() if n is None or n < 0 else min(n, self.left()))

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)

    def readline(self, limit: int = -1) -> bytes:
        return self.fh.readline(limit)


def read_pickle(path: str | os.PathLike) -> Any:
    """The object a pickle or joblib file holds, read as data (see the module notes): builtins,
    numpy scalars, `Stored` records (numpy arrays among them: `as_array`)."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(6)
            fh.seek(0)
            packed = next((name for magic, name in COMPRESSED.items() if head.startswith(magic)), None)
            if packed and not head.startswith(b"\x80"):
                raise InputFileError(f"{p}: a {packed}-compressed joblib file; save it uncompressed "
                                     "(joblib.dump(..., compress=0)) to read it")
            return _Reader(_Bounded(fh, size), p).load()  # type: ignore[arg-type]
    except InputFileError:
        raise
    except FileNotFoundError:
        from ..errors import no_such_file

        raise no_such_file(p) from None
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read it ({exc.strerror or exc})") from None
    except RecursionError:
        raise _error(p, "nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - the pickle machine raises many kinds on damaged bytes
        raise _error(p, f"{type(exc).__name__}: {shorten(' '.join(str(exc).split()), 120)}") from None
