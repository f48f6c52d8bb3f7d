"""``python -m hack.local_up --sample FILE``: a sample (any of ``charts/sedna/samples/``, or a file of your own) run on
local_up's nodes, followed to where that kind ends.

1. The objects the sample names — Models (``model``, ``initialModel``, ``pretrainedModel``), Datasets (``dataset``)
   and Secrets (``credentialName``, also a named Model's) — are looked up in the files beside the sample and in its
   ``references/`` directory, and created first (namespace ``default`` unless set); a name found nowhere is said.
2. A Dataset whose index file is missing on its node gets one (``images/<i>.jpg`` lines, a header first for csv):
   enough samples for the train trigger of the job that uses it, else 10.
3. For a local run, what only time would bring is brought forward, and printed: an incremental or lifelong learning
   job's train trigger loses its daily ``timer`` window and checks every second (its ``condition`` stays), its deploy
   Model is polled every second, an ``s3://`` ``outputDir`` becomes that path on the node (there is no S3 endpoint
   here); job workers take 0.5 s, a joint inference edge worker reports every second.
4. The sample is created, then its status is printed as it changes until it is where its kind ends:

   | kind | end |
   |---|---|
   | Dataset | ``numberOfSamples`` reported by the LC of its node |
   | Model | created |
   | FederatedLearningJob | ``Succeeded``, with a ``Training`` condition showing the training workers' latest round report |
   | IncrementalLearningJob, LifelongLearningJob | one round: ``Deploy``/``Completed`` |
   | JointInferenceService | ``Running``, with the edge worker's reported ``metrics`` in its status |
   | FeatureExtraction-, ObjectSearch-, ObjectTrackingService | ``Running`` |
   | ReidJob, VideoAnalyticsJob, ElasticAIJob | ``Succeeded`` |

   A ``Failed`` condition or phase ends it at once (its message printed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._procs import pause

NS = "default"
WORKER_DELAY = {"sandbox.sedna.io/worker-delay-seconds": "0.5"}
REPORT_PERIOD = {"sandbox.sedna.io/worker-period-seconds": "1"}
REFERENCE_KEYS = {"model": "Model", "initialModel": "Model", "pretrainedModel": "Model", "dataset": "Dataset"}
LEARNING_KINDS = ("IncrementalLearningJob", "LifelongLearningJob")
JOB_KINDS = ("FederatedLearningJob", "ReidJob", "VideoAnalyticsJob", *LEARNING_KINDS)
DEFAULT_SAMPLES = 10

Say = Callable[[str], None]
Key = tuple[str, str, str]  # kind, namespace, name


def key_of(obj: dict[str, Any]) -> Key:
    md = obj["metadata"]
    return obj["kind"], md.get("namespace") or NS, md["name"]


def load(path: Path) -> list[dict[str, Any]]:
    from apis import yamlutil

    docs = [d for d in yamlutil.load_all(path.read_text(encoding="utf-8")) if d]
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("metadata", {}), dict):
            doc.setdefault("metadata", {}).setdefault("namespace", NS)
    return docs


def referenced(obj: Any, namespace: str) -> Iterator[Key]:
    """The Models, Datasets and Secrets an object names, as Sedna's controllers look them up (its namespace)."""
    if isinstance(obj, dict):
        for k, value in obj.items():
            if k in REFERENCE_KEYS and isinstance(value, dict) and isinstance(value.get("name"), str):
                yield REFERENCE_KEYS[k], namespace, value["name"]
            elif k == "credentialName" and isinstance(value, str) and value:
                yield "Secret", namespace, value
            yield from referenced(value, namespace)
    elif isinstance(obj, list):
        for item in obj:
            yield from referenced(item, namespace)


def catalog(sample: Path) -> dict[Key, dict[str, Any]]:
    """Every object of the YAML files beside the sample and in its ``references/``."""
    found: dict[Key, dict[str, Any]] = {}
    for path in sorted([*sample.parent.glob("*.yaml"), *(sample.parent / "references").glob("*.yaml")]):
        for doc in load(path):
            if isinstance(doc.get("metadata"), dict) and doc["metadata"].get("name"):
                found.setdefault(key_of(doc), doc)
    return found


