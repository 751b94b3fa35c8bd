"""Rendering reports: terminal (rich) and JSON files."""
