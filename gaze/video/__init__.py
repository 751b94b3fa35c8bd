"""Opening clips, sampling windows, encoding frames, and pixel-evidence signals."""

import gaze  # noqa: F401  (quiets OpenCV's own logging before cv2 is imported)
