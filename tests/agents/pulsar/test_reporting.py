"""A broker's LocalReport: the update rule on its cached figures, re-stamped copies, and its serialisation."""
import dataclasses

from clusteremu.agents.pulsar.reporting import LocalReport
from clusteremu.strategies.pulsar import PulsarConfig, report_update


def local_report(cpu=10.0, rate=100.0, at=0):
    return LocalReport(cpu=(cpu, 100.0), memory=(1.0, 10.0), direct_memory=(1.0, 10.0), bandwidth_in=(1.0, 10.0),
                       bandwidth_out=(1.0, 10.0), msg_rate_in=rate, msg_rate_out=rate, msg_throughput_in=10 * rate,
                       msg_throughput_out=10 * rate, num_topics=3, num_bundles=2, last_update_ms=at)


def test_needs_update_agrees_with_the_rule_on_the_report_dicts():
    cfg = PulsarConfig({})
    last = local_report()
    for current, since_s in ((local_report(cpu=12.0), 5), (local_report(cpu=30.0), 5),
                             (local_report(rate=130.0), 5), (local_report(), 16 * 60)):
        expected = report_update.update_reason(last.to_json(), current.to_json(), since_s * 1000.0, cfg)
        assert current.needs_update(last, since_s, cfg) == expected
        assert current.needs_update(last, since_s, dict(cfg)) == expected  # a plain dict config works too
    assert local_report().needs_update(None, 0, cfg) == "first"


def test_restamped_is_the_same_report_at_a_later_time():
    cfg = PulsarConfig({})
    report = local_report(at=1000)
    figures = report.figures(cfg)
    later = report.restamped(6000)
    assert later is not report and later.last_update_ms == 6000 and report.last_update_ms == 1000
    assert later.to_json() == {**report.to_json(), "lastUpdate": 6000}
    assert later.figures(cfg) == figures == report_update.report_figures(later.to_json(), cfg)


def test_the_report_is_written_through_the_strategies_serialiser():
    stats = {"ns/0x00000000_0x80000000": {"msgRateIn": 1.5, "msgRateOut": 3.0, "msgThroughputIn": 1500.0,
                                          "msgThroughputOut": 3000.0, "topics": 3, "consumerCount": 2,
                                          "producerCount": 3}}
    report = local_report(at=1000)
    report.bundle_stats = stats
    written = report.to_json()
    assert written == report.local_data().to_json()
    assert list(written) == list(report.local_data().to_json())  # Pulsar's field order too
    later = dataclasses.replace(report, last_update_ms=6000, cpu=(50.0, 100.0))
    later.share_bundle_stats_json(report)
    assert later.to_json()["lastStats"] is written["lastStats"]  # the same stats are serialised once
