"""A jump whose second half lands on a spot that already stood out (a busy picture): the half
that fails the absent test is paired by its colour turning into the object's, and never makes an
event alone. The region values are those of a real probe (DreamDojo GR-1, ``gaze probe``)."""

from __future__ import annotations

import numpy as np

from gaze.pixels.change_regions import Region
from gaze.pixels.local_change import _other_halves, _teleports

GREEN = np.array([68.0, 164.0, 58.0])


def region(before: float, after: float, colour_before, colour_after, steady=True) -> Region:
    return Region(
        mask=np.ones((2, 2), bool),
        box=(0.2, 0.2, 0.3, 0.3),
        centre=(10.0, 10.0),
        before=before,
        after=after,
        colour_before=np.asarray(colour_before, float),
        colour_after=np.asarray(colour_after, float),
        steady=steady,
    )


def test_the_other_half_of_a_jump_is_paired_by_its_colour():
    gone = region(105, 23, GREEN, [63, 64, 72])  # passes: it stood out, then showed background
    landed = region(53, 97, [56, 58, 69], GREEN + [0, 0, 1])  # the spot stood out before too
    vanished, appeared = [gone], []
    weak = _other_halves([gone, landed], vanished, appeared)
    assert appeared == [landed] and weak == {id(landed)}
    assert _teleports(vanished, appeared) == [(gone, landed)]


def test_a_spot_of_another_colour_or_that_barely_changes_is_no_half():
    gone = region(105, 23, GREEN, [63, 64, 72])
    red = region(53, 97, [56, 58, 69], [40, 40, 200])
    still_green = region(53, 97, GREEN + 30, GREEN)  # its colour moved less than an object's
    for other in (red, still_green):
        appeared: list[Region] = []
        assert _other_halves([gone, other], [gone], appeared) == set() and appeared == []


def test_no_half_is_taken_beside_an_unsteady_find():
    gone = region(105, 23, GREEN, [63, 64, 72], steady=False)
    landed = region(53, 97, [56, 58, 69], GREEN)
    appeared: list[Region] = []
    assert _other_halves([gone, landed], [gone], appeared) == set()
