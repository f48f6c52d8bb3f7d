"""A kind that is not Sedna's, added in one file (``examples/echojob/kind.py``) plus a registry line, its CRD and a
sample (issue 28): kubectl applies the CRD and the sample to the sandbox, sedna-gm's registry builds the kind's
controller, and the job runs its pod, heals it when it is deleted, and follows it to ``Succeeded``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import wait_for
from testkit.kubectl import MAIN_KUBECTL, Kubectl, requires_kubectl

from apis import meta
from apis.clientset import Clientset
from apis.record import EventRecorder
from examples.echojob.kind import ECHO_JOBS, KIND, crd_yaml
from globalmanager.controllers import ControllerContext
from globalmanager.controllers.registry import kind_factory, register, select, unregister
from informers import SharedInformerFactory

pytestmark = [pytest.mark.integration, requires_kubectl]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "echojob"


def test_the_crd_file_is_generated_from_the_kinds_view() -> None:
    assert (EXAMPLE / "crd.yaml").read_text() == crd_yaml()


@pytest.fixture
def echo_gm(sandbox) -> Iterator[Clientset]:
    """The sandbox with EchoJob's CRD applied by kubectl, and the kind's controller from sedna-gm's registry."""
    assert MAIN_KUBECTL is not None
    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, Path(sandbox.kubeconfig).parent / "kubectl-cache")
    k("apply", "-f", str(EXAMPLE / "crd.yaml"))
    register(KIND.name, kind_factory(KIND))  # what a line in CONTROLLERS does
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    stop = threading.Event()
    factory = SharedInformerFactory(cs)
    try:
        ctx = ControllerContext(clientset=cs, informer_factory=factory, recorder=EventRecorder(cs, "sedna-gm"))
        controller = select([KIND.name])[KIND.name](ctx)
        factory.start(stop)
        runner = threading.Thread(target=controller.run, args=(stop,), daemon=True)
        runner.start()
        k("apply", "-f", str(EXAMPLE / "sample.yaml"))
        yield cs
    finally:
        stop.set()
        unregister(KIND.name)
        factory.shutdown(5)
        cs.close()


def test_an_echo_job_runs_its_pod_heals_it_and_succeeds(echo_gm) -> None:
    cs = echo_gm
    jobs, pods = cs.resource(ECHO_JOBS, "default"), cs.core_v1().pods("default")

    def job_pods() -> list[dict]:
        job = jobs.get("hello")
        return [p for p in pods.list()["items"] if meta.is_controlled_by(p, job)]

    wait_for("the job running", lambda: (jobs.get("hello").get("status") or {}).get("phase") == "Running", timeout=30)
    first = job_pods()[0]
    env = {e["name"]: e.get("value") for e in first["spec"]["containers"][0]["env"]}
    assert env["MESSAGE"] == "hello from a new kind"
    pods.delete(meta.name(first))
    wait_for("the pod recreated", lambda: [meta.uid(p) for p in job_pods()],
             check=lambda uids: bool(uids) and meta.uid(first) not in uids, timeout=30)
    wait_for("the job succeeded", lambda: (jobs.get("hello").get("status") or {}).get("phase"),
             check=lambda phase: phase == "Succeeded", timeout=30)