def with_references(samples: list[dict[str, Any]], known: dict[Key, dict[str, Any]],
                    say: Say) -> list[dict[str, Any]]:
    """The objects the samples name (and those name, a Model's Secret), then the samples; each once."""
    ordered: dict[Key, dict[str, Any]] = {}
    wanted = [k for s in samples for k in referenced(s.get("spec"), key_of(s)[1])]
    while wanted:
        key = wanted.pop(0)
        if key in ordered or key in {key_of(s) for s in samples}:
            continue
        obj = known.get(key)
        if obj is None:
            say(f"==> the sample names {key[0]} {key[1]}/{key[2]}, found in no file beside it or in references/: "
                "create it yourself")
            continue
        ordered[key] = obj
        wanted += list(referenced(obj.get("spec"), key[1]))
    # Secrets first, then Models and Datasets (the sample's own too): the GM reads them when a job comes
    order = ("Secret", "Model", "Dataset")
    return sorted([*ordered.values(), *samples], key=lambda o: order.index(o["kind"]) if o["kind"] in order else 3)


def _templates(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod template (``template`` with a ``spec``) under ``node``."""
    if isinstance(node, dict):
        template = node.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            yield template
        for value in node.values():
            yield from _templates(value)
    elif isinstance(node, list):
        for item in node:
            yield from _templates(item)


def _annotate(template: dict[str, Any], annotations: dict[str, str]) -> None:
    md = template.setdefault("metadata", {})
    md["annotations"] = {**annotations, **(md.get("annotations") or {})}  # the sample's own win


def for_local_run(obj: dict[str, Any]) -> list[str]:
    """Bring forward what only time would bring (module doc, step 3); returns what was changed, one line each."""
    kind, spec = obj["kind"], obj.get("spec") or {}
    changes: list[str] = []
    if kind in LEARNING_KINDS:
        trigger = (spec.get("trainSpec") or {}).get("trigger") or {}
        timer = trigger.pop("timer", None)
        if timer:
            changes.append(f"trainSpec.trigger.timer {timer.get('start')}–{timer.get('end')} dropped (any time)")
        if trigger.get("checkPeriodSeconds", 60) != 1:
            changes.append(f"trainSpec.trigger.checkPeriodSeconds {trigger.get('checkPeriodSeconds', 60)} → 1")
            trigger["checkPeriodSeconds"] = 1
        model = (spec.get("deploySpec") or {}).get("model")
        if isinstance(model, dict) and model.get("pollPeriodSeconds", 60) != 1:
            changes.append(f"deploySpec.model.pollPeriodSeconds {model.get('pollPeriodSeconds', 60)} → 1")
            model["pollPeriodSeconds"] = 1
    output = spec.get("outputDir")
    if kind in LEARNING_KINDS and isinstance(output, str) and output.startswith("s3://"):
        spec["outputDir"] = "/" + output.removeprefix("s3://")
        changes.append(f"outputDir {output} → {spec['outputDir']} on the node (the sandbox has no S3 endpoint)")
    if kind in JOB_KINDS:
        for template in _templates(spec):
            _annotate(template, WORKER_DELAY)
        changes.append("workers take 0.5 s (sandbox.sedna.io/worker-delay-seconds)")
    if kind == "JointInferenceService":
        edge = (spec.get("edgeWorker") or {}).get("template")
        if isinstance(edge, dict):
            _annotate(edge, REPORT_PERIOD)
            changes.append("the edge worker reports every second, not every 30 s (sandbox.sedna.io/worker-period-seconds)")
    return changes


def samples_needed(job: dict[str, Any]) -> int:
    """Index lines that make a learning job's ``num_of_samples`` train trigger fire at its first check."""
    spec = job.get("spec") or {}
    condition = ((spec.get("trainSpec") or {}).get("trigger") or {}).get("condition") or {}
    if condition.get("metric") != "num_of_samples":
        return DEFAULT_SAMPLES
    train_prob = float((spec.get("dataset") or {}).get("trainProb") or 1.0)
    return max(DEFAULT_SAMPLES, math.ceil((float(condition.get("threshold") or 0) + 1) / train_prob) + 10)


def seed_datasets(objects: list[dict[str, Any]], rootfs: dict[str, Path], say: Say) -> None:
    """Write the index file of each Dataset whose node is one of ours and whose file is missing (step 2)."""
    needed: dict[tuple[str, str], int] = {}
    for obj in objects:
        if obj["kind"] in LEARNING_KINDS:
            ds = ((obj.get("spec") or {}).get("dataset") or {}).get("name")
            if ds:
                needed[(key_of(obj)[1], ds)] = samples_needed(obj)
    for obj in objects:
        if obj["kind"] != "Dataset":
            continue
        spec = obj.get("spec") or {}
        node, url = spec.get("nodeName", ""), spec.get("url", "")
        if node not in rootfs or not url.startswith("/"):
            continue
        path = rootfs[node] / url.lstrip("/")
        if path.exists():
            continue
        count = needed.get(key_of(obj)[1:], DEFAULT_SAMPLES)
        header = "image,label\n" if spec.get("format") == "csv" else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + "".join(f"images/{i}.jpg\n" for i in range(count)), encoding="utf-8")
        say(f"==> wrote {path} on {node}: {count} samples for Dataset {key_of(obj)[1]}/{key_of(obj)[2]}")


