"""One simulated worker pod run by Sedna's real SDK: the child process of the worker simulator's SDK mode (sdkmode).

Runs with the SDK's own interpreter and imports nothing of this project (standard library + ``sedna`` from
``$WORKERSIM_SDK_LIB``). The worker program is a small one, as a Sedna example's, over a fake estimator whose
model is a JSON file:

* IncrementalLearningJob train / eval: ``IncrementalLearning(estimator).train(...)`` / ``.evaluate(...)``; inference:
  ``IncrementalLearning(estimator)`` whose ``ModelLoadingThread`` (``MODEL_HOT_UPDATE=true``) polls the hot-update
  config and reports ``deploy`` as the SDK does; it runs until stopped;
* JointInferenceService edge: the SDK's ``LCReporter`` with the message ``JointInference`` gives it, fed as its
  ``inference`` feeds it (``JointInference`` itself imports the SDK's inference server, which needs fastapi);
* FederatedLearningJob train and LifelongLearningJob train / eval: the reports of ``FederatedLearning.train`` and
  ``LifelongLearning`` made with the SDK's ``JobBase.report_task_info`` and backend ``model_info`` (their
  aggregation server and knowledge base need heavy extras that the SDK's virtualenv does not install).

``$WORKERSIM_MOUNTS`` maps the pod's mount paths to local paths for the paths the SDK reads from files (the
hot-update config's ``model_path``): ``FileOps.download`` goes through it. ``$WORKERSIM_STEERING`` carries the
simulator's steering (metrics, rounds, period, inferences, fail).
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.environ["WORKERSIM_SDK_LIB"])

MOUNTS = sorted(json.loads(os.environ.get("WORKERSIM_MOUNTS") or "[]"), key=lambda m: len(m[0]), reverse=True)
STEERING = json.loads(os.environ.get("WORKERSIM_STEERING") or "{}")


def local(path):
    if isinstance(path, str) and path.startswith("/"):
        for mount, where in MOUNTS:
            if path == mount or path.startswith(mount.rstrip("/") + "/"):
                return where + path[len(mount):]
    return path


from sedna.common.file_ops import FileOps  # noqa: E402

_download = FileOps.download.__func__


def _download_through_mounts(cls, src, dst=None, unzip=False):
    return _download(cls, local(src), dst, unzip)


FileOps.download = classmethod(_download_through_mounts)


def metrics_at(index, default):
    metrics = STEERING.get("metrics") or []
    return metrics[min(index, len(metrics) - 1)] if metrics else default


def eval_metrics(index):
    value = round(max(0.9 - 0.2 * index, 0.0), 6)
    return {"precision": [value], "recall": [value]}


class Estimator:
    """A model that is a small JSON file."""

    def __init__(self, **kwargs):
        self.evaluated = 0
        self.model = None

    def train(self, train_data=None, valid_data=None, **kwargs):
        return metrics_at(0, None)

    def save(self, model_path):
        os.makedirs(os.path.dirname(model_path) or ".", exist_ok=True)
        with open(model_path, "w") as out:
            json.dump({"simulated": True, "by": "sedna-sdk", "worker": os.environ.get("WORKER_NAME", ""),
                       "savedAt": time.strftime("%Y-%m-%d %H:%M:%S")}, out)
        return model_path

    def load(self, model_url=None, **kwargs):
        if STEERING.get("fail"):
            raise RuntimeError("the model does not load (steered to fail)")
        with open(model_url) as src:
            self.model = src.read()
        try:  # which worker saved it: tests match a hot update to the round that trained the model
            saved_by = json.loads(self.model).get("worker")
        except (ValueError, AttributeError):
            saved_by = None
        print(f"the estimator loaded a model saved by {saved_by or 'no SDK worker'}", flush=True)

    def evaluate(self, data=None, model_path=None, **kwargs):
        index, self.evaluated = self.evaluated, self.evaluated + 1
        return metrics_at(index, eval_metrics(index))

    def predict(self, data=None, **kwargs):
        return [0.5]

    def get_weights(self):
        return []

    def set_weights(self, weights):
        pass


def fail_if_steered(job, kind):
    if STEERING.get("fail"):
        if STEERING["fail"] == "report":
            job.report_task_info(None, "failed", kind=kind)
        sys.exit(int(STEERING.get("exit_code") or 1))


def il(worker_type):
    from sedna.core.incremental_learning import IncrementalLearning

    if worker_type == "inference":
        IncrementalLearning(estimator=Estimator)  # starts the SDK's ModelLoadingThread
        threading.Event().wait()
    job = IncrementalLearning(estimator=Estimator)
    if worker_type == "train":
        fail_if_steered(job, "train")
        job.train(train_data=[])
    else:
        fail_if_steered(job, "eval")
        job.evaluate(data=[])


def plain_job(kind):
    from sedna.core.base import JobBase

    job = JobBase(estimator=Estimator)
    job.job_kind = kind
    return job


def ll(worker_type):
    job = plain_job("lifelonglearningjob")
    fail_if_steered(job, worker_type)
    index = os.path.join(job.get_parameters("OUTPUT_URL") or "/tmp", "index.pkl")
    FileOps.dump({"simulated": True, "worker": job.worker_name}, index)
    result = metrics_at(0, eval_metrics(0)) if worker_type == "eval" else None
    job.report_task_info(None, "completed", job.estimator.model_info(index, relpath=job.config.data_path_prefix,
                                                                      result=result), kind=worker_type)


def fl():
    job = plain_job("default")  # FederatedLearning never sets its job_kind
    fail_if_steered(job, "train")
    rounds = int(STEERING.get("rounds") or 3)
    model = job.estimator.model_save_path
    for round_number in range(1, rounds + 1):
        start = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        time.sleep(float(STEERING.get("period") or 0.2))
        task_info = {"currentRound": round_number, "sampleCount": 100, "startTime": start,
                     "updateTime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())}
        path = job.estimator.save()
        result = metrics_at(round_number - 1, {"accuracy": [round(min(0.5 + 0.1 * round_number, 0.99), 6)]})
        info = job.estimator.model_info(path or model, result=result, relpath=job.config.data_path_prefix)
        job.report_task_info(task_info, "completed" if round_number == rounds else "running", info)


def ji():
    """``JointInference.__init__``'s reporter (the class itself imports the SDK's inference server: fastapi)."""
    from sedna.service.client import LCReporter

    job = plain_job("jointinferenceservice")
    message = {"name": job.worker_name, "namespace": job.config.namespace, "ownerName": job.job_name,
               "ownerKind": job.job_kind, "kind": "inference", "results": []}
    reporter = LCReporter(lc_server=job.config.lc_server, message=message,
                          period_interval=int(job.get_parameters("LC_PERIOD", "30")))
    reporter.daemon = True
    reporter.start()
    per_period = int(STEERING.get("inferences") or 0)
    hard = int(STEERING.get("hard_examples") or 0)
    while reporter.is_alive():  # the inferences of one period, counted as JointInference.inference counts them
        for i in range(per_period):
            if i < hard:
                reporter.update_for_collaboration_inference()
            else:
                reporter.update_for_edge_inference()
        reporter.join(reporter.period_interval)
    print("the SDK's LCReporter thread is dead: no more reports from this worker", flush=True)
    threading.Event().wait()


def die_with_the_simulator():
    """The pod's container dies with its kubelet here: once the simulator is gone (killed, even with SIGKILL), this
    process is re-parented and exits."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    threading.Thread(target=die_with_the_simulator, name="watchdog", daemon=True).start()
    kind, worker_type = os.environ["WORKERSIM_WORKER"].split("/")
    if kind == "incrementallearningjob":
        il(worker_type)
    elif kind == "lifelonglearningjob":
        ll(worker_type)
    elif kind == "federatedlearningjob":
        fl()
    elif kind == "jointinferenceservice":
        ji()
    else:
        sys.exit(f"no SDK driver for {kind}/{worker_type}")


if __name__ == "__main__":
    main()
