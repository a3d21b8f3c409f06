"""check's .npy verdicts: numpy's own header takes a fast path, any other header the parser,
and both give the same answer for the same file."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from ncx.tree.check import npy_problem


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


GOOD16 = _npy(np.linspace(-1, 1, 8, dtype=np.float16))
CASES = {
    "float16": (GOOD16, None),
    "float32": (_npy(np.linspace(-1, 1, 8, dtype=np.float32)), None),
    "truncated": (GOOD16[:-2], "truncated or has trailing bytes"),
    "trailing": (GOOD16 + b"\0\0", "truncated or has trailing bytes"),
    "odd tail": (GOOD16 + b"\0", "truncated or has trailing bytes"),
    "nan": (_npy(np.array([np.nan] + [0.0] * 7, dtype=np.float16)), "NaN or infinite"),
    "float64": (_npy(np.zeros(8)), "has dtype <f8"),
    "shape": (_npy(np.zeros(9, dtype=np.float16)), "has shape (9,)"),
    "2-d": (_npy(np.zeros((2, 4), dtype=np.float16)), "has shape (2, 4)"),
    "fortran big-endian": (_npy(np.zeros(8, dtype=">f2")), "has dtype >f2"),
    "not npy": (b"hello", "is not a .npy array"),
    "damaged header": (GOOD16[:10] + b"{'descr': ", "damaged .npy header"),
    "v2 header": (
        b"\x93NUMPY\x02\x00"
        + (118).to_bytes(4, "little")
        + b"{'descr': '<f2', 'fortran_order': False, 'shape': (8,), }".ljust(117)
        + b"\n"
        + bytes(16),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_npy_problem(tmp_path: Path, name: str) -> None:
    data, want = CASES[name]
    path = tmp_path / "v.npy"
    path.write_bytes(data)
    got = npy_problem(path, 8)
    if want is None:
        assert got is None
    else:
        assert got is not None and want in got
    assert npy_problem(str(path), 8) == got


def test_npy_problem_unreadable(tmp_path: Path) -> None:
    got = npy_problem(tmp_path / "missing.npy", 8)
    assert got is not None and got.startswith("cannot be read")
