"""Event kinds of the Pulsar model (the vocabulary the analyses, queries and assertions read).

Units: times in seconds of virtual time; resource usages in percent of the limit as Pulsar reports them
(``cpu`` may be +inf or NaN exactly when the broker's own computation gives that); message rates in msg/s;
throughputs in bytes/s; ``score`` is the broker's weighted max resource usage × 100 (Pulsar's 4-argument
``getMaxResourceUsageWithWeight``), the figure ThresholdShedder, AvgShedder and the article's Grafana panels use.
Agent names: brokers ``broker-<i>``, the metadata store ``metadata-store``, client groups ``client-<i>``. The
store's own kinds (``store_session_expired``, ``leader_vacant``, ``store_latency_changed``) are the kernel's
(:mod:`clusteremu.emulator.metadata_store`).
"""
from __future__ import annotations

from clusteremu.emulator.trace.kinds import declare

_M = __name__

# -- brokers: election and reporting ---------------------------------------------------------------------------
declare("host_usage_sampled", "The broker sampled its host usage (LinuxBrokerHostUsageImpl): `cpu` is the "
        "percentage computed from two cumulative CPU-time samples over `elapsed_s`, the elapsed time as the broker "
        "measures it.", _M, cpu="float", elapsed_s="float", bandwidth_in="float", bandwidth_out="float")
declare("load_report", "The broker wrote its load report (LocalBrokerData) to the store.", _M,
        cpu="float", memory="float", direct_memory="float", bandwidth_in="float", bandwidth_out="float",
        msg_rate_in="float", msg_rate_out="float", msg_throughput_in="float", msg_throughput_out="float",
        num_bundles="int", num_topics="int", score="float", reason="str")

# -- leader: load manager --------------------------------------------------------------------------------------
declare("shedding_cycle", "The leader ran the shedding strategy; `unloads` is how many bundles it decided to "
        "move, `skipped` why it did nothing (\"\" when it acted).", _M,
        strategy="str", brokers="int", unloads="int", skipped="str")
declare("transfer_shedder_stats", "The extensible load manager's channel owner ran a shedding cycle of "
        "TransferShedder that got as far as computing the brokers' load stats (not one skipped before them: "
        "CoolDown, OutDatedData, NoBrokers, NoLoadData there): `load_avg` and `load_std`, the mean and population "
        "standard deviation of the brokers' weightedMaxEMA (fractions) the cycle's UnloadCounter records (loadAvg, "
        "loadStd), `target_std` its loadBalancerBrokerLoadTargetStd, and the cycle's outcome: `label` Success, "
        "Skip or Failure and `reason` (\"\" on Success; HitCount for a cycle that stops because the shedding "
        "condition did not hold in enough cycles in a row).",
        _M, load_avg="float", load_std="float", target_std="float", label="str", reason="str")
declare("unload_decided", "The leader decided to move `bundle` off `source`; `destination` is fixed at shedding "
        "time by the extensible load manager or AvgShedder, else \"\".", _M,
        bundle="str", source="str", destination="str", reason="str")
declare("bundle_placed", "The leader chose `broker` for an unowned bundle. `scores` maps every candidate to its "
        "score at that moment; `random_fallback` is true when the strategy fell back to a random broker.", _M,
        bundle="str", broker="str", strategy="str", random_fallback="bool", scores="dict")
declare("bundle_split", "A bundle was split into `children` with `algorithm`.", _M,
        bundle="str", children="list", algorithm="str")

# -- brokers: ownership ----------------------------------------------------------------------------------------
declare("bundle_owned", "The broker took ownership of `bundle` (`via`: lookup, initial (preassigned at start), split; "
        "with the extensible load manager: assign, transfer, override (the channel owner's clean-up or ownership monitor "
        "settled a service unit left in flight or held by an inactive broker on this one), table_view (a client "
        "connected a topic of a bundle the channel's table view has Owned by this broker, a record written while "
        "it was down)).", _M,
        bundle="str", via="str")
declare("bundle_unloaded", "The broker released `bundle` and closed its topics (`reason`: shedding (with the "
        "extensible load manager's transfer too: `destination` then names the new owner and the clients are told "
        "it), split (a child unloaded after a split; or the split parent itself, with `topics` 0: its topics stay "
        "on the children), shutdown (any graceful stop: see `broker_stopping.cause`), session_lost); `topics` is "
        "how many topics it served.", _M,
        bundle="str", destination="str", reason="str", topics="int")

# -- clients ---------------------------------------------------------------------------------------------------
declare("lookup_hop", "One hop of a topic lookup: the client asked `broker`, which answered `response` "
        "(redirect or connect) pointing at `target`.", _M,
        topic="str", hop="int", broker="str", response="str", target="str", authoritative="bool")
declare("topic_connected", "The client's producers and consumers of `topic` are connected to `broker` after "
        "`hops` lookup hops; `unavailable_s` is how long the topic had no connection (0 on first connect).", _M,
        topic="str", broker="str", hops="int", unavailable_s="float")
declare("topic_disconnected", "The connection of `topic` to `broker` was closed (`reason`: unload, broker_down, "
        "timeout).", _M, topic="str", broker="str", reason="str")
declare("reconnect_scheduled", "The client will retry `topic` after `backoff_s` (Pulsar's back-off).", _M,
        topic="str", attempt="int", backoff_s="float")

# -- faults of the model ---------------------------------------------------------------------------------------
declare("cpu_spike", "CPU load unrelated to traffic began on the broker's host (another process): `cores` "
        "cores' worth for `duration_s`.", _M, cores="float", duration_s="float")
declare("broker_booted", "The broker opened its metadata session and registered (`cause`: start, scale_out, "
        "restart); it joins the election next.", _M, cause="str", session="str")
declare("broker_stopping", "A graceful stop began (`cause`: shutdown, scale_in, rolling_restart): the broker leaves "
        "the election and unloads its `bundles` (each a `bundle_unloaded` with reason shutdown).", _M,
        cause="str", bundles="int")
declare("broker_stopped", "The graceful stop ended: session closed, process stopped (an `agent_stopped` with the "
        "same reason follows).", _M, cause="str")
declare("load_report_lost", "A `report_loss` fault made this load-report write fail; the broker retries on a "
        "later run of its report task.", _M, reason="str")
declare("load_report_delayed", "A `report_loss` fault delays this load-report write (the `load_report` just "
        "before) by `extra_s`.", _M, extra_s="float")
declare("rolling_restart_done", "The last broker of a rolling restart is back (booted); `brokers` were restarted.",
        _M, brokers="int")
