"""``python -m hack.local_up --sample FILE``: a sample (any of ``charts/sedna/samples/``, or a file of your own) run on
local_up's nodes, followed to where that kind ends.

1. The objects the sample names — Models (``model``, ``initialModel``, ``pretrainedModel``), Datasets (``dataset``)
   and Secrets (``credentialName``, also a named Model's) — are looked up in the files beside the sample, in its
   ``references/`` directory, then in the bundled samples (``charts/sedna/samples/`` and its ``references/``: a sample
   copied elsewhere alone still runs, and the file each object was taken from is said), and created first (namespace
   ``default`` unless set); a name found nowhere is said, with the places looked in.
2. A bundled sample's Dataset whose index file is missing on its node gets one, said as demo data (``images/<i>.jpg``
   lines, a header first for csv): enough samples for the train trigger of the job that uses it, else 10. A Dataset
   of a file of your own gets none: its missing file is said (the path to write), as the LC will report it.
3. For a local run, what only time would bring is brought forward, and printed: an incremental or lifelong learning
   job's train trigger loses its daily ``timer`` window and checks every second (its ``condition`` stays), its deploy
   Model is polled every second, an ``s3://`` ``outputDir`` becomes that path on the node (there is no S3 endpoint
   here); job workers take 0.5 s, a joint inference edge worker reports every second.
4. The sample is created, then its status is printed as it changes until it is where its kind ends:

   | kind | end |
   |---|---|
   | Dataset | ``numberOfSamples`` reported by the LC of its node |
   | Model | created |
   | FederatedLearningJob | ``Succeeded``, with a ``Training`` condition for the training workers' round reports |
   | IncrementalLearningJob, LifelongLearningJob | one round: ``Deploy``/``Completed`` |
   | JointInferenceService | ``Running``, with the edge worker's reported ``metrics`` in its status |
   | FeatureExtraction-, ObjectSearch-, ObjectTrackingService | ``Running`` |
   | ReidJob, VideoAnalyticsJob, ElasticAIJob | ``Succeeded`` |

   Every sample is followed at once (``hack/local_up_follow.py``); a failure nothing in a local run cures ends the
   run at once with its reason: a ``Failed`` condition or phase, ``NodeNotFound``, ``ModelNotFound``,
   ``InvalidSpec``, a Dataset's ``URLNotFound``, a pod's ``FailedScheduling``… (that module's doc lists them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._procs import SAMPLES

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


@dataclass(frozen=True)
class Found:
    """An object and the file it was read from."""

    obj: dict[str, Any]
    path: Path

    @property
    def bundled(self) -> bool:
        """Read from the bundled samples (``charts/sedna/samples/``)."""
        return self.path.resolve().is_relative_to(SAMPLES.resolve())


def search_dirs(sample: Path) -> list[Path]:
    """Where the objects a sample names are looked up, in order: beside it, its ``references/``, then the bundled
    samples' directory and theirs."""
    dirs: list[Path] = []
    for directory in (sample.parent, sample.parent / "references", SAMPLES, SAMPLES / "references"):
        if directory.resolve() not in {d.resolve() for d in dirs}:
            dirs.append(directory)
    return dirs


def catalog(sample: Path) -> dict[Key, Found]:
    """Every object of the YAML files of ``search_dirs(sample)``; the first definition of a name wins."""
    found: dict[Key, Found] = {}
    for directory in search_dirs(sample):
        for path in sorted(directory.glob("*.yaml")):
            for doc in load(path):
                if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and doc["metadata"].get("name"):
                    found.setdefault(key_of(doc), Found(doc, path))
    return found


def named_by(obj: dict[str, Any], known: dict[Key, Found]) -> list[Key]:
    """The objects ``obj`` names and those they name (a Model's Secret), each once, in order."""
    names: list[Key] = []
    wanted = list(referenced(obj.get("spec"), key_of(obj)[1]))
    while wanted:
        key = wanted.pop(0)
        if key not in names:
            names.append(key)
            if key in known:
                wanted += list(referenced(known[key].obj.get("spec"), key[1]))
    return names


def with_references(samples: list[Found], known: dict[Key, Found], say: Say) -> list[Found]:
    """The objects the samples name (and those name), then the samples; each once. Says where each was taken from
    when it was not beside its sample, and where it was looked for when it was found nowhere."""
    own = {key_of(s.obj) for s in samples}
    ordered: dict[Key, Found] = {}
    for sample in samples:
        for key in named_by(sample.obj, known):
            if key in ordered or key in own:
                continue
            found = known.get(key)
            what = f"{key[0]} {key[1]}/{key[2]}"
            if found is None:
                places = ", ".join(f"{d}/*.yaml" for d in search_dirs(sample.path))
                say(f"==> {sample.path.name} names {what}, defined in none of {places}: put a file that defines it "
                    "beside the sample, or create it yourself")
                continue
            if found.path.parent not in (sample.path.parent, sample.path.parent / "references"):
                say(f"==> {sample.path.name} names {what}: not beside it, taken from {found.path}")
            ordered[key] = found
    # Secrets first, then Models and Datasets (the sample's own too): the GM reads them when a job comes
    order = ("Secret", "Model", "Dataset")
    return sorted([*ordered.values(), *samples],
                  key=lambda f: order.index(f.obj["kind"]) if f.obj["kind"] in order else 3)


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


