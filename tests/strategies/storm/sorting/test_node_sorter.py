"""Node sorting (racks → hosts → nodes) on the clusters of Storm's node-sorter tests, restated as data."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.cluster import Supervisor
from clusteremu.strategies.storm.resources import ResourceOffer
from clusteremu.strategies.storm.sorting import (
    NodeSorter,
    NodeSortType,
    ObjectResources,
    SortRecorder,
    sort_object_resources,
)
from clusteremu.strategies.storm.topology import Component

from ..clusters import (
    CURRENT_TIME,
    DOUBLE_MAX,
    cluster_conf,
    gen_supervisors,
    gen_supervisors_with_racks,
    gen_topology,
    make_state,
)

# (cpu, memory, generic) per rack of upstream's six-rack cluster, 10 supervisors of 4 ports each
SIX_RACKS = [
    (400, 8000, {}),                  # balanced, most
    (200, 4000, {}),                  # balanced, less
    (0, 8000, {}),                    # no cpu
    (10, 8000 * 2 + 4000, {}),        # memory, little cpu
    (400 + 200 + 10, 1000, {}),       # cpu, little memory
    (0.0, 0.0, {"gpu.count": 0.0}),   # nothing (a zero generic resource must not matter)
]


def six_rack_state(racks=SIX_RACKS, zones_per_host=1, numa=1.0, favored=None, unfavored=None):
    sups = {}
    for r, (cpu, mem, generic) in enumerate(racks):
        sups.update(gen_supervisors_with_racks(1, 10, 4, r, r * 10, cpu, mem, generic,
                                               zones_per_host=zones_per_host, numa_multiplier=numa))
    conf = cluster_conf(100, 500, 500, **{"topology.worker.max.heap.size.mb": DOUBLE_MAX})
    t1_conf = dict(conf)
    if favored is not None:
        t1_conf["topology.scheduler.favored.nodes"] = favored
    if unfavored is not None:
        t1_conf["topology.scheduler.unfavored.nodes"] = unfavored
    t1 = gen_topology("topo-1", t1_conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    t2 = gen_topology("topo-2", conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    return make_state(sups, [t1, t2], conf), t1, t2


@pytest.mark.parametrize(("sort_type", "expected"), [
    # upstream testMultipleRacks (DEFAULT_RAS: minimum first, the 1.x "subordinate resource" order)
    (NodeSortType.DEFAULT_RAS, ["rack-000", "rack-001", "rack-004", "rack-003", "rack-002", "rack-005"]),
    # the 2.x default ranks by the average first: the cpu-rich rack wins
    (NodeSortType.COMMON, ["rack-004", "rack-000", "rack-003", "rack-001", "rack-002", "rack-005"]),
    (NodeSortType.GENERIC_RAS, ["rack-004", "rack-000", "rack-003", "rack-001", "rack-002", "rack-005"]),
])
def test_six_racks_order_by_sort_type(sort_type, expected):
    state, t1, _ = six_rack_state()
    sorter = NodeSorter(state, t1, sort_type)
    sorter.prepare(None)
    assert [r.id for r in sorter.sorted_racks()] == expected


def test_six_racks_percentages():
    state, t1, _ = six_rack_state()
    racks = {r.id: r for r in NodeSorter(state, t1, NodeSortType.COMMON).sorted_racks()}
    # cluster: cpu 10*(400+200+0+10+610) = 12200, memory 10*(8000+4000+8000+20000+1000) = 410000
    assert racks["rack-000"].min_percent == pytest.approx(100 * 80000 / 410000)
    assert racks["rack-000"].avg_percent == pytest.approx(100 * (80000 / 410000 + 4000 / 12200) / 2)
    assert racks["rack-004"].min_percent == pytest.approx(100 * 10000 / 410000)
    assert racks["rack-005"].min_percent == 0.0 and racks["rack-005"].avg_percent == 0.0


def test_the_documentations_five_rack_table_and_its_rack_order():
    # The RAS documentation's worked example (shared/seeds/003): five racks of ten supervisors, each rack's
    # available CPU and memory as % of the cluster's (12,200 % CPU, 410,000 MB), its "effective resources" (the
    # subordinate resource: the smaller share), and the order it gives: [rack-0, rack-1, rack-4, rack-3, rack-2].
    state, t1, _ = six_rack_state(SIX_RACKS[:5])
    table = {  # rack: (CPU %, MEM %, effective resources) as the document prints them
        "rack-000": (32.78688524590164, 19.51219512195122, 0.1951219512195122),
        "rack-001": (16.39344262295082, 9.75609756097561, 0.0975609756097561),
        "rack-002": (0.0, 19.51219512195122, 0.0),
        "rack-003": (0.819672131147541, 48.78048780487805, 0.00819672131147541),
        "rack-004": (50.0, 2.4390243902439024, 0.024390243902439025),
    }
    old = NodeSorter(state, t1, NodeSortType.DEFAULT_RAS)
    old.prepare(None)
    racks = old.sorted_racks()
    assert [r.id for r in racks] == ["rack-000", "rack-001", "rack-004", "rack-003", "rack-002"]
    for r in racks:
        cpu_pct, mem_pct, effective = table[r.id]
        assert r.min_percent == pytest.approx(100 * effective)
        assert r.avg_percent == pytest.approx((cpu_pct + mem_pct) / 2)
    # Storm 2.x's default sort (COMMON: the average first) orders the same table differently
    new = NodeSorter(state, t1, NodeSortType.COMMON)
    new.prepare(None)
    assert [r.id for r in new.sorted_racks()] == ["rack-004", "rack-000", "rack-003", "rack-001", "rack-002"]


def test_favored_first_unfavored_last_and_racks_unchanged():
    favored = ["host-041-rack-004", "host-042-rack-004", "host-009-rack-009"]  # the last host does not exist
    unfavored = ["host-001-rack-000", "host-002-rack-000", "host-041-rack-004"]  # favoured wins over unfavoured
    state, t1, _ = six_rack_state(racks=SIX_RACKS[:5], favored=favored, unfavored=unfavored)
    sorter = NodeSorter(state, t1, NodeSortType.DEFAULT_RAS)
    sorter.prepare(None)
    assert [r.id for r in sorter.sorted_racks()] == ["rack-000", "rack-001", "rack-004", "rack-003", "rack-002"]
    order = list(sorter.sort_all_nodes())
    assert order[:2] == ["r004s041", "r004s042"]
    assert order[-2:] == ["r000s001", "r000s002"]
    assert len(order) == len(set(order)) == 50
    # between them: rack-000's other nodes come first
    assert all(n.startswith("r000") for n in order[2:10])


def test_greylisted_nodes_come_last():
    state, t1, _ = six_rack_state(racks=SIX_RACKS[:2])
    state.greylisted_supervisors = ["r000s003", "r000s000"]
    sorter = NodeSorter(state, t1)
    sorter.prepare(None)
    order = list(sorter.sort_all_nodes())
    assert order[-2:] == ["r000s003", "r000s000"]
    assert len(order) == 20


def test_racks_ordered_by_capacity():
    # upstream testMultipleRacksOrderedByCapacity: cpu 600..100, memory 7999..7994
    racks = [(600 - 100 * k, 8000 - (k + 1), {"gpu.count": 0.0} if k == 5 else {}) for k in range(6)]
    state, t1, _ = six_rack_state(racks=racks)
    sorter = NodeSorter(state, t1, NodeSortType.COMMON)
    assert [r.id for r in sorter.sorted_racks()] == [f"rack-00{k}" for k in range(6)]


def test_nodes_of_a_host_are_contiguous():
    # upstream testMultipleRacksWithHostProximity: 3 NUMA zones (supervisors) per host, zones differ widely
    racks = [(400, 8000, {}), (200, 4000, {}), (0, 8000, {}), (10, 20000, {}), (610, 1000, {})]
    sups = {}
    for r, (cpu, mem, g) in enumerate(racks):
        sups.update(gen_supervisors_with_racks(1, 12, 4, r, r * 12, cpu, mem, g, zones_per_host=3,
                                               numa_multiplier=0.4))
    conf = cluster_conf(100, 500, 500)
    t1 = gen_topology("topo-1", conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    state = make_state(sups, [t1], conf)
    sorter = NodeSorter(state, t1)
    sorter.prepare(None)
    hosts = [state.supervisors[n].host for n in sorter.sort_all_nodes()]
    assert len(hosts) == 60
    runs = [h for i, h in enumerate(hosts) if i == 0 or hosts[i - 1] != h]
    assert len(runs) == len(set(runs)) == 20
    # within a host, the zone with most resources (zone 0) first
    first = [n for n in sorter.sort_all_nodes()][:3]
    assert first[0].endswith("n0")


def test_rare_resource_negation_sends_plain_executors_away_from_gpus():
    # upstream testAntiAffinityWithMultipleTopologies (sorting part): rack-001 has one GPU per supervisor
    sups = gen_supervisors_with_racks(1, 40, 66, 0, 0, 4700, 226200)
    sups.update(gen_supervisors_with_racks(1, 40, 66, 1, 0, 4700, 226200, {"my.gpu": 1.0}))
    conf = cluster_conf(88, 775, 25, strategy="GenericResourceAwareStrategy")
    gpu_bolt = Component("gpu-bolt", 40, "bolt", ("spout-0",), resources={"my.gpu": 1.0})
    td = gen_topology("topology-gpu", conf, 1, 5, 100, 300, 0, 0, "user", 8192, extra=[gpu_bolt])
    state = make_state(sups, [td], conf)
    sorter = NodeSorter(state, td, NodeSortType.COMMON)
    checked = set()
    for ex in td.executors:
        comp = td.component_of(ex)
        if comp in checked:
            continue
        checked.add(comp)
        sorter.prepare(ex)
        racks = [r.id for r in sorter.sorted_racks()]
        assert racks == (["rack-001", "rack-000"] if comp == "gpu-bolt" else ["rack-000", "rack-001"]), comp
    assert len(checked) == 7
    # without an executor (no affinity) the GPU rack simply has more: first
    sorter.prepare(None)
    assert [r.id for r in sorter.sorted_racks()] == ["rack-001", "rack-000"]
    # the 1.x order ignores the affinity
    old = NodeSorter(state, td, NodeSortType.DEFAULT_RAS)
    old.prepare(td.component_executors("spout-0")[0])
    assert [r.id for r in old.sorted_racks()] == ["rack-001", "rack-000"]


def test_existing_executors_pull_to_their_rack_host_and_node():
    state, t1, t2 = six_rack_state(racks=SIX_RACKS[:2])
    # two executors of topo-2 on a node of the weaker rack
    slot = state.free_slots_on_node("r001s015")[0]
    state.assign(slot, t2.id, list(t2.executors[:2]))
    sorter = NodeSorter(state, t2)
    sorter.prepare(None)
    order = list(sorter.sort_all_nodes())
    assert [r.id for r in sorter.sorted_racks()] == ["rack-001", "rack-000"]
    assert order[0] == "r001s015"
    # another topology is not pulled
    other = NodeSorter(state, t1)
    other.prepare(None)
    assert [r.id for r in other.sorted_racks()] == ["rack-000", "rack-001"]


def test_blacklisted_hosts_are_left_out():
    sups = gen_supervisors_with_racks(3, 10, 6, 0, 0, 1000, 8000)
    conf = cluster_conf(100, 775, 25)
    td = gen_topology("topology1", conf, 1, 5, 10, 20, 0, 0, "user")
    state = make_state(sups, [td], conf)
    black = {s.host for s in sups.values() if s.id.startswith("r001")}
    state.blacklisted_hosts = black
    sorter = NodeSorter(state, td)
    sorter.prepare(None)
    nodes = list(sorter.sort_all_nodes())
    assert set(nodes) == {i for i in sups if not i.startswith("r001")}
    assert [r.id for r in sorter.sorted_racks()] == ["rack-000", "rack-002"]


def test_hosts_and_nodes_are_sorted_lazily_from_the_state_when_reached():
    sups = gen_supervisors(4, 4, 400, 4000, rack="rack-a")
    sups.update(gen_supervisors(4, 4, 400, 4000, start=4, rack="rack-b"))
    conf = cluster_conf(10, 100, 0)
    td = gen_topology("t", conf, 1, 0, 2, 0, 0, 0, "user")
    other = gen_topology("o", conf, 1, 0, 4, 0, 0, 0, "user")
    state = make_state(sups, [td, other], conf)
    sorter = NodeSorter(state, td)
    sorter.prepare(None)
    sorting = sorter.sort_all_nodes()
    racks = [r.id for r in sorting.racks]
    assert racks == ["rack-a", "rack-b"]  # equal: by id
    # after the racks were sorted, another topology takes most of r000s001 (rack-b's hosts are not sorted yet)
    state.assign(state.free_slots_on_node("r000s001")[0], other.id, list(other.executors))
    order = list(sorting)
    # rack-a's hosts are sorted when reached: the loaded node goes last in its rack
    assert order[:4] == ["r000s000", "r000s002", "r000s003", "r000s001"]
    # a later change no longer moves what this sorting has already sorted
    state.free_slot(state.used_slots_by_topology(other.id)[0])
    assert list(sorting)[:4] == order[:4]


def test_recorder_keeps_each_sort_in_the_explain_shape():
    sups = gen_supervisors(3, 2, 400, 4000, rack="r1", generic={"gpu.count": 1.0})
    sups.update(gen_supervisors(2, 2, 200, 2000, start=3, rack="r2"))
    conf = cluster_conf(10, 100, 0)
    td = gen_topology("t", conf, 1, 0, 1, 0, 0, 0, "user")
    state = make_state(sups, [td], conf)
    rec = SortRecorder()
    sorter = NodeSorter(state, td, NodeSortType.COMMON, rec)
    ex = td.executors[0]
    sorter.prepare(ex)
    first = next(iter(sorter.sort_all_nodes()))
    assert len(rec.sorts) == 1
    record = rec.sorts[0]
    assert set(record) == {"executor", "racks", "hosts", "nodes"}
    assert record["executor"] == {"component": "spout-0", "index": 0}
    # averages tie at 1/6 (r1: 75 % cpu, 75 % memory, -100 % gpu; r2: 25 %, 25 %, 0 %); r1's minimum is -100 %
    assert [r["id"] for r in record["racks"]] == ["r2", "r1"]
    assert first == "r000s003"
    r1 = record["racks"][1]
    assert set(r1) == {"id", "available", "min_percent", "avg_percent"}
    # the GPUs the executor does not ask for are shown (and used) negated
    assert r1["available"] == {"cpu": 1200.0, "memory_mb": 12000.0, "generic": {"gpu.count": -3.0}}
    assert r1["min_percent"] == pytest.approx(-100.0)
    assert r1["avg_percent"] == pytest.approx(100 / 6) == record["racks"][0]["avg_percent"]
    # only the rack and host reached are sorted
    assert list(record["hosts"]) == ["r2"]
    assert [h["id"] for h in record["hosts"]["r2"]] == ["host-003-rack-000", "host-004-rack-000"]
    assert list(record["nodes"]) == ["host-003-rack-000"]
    assert [n["id"] for n in record["nodes"]["host-003-rack-000"]] == ["r000s003"]
    sorter.prepare(None)
    list(sorter.sort_all_nodes())
    assert rec.sorts[1]["executor"] is None
    assert set(rec.sorts[1]["nodes"]) == {s.host for s in sups.values()}


def test_sort_object_resources_tie_breaks_and_order_keys():
    def items():
        # overall cpu 400, memory 4000; every average is 25 %; minimums: a 12.5, b 25, c 25, d 12.5
        return [ObjectResources("d", ResourceOffer(50, 1500)), ObjectResources("c", ResourceOffer(100, 1000)),
                ObjectResources("b", ResourceOffer(100, 1000)), ObjectResources("a", ResourceOffer(150, 500))]
    none = lambda _: 0  # noqa: E731
    common = [o.id for o in sort_object_resources(items(), NodeSortType.COMMON, None, none)]
    default = [o.id for o in sort_object_resources(items(), NodeSortType.DEFAULT_RAS, None, none)]
    generic = [o.id for o in sort_object_resources(items(), NodeSortType.GENERIC_RAS, None, none)]
    assert common == ["b", "c", "a", "d"]   # average tie → minimum → id
    assert default == ["b", "c", "a", "d"]  # minimum → average tie → id
    assert generic == ["a", "b", "c", "d"]  # average tie → id (the minimum is never looked at)
    # existing executors dominate every order
    for t in NodeSortType:
        assert sort_object_resources(items(), t, None, lambda i: 1 if i == "d" else 0)[0].id == "d"


def test_default_and_common_differ_on_a_small_example():
    # x: balanced 50/50 %; y: 70 % cpu and 40 % memory
    def items():
        return [ObjectResources("x", ResourceOffer(50, 500)), ObjectResources("y", ResourceOffer(70, 400)),
                ObjectResources("z", ResourceOffer(0, 100))]
    none = lambda _: 0  # noqa: E731
    assert [o.id for o in sort_object_resources(items(), NodeSortType.COMMON, None, none)] == ["y", "x", "z"]
    assert [o.id for o in sort_object_resources(items(), NodeSortType.DEFAULT_RAS, None, none)] == ["x", "y", "z"]


def test_dead_and_unknown_greylisted_supervisors_are_not_offered():
    sups = [Supervisor("a", "h1"), Supervisor("b", "h2")]
    conf = cluster_conf()
    td = gen_topology("t", conf, 1, 0, 1, 0, 0, 0, "u")
    state = make_state(sups, [td], conf, blacklisted_hosts={"h2"}, greylisted_supervisors=["zz"])
    sorter = NodeSorter(state, td)
    sorter.prepare(None)
    assert list(sorter.sort_all_nodes()) == ["a"]


def test_hosts_without_a_rack_go_to_the_default_rack():
    # testWithImpairedClusterNetworkTopography: a rack whose host list is cleared; its hosts land in /default-rack
    sups = gen_supervisors_with_racks(3, 10, 6, 0, 0, 1000, 8000)
    conf = cluster_conf(100, 775, 25)
    td = gen_topology("topology1", conf, 1, 5, 10, 20, 0, 0, "user")
    mapping = {s.host: f"r{s.id[1:4]}" for s in sups.values() if not s.id.startswith("r001")}
    plain = {k: Supervisor(s.id, s.host, s.cpu, s.memory_mb, s.generic, s.ports) for k, s in sups.items()}
    state = make_state(plain, [td], conf, host_to_rack=mapping)
    sorter = NodeSorter(state, td)
    sorter.prepare(None)
    assert {r.id for r in sorter.sorted_racks()} == {"r000", "r002", "/default-rack"}
    default_hosts = sorter.rack_to_hosts["/default-rack"]
    assert len(default_hosts) == 10 and all(h.endswith("rack-001") for h in default_hosts)
    assert set(sorter.sort_all_nodes()) == set(sups)
