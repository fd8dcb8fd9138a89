"""Normalized resources: Storm's arithmetic (NormalizedResourcesTest's cases restated), couldFit with a worker
CPU minimum, and the rare-resource negation."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.resources import (
    ResourceOffer,
    ResourceRequest,
    normalize_resource_map,
    sum_offers,
)


def test_normalize_names():
    assert normalize_resource_map({"supervisor.cpu.capacity": 400, "supervisor.memory.capacity.mb": 4096,
                                   "gpu.count": 2}) == {"cpu.pcore.percent": 400.0, "memory.mb": 4096.0,
                                                        "gpu.count": 2.0}
    assert normalize_resource_map({"topology.component.resources.onheap.memory.mb": 128,
                                   "topology.component.resources.offheap.memory.mb": 1,
                                   "topology.component.cpu.pcore.percent": 10}) == {
        "onheap.memory.mb": 128.0, "offheap.memory.mb": 1.0, "cpu.pcore.percent": 10.0}
    assert normalize_resource_map(None) == {}


def test_add_merges_generic_resources():
    a = ResourceOffer(1, 10, {"gpu.count": 1})
    a.add(ResourceOffer(1, 5, {"gpu.count": 1, "disks": 23}))
    assert a == ResourceOffer(2, 15, {"gpu.count": 2, "disks": 23})
    a.add(ResourceRequest(3, on_heap=4, off_heap=6, generic={"gpu.count": 1}))
    assert (a.cpu, a.memory, a.generic["gpu.count"]) == (5, 25, 3)


def test_remove_clamps_at_zero_and_reports_it():
    a = ResourceOffer(1, 100, {"gpu.count": 1})
    assert a.remove(ResourceOffer(0.5, 40, {"gpu.count": 0})) is False
    assert (a.cpu, a.memory, a.generic["gpu.count"]) == (0.5, 60, 1)
    assert a.remove(ResourceOffer(2, 10, {"gpu.count": 2})) is True
    assert (a.cpu, a.memory, a.generic["gpu.count"]) == (0.0, 50, 0.0)
    assert a.remove(ResourceRequest(0, on_heap=40, off_heap=20)) is True and a.memory == 0.0
    b = ResourceOffer(15, 0, {"gpu.count": 15})
    assert b.remove(ResourceOffer(1, 0, {"gpu.count": 1})) is False
    assert b.generic["gpu.count"] == 14 and b.cpu == 14


@pytest.mark.parametrize(("offer", "request_", "fits"), [
    (ResourceOffer(1, 100), ResourceRequest(2, 10), False),                          # too few cpus
    (ResourceOffer(2, 100, {"gpu.count": 1}), ResourceRequest(1, 10, generic={"gpu.count": 2}), False),
    (ResourceOffer(2, 100), ResourceRequest(1, 60, 50), False),                      # memory: on + off heap
    (ResourceOffer(2, 100), ResourceRequest(1, 10, generic={"gpu.count": 1}), False),  # missing resource
    (ResourceOffer(2, 100, {"gpu.count": 3}), ResourceRequest(1, 50, 50, {"gpu.count": 3}), True),
])
def test_could_fit(offer, request_, fits):
    assert offer.could_fit(0.0, request_) is fits


def test_could_fit_with_worker_cpu_minimum():
    # with a minimum >= 0.001 the executor may join a worker below the minimum: only cpu - minimum must be free
    offer = ResourceOffer(5, 100)
    assert offer.could_fit(0.0, ResourceRequest(10, 10)) is False
    assert offer.could_fit(5.0, ResourceRequest(10, 10)) is True
    assert offer.could_fit(4.0, ResourceRequest(10, 10)) is False
    assert offer.could_fit(0.0005, ResourceRequest(5.0004, 10)) is False  # below 0.001 the minimum is ignored
    assert offer.could_fit(20.0, ResourceRequest(10, 200)) is False  # memory still counts


@pytest.mark.parametrize(("total", "used", "avg", "low"), [
    (ResourceOffer(0, 0), ResourceOffer(0, 0), 100.0, 100.0),                        # nothing in the total
    (ResourceOffer(2, 0), ResourceOffer(1, 0), 50.0, 50.0),                          # cpu only
    (ResourceOffer(2, 4), ResourceOffer(1, 1), (50.0 + 25.0) / 2, 25.0),
    (ResourceOffer(2, 4, {"gpu.count": 10}), ResourceOffer(1, 1, {"gpu.count": 1}), (50.0 + 25.0 + 10.0) / 3, 10.0),
    (ResourceOffer(2, 4, {"gpu.count": 10}), ResourceOffer(1, 1), (50.0 + 25.0) / 3, 0.0),  # unused resource
    (ResourceOffer(2, 4, {"gpu.count": 0}), ResourceOffer(1, 1), (50.0 + 25.0) / 2, 25.0),  # zero total: skipped
])
def test_percentages(total, used, avg, low):
    assert total.average_percentage_used_by(used) == pytest.approx(avg)
    assert total.min_percentage_used_by(used) == pytest.approx(low)


@pytest.mark.parametrize(("total", "used"), [
    (ResourceOffer(0, 4), ResourceOffer(1, 1)),                              # total lacks cpu
    (ResourceOffer(2, 0), ResourceOffer(1, 1)),                              # total lacks memory
    (ResourceOffer(2, 4), ResourceOffer(1, 1, {"gpu.count": 1})),            # resource missing from the total
    (ResourceOffer(2, 4, {"gpu.count": 1}), ResourceOffer(1, 1, {"gpu.count": 2})),  # too little in the total
])
def test_used_must_be_a_subset_of_total(total, used):
    with pytest.raises(ValueError):
        total.average_percentage_used_by(used)
    with pytest.raises(ValueError):
        total.min_percentage_used_by(used)


def test_rare_resource_affinity_negates_what_is_not_requested():
    offer = ResourceOffer(100, 1000, {"gpu.count": 2, "fpga": 1})
    offer.update_for_rare_resource_affinity(ResourceRequest(10, 100, generic={"fpga": 1}))
    assert offer.generic == {"gpu.count": -2, "fpga": 1}
    assert (offer.cpu, offer.memory) == (100, 1000)
    offer.update_for_rare_resource_affinity(ResourceRequest(10, 100, generic={"gpu.count": 1}))
    assert offer.generic == {"gpu.count": 2, "fpga": -1}
    # a negated resource lowers the percentages
    total = ResourceOffer(200, 2000, {"gpu.count": 4})
    plain = ResourceOffer(100, 1000, {"gpu.count": 2})
    negated = plain.copy()
    negated.update_for_rare_resource_affinity(ResourceRequest(1, 1))
    assert total.average_percentage_used_by(negated) == pytest.approx((50 + 50 - 50) / 3)
    assert total.average_percentage_used_by(plain) == pytest.approx(50)
    assert total.min_percentage_used_by(negated) == pytest.approx(-50)


def test_request_sums_and_maps():
    r = ResourceRequest(10, 128, 2, {"gpu.count": 1})
    r.add(ResourceRequest(5, 100, 0, {"gpu.count": 1, "x": 3}))
    assert (r.cpu, r.on_heap, r.off_heap, r.memory) == (15, 228, 2, 230)
    assert r.to_normalized_map() == {"cpu.pcore.percent": 15, "onheap.memory.mb": 228, "offheap.memory.mb": 2,
                                     "gpu.count": 2, "x": 3}
    assert ResourceRequest.from_normalized_map(r.to_normalized_map()) == r
    assert r.are_any_over_zero() and not ResourceRequest().are_any_over_zero()


def test_offer_helpers():
    offer = ResourceOffer.from_normalized_map({"cpu.pcore.percent": 400, "memory.mb": 4096, "gpu.count": 1})
    assert offer.to_dict() == {"cpu": 400.0, "memory_mb": 4096.0, "generic": {"gpu.count": 1.0}}
    assert offer.to_normalized_map() == {"cpu.pcore.percent": 400.0, "memory.mb": 4096.0, "gpu.count": 1.0}
    assert sum_offers([offer, ResourceOffer(1, 1)]) == ResourceOffer(401, 4097, {"gpu.count": 1})
    assert offer.any_non_cpu_over_zero() and not ResourceOffer(5, 5).any_non_cpu_over_zero()
    assert ResourceOffer(0, 0, {"g": 0}) == ResourceOffer()
