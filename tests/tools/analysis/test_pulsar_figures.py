"""Pulsar figure pieces that need no Spark: tally keys, the above-average test, unavailability causes."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from clusteremu.tools.analysis.pulsar import (
    LOAD_FIELDS,
    above_average,
    key_election,
    key_lookup,
    key_non_finite,
    unavailability_episodes,
)


def test_above_average_compares_with_the_mean_of_the_finite_scores():
    scores = {"b1": 80.0, "b2": 20.0, "b3": 50.0}
    assert above_average(scores, "b1") is True
    assert above_average(scores, "b3") is False  # equal to the mean is not above it
    assert above_average(list(scores.items()), "b2") is False  # Arrow's form of a map
    assert above_average({"b1": math.inf, "b2": 10.0}, "b1") is True
    assert above_average({"b1": 10.0, "b2": math.inf, "b3": 30.0}, "b1") is False  # mean of 10 and 30
    assert above_average({"b1": math.nan, "b2": 1.0}, "b1") is None
    assert above_average(scores, "b9") is None and above_average(None, "b1") is None


def test_tally_keys():
    hops = pd.DataFrame({"response": ["redirect", "connect"], "hop": [1.0, 2.0]})
    assert list(key_lookup(hops)) == ["redirect:1", "connect:2"]
    elections = pd.DataFrame({"agent": ["b1", "b2", "b2"], "previous": ["", "b1", "b2"]})
    assert list(key_election(elections)) == ["first", "change", "same"]
    reports = pd.DataFrame([{f: 1.0 for f in LOAD_FIELDS}, {**{f: 1.0 for f in LOAD_FIELDS}, "cpu": np.inf, "memory": np.nan}])
    assert key_non_finite(reports) == ["", "cpu=inf,memory=nan"]


def test_unavailability_is_attributed_to_the_preceding_disconnect_of_the_same_topic_and_client():
    rows = pd.DataFrame(
        [
            (1.0, "c1", 1, "topic_connected", "t1", None, 0.0),
            (10.0, "c1", 2, "topic_disconnected", "t1", "unload", None),
            (11.0, "c2", 1, "topic_disconnected", "t1", "timeout", None),
            (12.0, "c1", 3, "topic_connected", "t1", None, 2.0),
            (13.0, "c2", 2, "topic_connected", "t1", None, 2.0),
            (14.0, "c1", 4, "topic_connected", "t2", None, 5.0),
        ],
        columns=["t", "agent", "seq", "kind", "topic", "reason", "unavailable_s"],
    )
    ep = unavailability_episodes(rows)
    assert ep[["agent", "topic", "unavailable_s", "cause"]].values.tolist() == [
        ["c1", "t1", 2.0, "unload"], ["c2", "t1", 2.0, "timeout"], ["c1", "t2", 5.0, "unknown"]]
