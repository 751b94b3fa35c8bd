"""Rendering a report: the terminal view (rich, fitted to the width), the self-contained HTML page
with its key frames and timeline drawing, and the report files a command writes."""