def seed_datasets(objects: list[Found], rootfs: dict[str, Path], say: Say) -> None:
    """Write the missing index file of each bundled sample's Dataset on one of our nodes; say the missing file of
    any other Dataset (step 2)."""
    needed: dict[tuple[str, str], int] = {}
    for found in objects:
        if found.obj["kind"] in LEARNING_KINDS:
            ds = ((found.obj.get("spec") or {}).get("dataset") or {}).get("name")
            if ds:
                needed[(key_of(found.obj)[1], ds)] = samples_needed(found.obj)
    for found in objects:
        if found.obj["kind"] != "Dataset":
            continue
        spec = found.obj.get("spec") or {}
        node, url = spec.get("nodeName", ""), spec.get("url", "")
        if node not in rootfs or not url.startswith("/"):
            continue
        path = rootfs[node] / url.lstrip("/")
        if path.exists():
            continue
        _kind, ns, name = key_of(found.obj)
        csv = spec.get("format") == "csv"
        if not found.bundled:
            say(f"==> Dataset {ns}/{name} (from {found.path}) indexes {url} on {node}, which is not there ({path}): "
                "local_up writes demo data only for the bundled samples' Datasets; write that file (one sample a line"
                f"{', after a header line' if csv else ''}), or the LC reports URLNotFound")
            continue
        count = needed.get((ns, name), DEFAULT_SAMPLES)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(("image,label\n" if csv else "") + "".join(f"images/{i}.jpg\n" for i in range(count)),
                        encoding="utf-8")
        say(f"==> wrote {path} on {node}: {count} samples for Dataset {ns}/{name} (demo data of a bundled sample)")


def _client(cs: Any, obj: dict[str, Any]) -> Any:
    from apis import resources

    kind, ns, _name = key_of(obj)
    return cs.resource(resources.lookup_kind(obj["apiVersion"], kind).gvr, ns)


def apply(cs: Any, obj: dict[str, Any], say: Say) -> dict[str, Any] | None:
    """Create ``obj`` (one that exists already is kept); the object in the API server, None when it cannot be."""
    from apis import errors

    kind, ns, name = key_of(obj)
    try:
        return dict(_client(cs, obj).create(obj))
    except errors.ApiError as exc:
        if errors.is_already_exists(exc):
            say(f"    {kind} {ns}/{name} exists already: kept")
            return dict(_client(cs, obj).get(name))
        say(f"==> cannot create {kind} {ns}/{name}: {exc}")
        return None


def nodes_named(obj: dict[str, Any]) -> set[str]:
    """The nodes an object puts something on: its pod templates' ``nodeName``, a Dataset's ``nodeName``."""
    spec = obj.get("spec") or {}
    nodes = {t["spec"].get("nodeName") for t in _templates(spec)}
    if obj["kind"] == "Dataset":
        nodes.add(spec.get("nodeName"))
    return {n for n in nodes if isinstance(n, str) and n}


def run_samples(cs: Any, paths: list[Path], rootfs: dict[str, Path], timeout: float, say: Say,
                cloud_nodes: tuple[str, ...] = ()) -> bool:
    """Create each sample with what it names, then follow them all to their ends; True when all got there."""
    from apis import meta

    from .local_up_follow import Follower, follow_all

    samples = [Found(obj, path) for path in paths for obj in load(path)]  # checked by local_up: apiVersion, kind, name
    known: dict[Key, Found] = {}
    for path in paths:
        known.update({k: v for k, v in catalog(path).items() if k not in known})
    objects = with_references(samples, known, say)
    for sample in samples:
        for change in for_local_run(sample.obj):
            say(f"    for a local run, {sample.obj['kind']} {key_of(sample.obj)[2]}: {change}")
    for found in objects:
        for node in sorted(nodes_named(found.obj) - set(rootfs) - set(cloud_nodes)):
            say(f"==> {found.obj['kind']} {key_of(found.obj)[2]} names node {node}, which runs no LC here (local_up's "
                f"nodes: {', '.join([*rootfs, *cloud_nodes])}): what its workers report and its Datasets' counts are lost")
    seed_datasets(objects, rootfs, say)
    ok = True
    uids: dict[Key, str] = {}
    for found in objects:
        kind, ns, name = key_of(found.obj)
        made = apply(cs, found.obj, say)
        if made is None:
            ok = False
            continue
        uids[key_of(found.obj)] = meta.uid(made)
        say(f"==> created {kind} {ns}/{name}" + ("" if found in samples else " (named by the sample)"))
    followers = []
    for sample in samples:
        if key_of(sample.obj) in uids:
            named = named_by(sample.obj, known)
            datasets = [known[k].obj for k in named if k[0] == "Dataset" and k in known]
            followers.append((Follower(sample.obj, say, named, datasets), uids[key_of(sample.obj)]))
    return follow_all(cs, followers, timeout, say, (*rootfs, *cloud_nodes)) and ok
