"""gaze: diagnose failures in generated robot-manipulation videos."""

import os as _os

from gaze.lazy import lazy_members

__version__ = "0.1.0"

# OpenCV's FFmpeg backend prints its own diagnostics to stderr ("moov atom not found", ...);
# gaze reports bad input in one line of its own. These must be set before cv2 is first imported.
_os.environ.setdefault("OPENCV_LOG_LEVEL", "SILENT")
_os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")


# ``from gaze import diagnose`` without importing LangGraph on every ``import gaze``
__getattr__ = lazy_members(__name__, {"diagnose": "api", "adiagnose": "api"})

__all__ = ["__version__", "adiagnose", "diagnose"]
