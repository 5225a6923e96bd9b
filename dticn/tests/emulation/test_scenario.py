"""Emulation scenarios: default names, scenario files, refused inputs."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.schemes import get as get_config


def test_default_names_are_node_k() -> None:
    s = EdgeScenario(scheme="rice", nodes=3)
    assert s.node_prefixes() == ["/node1", "/node2", "/node3"]
    assert s.item_uri(2, 7) == "/node2/7"
    assert not get_config(s.scheme).pushes and get_config("push-draft").pushes


def test_push_schedule_is_seeded_and_respects_given_times() -> None:
    a = EdgeScenario(scheme="push", nodes=2, seed=4).push_schedule(1)
    assert a == EdgeScenario(scheme="push", nodes=2, seed=4).push_schedule(1)
    assert a != EdgeScenario(scheme="push", nodes=2, seed=5).push_schedule(1)
    assert all(later - earlier >= 50 for earlier, later in itertools.pairwise(a))
    given = EdgeScenario(scheme="push", nodes=1, push_at=((90.0, 30.0),))
    assert given.push_schedule(1) == [30.0, 90.0]


def test_scenario_file(tmp_path: Path) -> None:
    f = tmp_path / "edge.toml"
    f.write_text('scheme = "push"\nseed = 7\n[[node]]\nprefix = "/garden"\npush_at = [60, 70]\n'
                 '[[node]]\nprefix = "/cellar"\n')
    s = EdgeScenario.from_file(f)
    assert (s.scheme, s.seed, s.nodes) == ("push", 7, 2)
    assert s.node_prefixes() == ["/garden", "/cellar"]
    assert s.push_schedule(1) == [60.0, 70.0] and len(s.push_schedule(2)) == s.items
    assert EdgeScenario.from_file(f, scheme="rice").scheme == "rice"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"scheme": "nope"}, "known"),
    ({"nodes": 0}, "at least one"),
    ({"nodes": 2, "prefixes": ("/a",)}, "one prefix per node"),
    ({"nodes": 1, "prefixes": ("/a/b",)}, "one name component"),
    ({"nodes": 2, "prefixes": ("/a", "/a")}, "its own prefix"),
])
def test_refused_with_reason(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, KeyError), match=message):
        EdgeScenario(**kwargs)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="leave --scenario out"):
        EdgeScenario.from_file(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 'rice'\n")
    with pytest.raises(ValueError, match="unknown keys"):
        EdgeScenario.from_file(bad)
