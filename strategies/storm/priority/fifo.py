"""Storm 2.x ``FIFOSchedulingPriorityStrategy``: the simulated order of :mod:`.simulated`, except that a user
whose next topology would put them at or over guarantee (score >= 0) is scored by the uptime of their
youngest remaining topology instead.

Storm computes that inside the comparator and, as a side effect, re-sorts the user's remaining topologies by
uptime (youngest first) — permanently. The next comparison then scores that youngest topology, which may be
under guarantee again, so the result depends on the exact sequence of comparisons;
:func:`.._java_ras.java_list_sort` reproduces it. Net effect: among users over guarantee, the one whose
youngest topology is youngest goes first; users with older topologies come later and are evicted first.
"""
from __future__ import annotations

from .demand import DOUBLE_MAX, PriorityInput
from .simulated import Available, DefaultSchedulingPriorityStrategy, SimulatedUser

__all__ = ["FIFOSchedulingPriorityStrategy", "FIFOSimulatedUser"]


class FIFOSimulatedUser(SimulatedUser):
    """``FIFOSimulatedUser``: the score falls back to the youngest uptime when not under guarantee."""

    pure_score = False  # the fallback re-sorts the user's topologies: a second call may score another one

    def score(self, available: Available) -> float:
        orig = self.score_of(available, self.next_highest())
        if orig < 0:
            return orig
        # Storm's TopologyBySubmissionTimeComparator: uptime ascending, then id (the re-sort persists)
        self.tds.sort(key=lambda t: (t.uptime, t.id.encode("utf-16-be")))
        td = self.next_highest()
        if td is not None:
            return float(td.uptime)
        return DOUBLE_MAX


class FIFOSchedulingPriorityStrategy(DefaultSchedulingPriorityStrategy):
    """``org.apache.storm.scheduler.resource.strategies.priority.FIFOSchedulingPriorityStrategy``."""

    def simulated_user(self, user: str, inp: PriorityInput) -> SimulatedUser:
        return FIFOSimulatedUser(user, inp.guarantee(user), inp.owned_by(user))