@dataclass
class Follower:
    """Prints what changes in one object's status and tells whether it reached its kind's end."""

    obj: dict[str, Any]
    say: Say
    printed: set[tuple[str, ...]] = field(default_factory=set)  # conditions shown (one follow: a few dozen)
    last: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        kind, _ns, name = key_of(self.obj)
        return f"{kind.lower()}/{name}"

    def show(self, status: dict[str, Any]) -> None:
        for c in status.get("conditions") or []:
            # by content: a condition updated in place (FL's Training, the latest round report) is shown again, one
            # an IL/LL job keeps from a finished round is not
            seen = tuple(str(c.get(k) or "") for k in ("type", "stage", "reason", "message", "lastTransitionTime",
                                                       "lastProbeTime"))
            if seen in self.printed:
                continue
            self.printed.add(seen)
            stage = f"{c.get('stage')}/" if c.get("stage") else ""
            text = " ".join(str(c[k]) for k in ("reason", "message") if c.get(k))
            self.say(f"    {self.label} {stage}{c.get('type')} {text}".rstrip())
        for name, value in (("phase", status.get("phase")), ("numberOfSamples", status.get("numberOfSamples")),
                            ("metrics", _metrics(status.get("metrics")))):
            if value not in (None, "", []) and self.last.get(name) != str(value):
                self.last[name] = str(value)
                self.say(f"    {self.label} {name}={value}")

    def outcome(self, status: dict[str, Any]) -> tuple[bool | None, str]:
        """(True, why) at the end, (False, why) on a failure, (None, "") meanwhile."""
        kind = self.obj["kind"]
        conditions = status.get("conditions") or []
        failed = next((c for c in conditions if c.get("type") == "Failed" and c.get("status", "True") == "True"), None)
        if failed is not None or status.get("phase") == "Failed":
            why = (failed or {}).get("message") or (failed or {}).get("reason") or "phase Failed"
            return False, f"failed: {why}"
        if kind == "Dataset":
            count = status.get("numberOfSamples")
            return (True, f"numberOfSamples={count}, reported by the LC") if count is not None else (None, "")
        if kind == "Model":
            return True, "created"
        if kind in LEARNING_KINDS:
            done = any((c.get("stage"), c.get("type")) == ("Deploy", "Completed") for c in conditions)
            return (True, "one round Train → Eval → Deploy done") if done else (None, "")
        if kind == "FederatedLearningJob":
            latest = next((c for c in conditions if c.get("type") == "Training"), None)  # the latest round report
            if status.get("phase") == "Succeeded":
                return (True, f"Succeeded after its round reports (the last: {latest.get('message')})") if latest else (
                    False, "Succeeded, but no round report reached the job (are the LCs of its nodes running?)")
            return None, ""
        if kind == "JointInferenceService":
            if conditions and conditions[-1].get("type") == "Running" and _metrics(status.get("metrics")):
                return True, "Running, the edge worker's reports in status.metrics"
            return None, ""
        if kind.endswith("Service"):
            running = bool(conditions) and conditions[-1].get("type") == "Running"
            return (True, "Running") if running else (None, "")
        return (True, "Succeeded") if status.get("phase") == "Succeeded" else (None, "")


