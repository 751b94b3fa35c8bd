"""Frame stores whose memory does not grow with the clip: the first frames stay in memory, the
rest go to an anonymous temporary file (deleted when the store is dropped) and are read back one
at a time. Every analysis that needs pixels looks at a few neighbouring frames only, so a long
clip costs disk, not memory.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload

if TYPE_CHECKING:  # NumPy is imported where frames are stored: the parent process of a command
    # keeps only JPEGs (``BlobStore``) before its first request, and should not load NumPy
    import numpy as np

MEMORY_BUDGET_BYTES = 32 * 2**20
"""Frames kept in memory per store before the rest spill to disk: about 40 s of 720p analysis
thumbnails, or 350-1,000 sampled JPEGs (1.5-4 minutes at 4 fps). At 96 MB a 10-minute clip
held 72 MB more than a 1-minute one in each of the decoding child and the parent; the spill
file is read back through the page cache."""


class Frames(Protocol):
    """What the analysis reads: a numpy array of frames, a FrameStore or a FrameSubset."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __len__(self) -> int: ...

    def __getitem__(self, index: Any) -> Any: ...


class _SpillFile:
    """An unlinked temporary file: nothing to clean up, gone when closed or collected."""

    def __init__(self) -> None:
        fd, name = tempfile.mkstemp(prefix="gaze-frames-")
        os.unlink(name)
        self.fd = fd
        self.size = 0

    def write(self, data: bytes) -> int:
        offset = self.size
        os.pwrite(self.fd, data, offset)
        self.size += len(data)
        return offset

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self.fd, length, offset)

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class FrameStore:
    """Equally shaped uint8 frames, appended in order and read back by index (a sequence with
    ``shape``, like the array it replaces)."""

    def __init__(self, budget_bytes: int | None = None) -> None:
        self.budget_bytes = MEMORY_BUDGET_BYTES if budget_bytes is None else budget_bytes
        self._memory: list[np.ndarray] = []
        self._frame_shape: tuple[int, ...] | None = None
        self._spill: _SpillFile | None = None
        self._spilled = 0

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self), *(self._frame_shape or (0, 0, 3)))

    def append(self, frame: np.ndarray) -> None:
        import numpy as np

        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        if self._frame_shape is None:
            self._frame_shape = frame.shape
        if frame.shape != self._frame_shape:
            raise ValueError(f"frame of shape {frame.shape}, store holds {self._frame_shape}")
        if (len(self._memory) + 1) * frame.nbytes <= self.budget_bytes and not self._spilled:
            self._memory.append(frame)
            return
        if self._spill is None:
            self._spill = _SpillFile()
        self._spill.write(frame.tobytes())
        self._spilled += 1

    def __len__(self) -> int:
        return len(self._memory) + self._spilled

    def _one(self, index: int) -> np.ndarray:
        import numpy as np

        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        if index < len(self._memory):
            return self._memory[index]
        assert self._spill is not None and self._frame_shape is not None
        size = int(np.prod(self._frame_shape))
        data = self._spill.read((index - len(self._memory)) * size, size)
        return np.frombuffer(data, dtype=np.uint8).reshape(self._frame_shape)

    @overload
    def __getitem__(self, index: int) -> np.ndarray: ...
    @overload
    def __getitem__(self, index: Sequence[int] | np.ndarray) -> FrameSubset: ...
    def __getitem__(self, index: Any) -> Any:
        import numpy as np

        if isinstance(index, int | np.integer):
            return self._one(int(index))
        return FrameSubset(self, [int(i) for i in np.asarray(index).tolist()])

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self._one(i)


class FrameSubset:
    """Some frames of a store, by index, without copying them."""

    def __init__(self, store: FrameStore, indices: list[int]) -> None:
        self.store = store
        self.indices = indices

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.indices), *self.store.shape[1:])

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: Any) -> Any:
        import numpy as np

        if isinstance(index, int | np.integer):
            return self.store[self.indices[int(index)]]
        return FrameSubset(self.store, [self.indices[int(i)] for i in np.asarray(index).tolist()])

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in self.indices:
            yield self.store[i]


class BlobStore:
    """Byte strings by key (sampled frames' JPEGs), in memory up to a budget, then on disk."""

    def __init__(self, budget_bytes: int | None = None) -> None:
        self.budget_bytes = MEMORY_BUDGET_BYTES if budget_bytes is None else budget_bytes
        self._memory: dict[int, bytes] = {}
        self._held = 0
        self._spill: _SpillFile | None = None
        self._where: dict[int, tuple[int, int]] = {}

    def __setitem__(self, key: int, blob: bytes) -> None:
        if self._held + len(blob) <= self.budget_bytes:
            self._memory[key] = blob
            self._held += len(blob)
            return
        if self._spill is None:
            self._spill = _SpillFile()
        self._where[key] = (self._spill.write(blob), len(blob))

    def discard(self, key: int) -> None:
        """Forget ``key`` (its memory is freed; a blob on disk stays there until the store goes)."""
        blob = self._memory.pop(key, None)
        if blob is not None:
            self._held -= len(blob)
        self._where.pop(key, None)

    def __getitem__(self, key: int) -> bytes:
        if key in self._memory:
            return self._memory[key]
        offset, length = self._where[key]
        assert self._spill is not None
        return self._spill.read(offset, length)

    def __contains__(self, key: object) -> bool:
        return key in self._memory or key in self._where

    def __len__(self) -> int:
        return len(self._memory) + len(self._where)

    def keys(self) -> list[int]:
        return [*self._memory, *self._where]

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys())

    def values(self) -> Iterator[bytes]:
        return (self[k] for k in self.keys())
