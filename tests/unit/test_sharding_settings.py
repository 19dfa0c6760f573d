"""ShardingSettings (issue 21 item 4): sharding plans from a few values, not the whole
Settings, and what parts must agree on is still computed from the same values."""

from __future__ import annotations

import dataclasses

import pytest

from evaluator.core.options import build_settings
from evaluator.core.shards import fingerprint, policy_to_dict
from evaluator.errors import InputError
from evaluator.sharding import RESULT_SETTINGS, ShardingSettings, sections_of, settings_sha256


def _settings(**given):
    return build_settings([("command line", given)])


def test_the_parts_hash_is_the_result_settings_and_floors():
    settings = _settings(k="3,7", gain="exponential", backend="in_memory", strict=True)
    expected = {"k": [3, 7], "gain": "exponential", "relevance_threshold":
                settings.relevance_threshold, "backend": "in_memory",
                "graph_source": settings.graph_source, "embed": settings.embed,
                "strict": True, "floors": policy_to_dict(settings.floors), "sections": []}
    assert set(expected) == {*RESULT_SETTINGS, "floors", "sections"}
    assert settings_sha256(ShardingSettings.of(settings), ()) == fingerprint(expected)


def test_a_setting_outside_the_result_settings_does_not_change_the_hash():
    one = ShardingSettings.of(_settings(quiet=True, alpha=0.01))
    other = ShardingSettings.of(_settings())
    assert settings_sha256(one, ()) == settings_sha256(other, ())
    assert settings_sha256(ShardingSettings.of(_settings(k="2")), ()) != \
        settings_sha256(other, ())


def test_it_is_frozen_and_a_section_without_sections_is_an_error():
    planning = ShardingSettings.of(_settings(section="api"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        planning.shard = "1/2"  # type: ignore[misc]
    with pytest.raises(InputError, match="declares no sections"):
        sections_of(planning)