def _metrics(metrics: Any) -> str:
    if not isinstance(metrics, list):
        return ""
    return ", ".join(f"{m.get('key')}={m.get('value')}" for m in metrics if isinstance(m, dict))


def _client(cs: Any, obj: dict[str, Any]) -> Any:
    from apis import resources

    kind, ns, _name = key_of(obj)
    return cs.resource(resources.lookup_kind(obj["apiVersion"], kind).gvr, ns)


def apply(cs: Any, obj: dict[str, Any], say: Say) -> bool:
    from apis import errors

    kind, ns, name = key_of(obj)
    try:
        _client(cs, obj).create(obj)
    except errors.ApiError as exc:
        if errors.is_already_exists(exc):
            say(f"    {kind} {ns}/{name} exists already: kept")
            return True
        say(f"==> cannot create {kind} {ns}/{name}: {exc}")
        return False
    return True


def follow(cs: Any, obj: dict[str, Any], timeout: float, say: Say) -> bool:
    """Print the object's status changes until its end (True), a failure or ``timeout`` (False)."""
    from apis import errors

    follower = Follower(obj, say)
    client = _client(cs, obj)
    kind, ns, name = key_of(obj)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = client.get(name).get("status") or {}
        except errors.ApiError as exc:
            say(f"    cannot read {kind} {ns}/{name}: {exc}")
            status = {}
        follower.show(status)
        done, why = follower.outcome(status)
        if done is not None:
            say(f"==> {kind} {ns}/{name}: {why}")
            return done
        pause(0.2)
    say(f"==> timed out after {timeout:.0f}s: {kind} {ns}/{name} did not reach its end")
    return False


def nodes_named(obj: dict[str, Any]) -> set[str]:
    """The nodes an object puts something on: its pod templates' ``nodeName``, a Dataset's ``nodeName``."""
    spec = obj.get("spec") or {}
    nodes = {t["spec"].get("nodeName") for t in _templates(spec)}
    if obj["kind"] == "Dataset":
        nodes.add(spec.get("nodeName"))
    return {n for n in nodes if isinstance(n, str) and n}


def run_samples(cs: Any, paths: list[Path], rootfs: dict[str, Path], timeout: float, say: Say,
                cloud_nodes: tuple[str, ...] = ()) -> bool:
    """Create each sample with what it names, then follow each to its end; True when all got there."""
    samples: list[dict[str, Any]] = []
    known: dict[Key, dict[str, Any]] = {}
    for path in paths:
        samples += load(path)  # checked by local_up: objects with apiVersion, kind and name
        known.update({k: v for k, v in catalog(path).items() if k not in known})
    objects = with_references(samples, known, say)
    for obj in samples:
        for change in for_local_run(obj):
            say(f"    for a local run, {obj['kind']} {key_of(obj)[2]}: {change}")
    for obj in objects:
        for node in sorted(nodes_named(obj) - set(rootfs) - set(cloud_nodes)):
            say(f"==> {obj['kind']} {key_of(obj)[2]} names node {node}, which runs no LC here (local_up's nodes: "
                f"{', '.join([*rootfs, *cloud_nodes])}): what its workers report and its Datasets' counts are lost")
    seed_datasets(objects, rootfs, say)
    ok = True
    for obj in objects:
        kind, ns, name = key_of(obj)
        if apply(cs, obj, say):
            say(f"==> created {kind} {ns}/{name}" + ("" if obj in samples else " (named by the sample)"))
        else:
            ok = False
    return all([follow(cs, obj, timeout, say) for obj in samples]) and ok
