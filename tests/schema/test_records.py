"""The graph's JSON records and the pydantic models they mirror are one list of fields: a field
added to one side only fails here (and ``record_of`` refuses the dump at run time)."""

from __future__ import annotations

import importlib

import pytest

from gaze.schema import records
from gaze.schema.events import Event, EvidenceRegion
from gaze.schema.records import MIRRORS, EventRecord, record_of


def _model(dotted: str) -> type:
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


@pytest.mark.parametrize("record_name", sorted(MIRRORS))
def test_a_record_has_exactly_its_models_fields(record_name):
    record = getattr(records, record_name)
    model = _model(MIRRORS[record_name])
    # a pydantic dump always holds every field, defaults included: all are required keys
    assert set(record.__required_keys__) == set(model.model_fields)
    assert not record.__optional_keys__


def test_record_of_refuses_a_model_that_is_not_the_record():
    region = EvidenceRegion(t_s=1.0, box=(0.1, 0.1, 0.2, 0.2), label="cup")
    with pytest.raises(TypeError, match="EvidenceRegion is not a EventRecord: missing"):
        record_of(region, EventRecord)


def test_record_of_gives_the_json_dump():
    event = Event(
        dimension="visual_quality",
        type="blur",
        start_s=1.0,
        end_s=3.0,
        severity=2.0,
        description="blurred",
        spans=[(1.0, 1.5), (2.0, 3.0)],
    )
    record = record_of(event, EventRecord)
    assert record == event.model_dump(mode="json")
    assert record["spans"] == [[1.0, 1.5], [2.0, 3.0]]
