"""GroupVersionResource / GroupVersionKind and the registry of the kinds this project talks to."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = [
    "GroupVersionResource",
    "GroupVersionKind",
    "ResourceInfo",
    "register",
    "lookup",
    "lookup_kind",
    "all_resources",
    "PODS",
    "NODES",
    "SERVICES",
    "SECRETS",
    "CONFIG_MAPS",
    "CONFIGMAPS",
    "EVENTS",
    "NAMESPACES",
    "DEPLOYMENTS",
    "REPLICA_SETS",
    "JOBS",
    "CRON_JOBS",
    "EVENTS_V1",
    "LEASES",
    "HORIZONTAL_POD_AUTOSCALERS",
    "CUSTOM_RESOURCE_DEFINITIONS",
    "SERVICE_ACCOUNTS",
    "DAEMON_SETS",
    "RBAC_GROUP",
    "ROLES",
    "ROLE_BINDINGS",
    "CLUSTER_ROLES",
    "CLUSTER_ROLE_BINDINGS",
    "SELF_SUBJECT_ACCESS_REVIEWS",
    "SUBJECT_ACCESS_REVIEWS",
    "SELF_SUBJECT_REVIEWS",
    "SEDNA_GROUP",
    "SEDNA_VERSION",
    "DATASETS",
    "MODELS",
    "JOINT_INFERENCE_SERVICES",
    "FEDERATED_LEARNING_JOBS",
    "INCREMENTAL_LEARNING_JOBS",
    "LIFELONG_LEARNING_JOBS",
    "FEATURE_EXTRACTION_SERVICES",
    "OBJECT_SEARCH_SERVICES",
    "OBJECT_TRACKING_SERVICES",
    "REID_JOBS",
    "VIDEO_ANALYTICS_JOBS",
    "ELASTICDL_GROUP",
    "ELASTIC_AI_JOBS",
]


@dataclass(frozen=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``resource.group`` (just ``resource`` for the core group), as error messages spell it."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def __str__(self) -> str:
        return f"{self.api_version}/{self.resource}"


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True)
class ResourceInfo:
    """What a client needs to know about a resource to build URLs and objects."""

    gvr: GroupVersionResource
    kind: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # e.g. ("status",)
    verbs: tuple[str, ...] = field(
        default=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    )

    @property
    def gvk(self) -> GroupVersionKind:
        return GroupVersionKind(self.gvr.group, self.gvr.version, self.kind)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


_lock = threading.Lock()
_by_gvr: dict[GroupVersionResource, ResourceInfo] = {}
_by_gvk: dict[GroupVersionKind, ResourceInfo] = {}


def register(info: ResourceInfo) -> ResourceInfo:
    """Add (or replace) a resource in the process-wide registry; returns it."""
    with _lock:
        _by_gvr[info.gvr] = info
        _by_gvk[info.gvk] = info
    return info


def unregister(gvr: GroupVersionResource) -> None:
    """Remove a resource from the process-wide registry (one only a CRD made known, once nothing serves it)."""
    with _lock:
        info = _by_gvr.pop(gvr, None)
        if info is not None and _by_gvk.get(info.gvk) is info:
            del _by_gvk[info.gvk]


def lookup(gvr: GroupVersionResource) -> ResourceInfo:
    """The registered info for ``gvr``; raises ``KeyError`` naming it when unknown."""
    try:
        return _by_gvr[gvr]
    except KeyError:
        raise KeyError(f"unknown resource {gvr}: not registered in apis.resources") from None


def lookup_kind(api_version: str, kind: str) -> ResourceInfo:
    group, _, version = api_version.rpartition("/")
    try:
        return _by_gvk[GroupVersionKind(group, version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}: not registered in apis.resources") from None


def all_resources() -> list[ResourceInfo]:
    with _lock:
        return list(_by_gvr.values())


def _r(group: str, version: str, resource: str, kind: str, namespaced: bool = True, **kw: object) -> GroupVersionResource:
    singular = kw.pop("singular", None) or kind.lower()
    register(ResourceInfo(GroupVersionResource(group, version, resource), kind, namespaced, singular, **kw))  # type: ignore[arg-type]
    return GroupVersionResource(group, version, resource)


PODS = _r("", "v1", "pods", "Pod", short_names=("po",), subresources=("status", "log"))
NODES = _r("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), subresources=("status",))
SERVICES = _r("", "v1", "services", "Service", short_names=("svc",), subresources=("status",))
SECRETS = _r("", "v1", "secrets", "Secret")
CONFIG_MAPS = _r("", "v1", "configmaps", "ConfigMap", short_names=("cm",))
CONFIGMAPS = CONFIG_MAPS  # former name; every constant is named after its accessor (``config_maps()``)
EVENTS = _r("", "v1", "events", "Event", short_names=("ev",))
NAMESPACES = _r("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",), subresources=("status",))
DEPLOYMENTS = _r("apps", "v1", "deployments", "Deployment", short_names=("deploy",), subresources=("status", "scale"))
REPLICA_SETS = _r("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",), subresources=("status", "scale"))
JOBS = _r("batch", "v1", "jobs", "Job", subresources=("status",))
CRON_JOBS = _r("batch", "v1", "cronjobs", "CronJob", short_names=("cj",), subresources=("status",))
# events.k8s.io/v1 Events: the same objects as core/v1 Events, in another shape (the sandbox converts between them)
EVENTS_V1 = _r("events.k8s.io", "v1", "events", "Event", short_names=("ev",))
LEASES = _r("coordination.k8s.io", "v1", "leases", "Lease")
HORIZONTAL_POD_AUTOSCALERS = _r(
    "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short_names=("hpa",), subresources=("status",)
)
CUSTOM_RESOURCE_DEFINITIONS = _r(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    namespaced=False,
    short_names=("crd", "crds"),
    subresources=("status",),
)

SERVICE_ACCOUNTS = _r("", "v1", "serviceaccounts", "ServiceAccount", short_names=("sa",), subresources=("token",))
DAEMON_SETS = _r("apps", "v1", "daemonsets", "DaemonSet", short_names=("ds",), subresources=("status",))
RBAC_GROUP = "rbac.authorization.k8s.io"
ROLES = _r(RBAC_GROUP, "v1", "roles", "Role")
ROLE_BINDINGS = _r(RBAC_GROUP, "v1", "rolebindings", "RoleBinding")
CLUSTER_ROLES = _r(RBAC_GROUP, "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTER_ROLE_BINDINGS = _r(RBAC_GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False)
# Reviews are asked, never stored: create is their only verb (the sandbox answers them in apiserver/rbac).
SELF_SUBJECT_ACCESS_REVIEWS = _r(
    "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", namespaced=False,
    verbs=("create",),
)
SUBJECT_ACCESS_REVIEWS = _r(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False, verbs=("create",)
)
SELF_SUBJECT_REVIEWS = _r(
    "authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", namespaced=False, verbs=("create",)
)

SEDNA_GROUP = "sedna.io"
SEDNA_VERSION = "v1alpha1"


def _sedna(resource: str, kind: str, short_names: tuple[str, ...] = ()) -> GroupVersionResource:
    return _r(SEDNA_GROUP, SEDNA_VERSION, resource, kind, short_names=short_names, subresources=("status",))


DATASETS = _sedna("datasets", "Dataset", ("dset",))
MODELS = _sedna("models", "Model", ("mdl",))
JOINT_INFERENCE_SERVICES = _sedna("jointinferenceservices", "JointInferenceService", ("ji", "jis", "jointinferenceservice"))
FEDERATED_LEARNING_JOBS = _sedna("federatedlearningjobs", "FederatedLearningJob", ("fl",))
INCREMENTAL_LEARNING_JOBS = _sedna("incrementallearningjobs", "IncrementalLearningJob", ("il", "ij", "incrementaljob"))
LIFELONG_LEARNING_JOBS = _sedna("lifelonglearningjobs", "LifelongLearningJob", ("ll",))
FEATURE_EXTRACTION_SERVICES = _sedna("featureextractionservices", "FeatureExtractionService", ("fe",))
OBJECT_SEARCH_SERVICES = _sedna("objectsearchservices", "ObjectSearchService", ("objs",))
OBJECT_TRACKING_SERVICES = _sedna("objecttrackingservices", "ObjectTrackingService", ("objt",))
REID_JOBS = _sedna("reidjobs", "ReidJob", ("reid",))
VIDEO_ANALYTICS_JOBS = _sedna("videoanalyticsjobs", "VideoAnalyticsJob", ("va",))

ELASTICDL_GROUP = "elasticdl.org"
ELASTIC_AI_JOBS = _r(ELASTICDL_GROUP, "v1alpha1", "elasticaijobs", "ElasticAIJob", short_names=("eaijob",), subresources=("status",))
