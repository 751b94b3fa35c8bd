"""Decoding and sampling: opening clips, the window schedule, encoding frames, the decoding child
process and the run's clip store. Pixel evidence lives in ``gaze.pixels``, which reads this
package; nothing here imports it."""
