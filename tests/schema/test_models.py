import pytest
from pydantic import ValidationError

from gaze.schema.events import Event
from gaze.schema.export import SCHEMA_PATH, report_json_schema
from gaze.schema.inputs import ClipInput
from gaze.schema.manifest import ManifestClip, Prediction


def event(**over):
    base = dict(
        dimension="physical_plausibility",
        type="object_floating",
        start_s=1.0,
        end_s=2.0,
        severity=4,
    )
    return Event(**{**base, **over})


def test_event_fills_implicated_dimensions_with_the_primary():
    ev = event(dimensions=["object_scene_consistency"])
    assert ev.dimensions == ["physical_plausibility", "object_scene_consistency"]
    assert event().dimensions == ["physical_plausibility"]


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (dict(start_s=3.0, end_s=2.0), "after end_s"),
        (dict(severity=0), "greater than or equal to 1"),
        (dict(severity=5.5), "less than or equal to 5"),
        (dict(type="blur"), "belongs to 'visual_quality'"),
        (dict(type="melting"), "unknown failure type"),
        (dict(dimension="physics"), "unknown dimension"),
        (dict(confidence=1.2), "less than or equal to 1"),
        (dict(colour="red"), "Extra inputs are not permitted"),
        (dict(dimensions=["nonsense"]), "unknown dimensions"),
    ],
)
def test_event_validation(over, message):
    with pytest.raises(ValidationError, match=message):
        event(**over)


def test_fractional_reference_severity_is_allowed():
    assert event(severity=3.5).severity == 3.5


def test_report_json_schema_export_is_current():
    assert SCHEMA_PATH.read_text() == report_json_schema(), (
        "report.schema.json is stale: run python -m gaze.schema.export"
    )


def test_schema_carries_field_docstrings():
    assert "Failure events, sorted by start time." in report_json_schema()


@pytest.mark.parametrize("text", ["", "   ", "move\udcff it", "a\x00b"])
def test_bad_instructions_are_rejected(text):
    with pytest.raises(ValidationError):
        ClipInput(clip_id="c", video="v.mp4", instruction=text)


def test_manifest_row_collects_free_metadata_and_defaults_condition():
    row = ManifestClip.model_validate(
        {
            "clip_id": "a",
            "video": "a.mp4",
            "instruction": "pick",
            "embodiment": "widowx",
            "fps": 10,
            "duration_s": 5,
            "events": [
                {
                    "dimension": "visual_quality",
                    "type": "blur",
                    "start_s": 1,
                    "end_s": 2,
                    "severity": 2,
                }
            ],
        }
    )
    assert row.metadata == {"embodiment": "widowx"}
    assert row.condition_id == "a"
    assert row.events[0].confidence is None


def test_manifest_rejects_events_outside_the_clip():
    with pytest.raises(ValidationError, match="after the clip"):
        ManifestClip.model_validate(
            {
                "clip_id": "a",
                "video": "a.mp4",
                "instruction": "pick",
                "duration_s": 1.0,
                "events": [
                    {
                        "dimension": "visual_quality",
                        "type": "blur",
                        "start_s": 0.5,
                        "end_s": 2.0,
                        "severity": 2,
                    }
                ],
            }
        )


def test_prediction_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        Prediction.model_validate({"clip_id": "a", "events": [], "score": 3})


def test_the_graphs_event_record_has_every_field_of_the_event_model():
    """The graph passes events as typed JSON records: a field the record lacks (as ``regions``
    once did) is lost from every model run's report."""
    from typing import get_type_hints

    from gaze.schema.events import EvidenceRegion
    from gaze.schema.records import EventRecord, RegionRecord

    assert set(get_type_hints(EventRecord)) == set(Event.model_fields)
    assert set(get_type_hints(RegionRecord)) == set(EvidenceRegion.model_fields)
