"""What a learning job's manager remembers across restarts (one SQLite ``lc_state`` row per job, Go's
``sedna.io/rounds``, ``sedna.io/number-of-samples`` and ``sedna.io/data-file-of-eval`` annotations and more).

* ``round``: rounds started on this node (incremented when the train trigger fires).
* ``previous_numbers``: samples of the Dataset already split; ``train_samples``: the new samples for the next
  training; ``eval_versions``: the evaluation samples, one version per batch of new samples, the last
  ``EVAL_VERSIONS_KEPT`` kept. The evaluation data is the kept versions, each sample once (Go re-appended every
  version to its evaluation samples on every new batch, so samples repeated).
* ``answered``: per action (``train``, ``eval``, ``deploy``, ``hotupdate``), the stage instance
  (``CurrentStage.instance``) it has answered, so that each is answered once; ``pending``: decisions taken whose
  side effects are not done yet (a restart finishes them the same way); ``reported_problem``: the spec problem
  already reported.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["EVAL_VERSIONS_KEPT", "RoundState"]

EVAL_VERSIONS_KEPT = 5


@dataclass
class RoundState:
    uid: str = ""
    round: int = 0
    previous_numbers: int = 0
    train_samples: list[str] = field(default_factory=list)
    eval_versions: list[list[str]] = field(default_factory=list)
    answered: dict[str, str] = field(default_factory=dict)
    pending: dict[str, Any] = field(default_factory=dict)
    reported_problem: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object, uid: str) -> RoundState:
        """The state stored for the job with ``uid``; a fresh one when nothing (or another job's state) is stored."""
        if not isinstance(data, dict) or data.get("uid") != uid:
            return cls(uid=uid)
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def copy(self) -> RoundState:
        return copy.deepcopy(self)

    def absorb(self, samples: list[str], train_prob: float, skipped: int = 0) -> tuple[int, int]:
        """Split the samples beyond ``previous_numbers`` (Go ``handleData``) of the Dataset's, ``samples`` being
        those after its first ``skipped``: the first ``int(train_prob * new)`` go to training, the rest become a new
        evaluation version. Returns ``(train, eval)`` counts."""
        new = samples[max(0, self.previous_numbers - skipped):]
        if not new:
            return 0, 0
        train = int(train_prob * len(new))
        self.train_samples.extend(new[:train])
        self.eval_versions.append(new[train:])
        del self.eval_versions[:-EVAL_VERSIONS_KEPT]
        self.previous_numbers = skipped + len(samples)
        return train, len(new) - train

    def eval_samples(self) -> list[str]:
        """The evaluation data: every kept version, oldest first, each sample once."""
        return [sample for version in self.eval_versions for sample in version]
