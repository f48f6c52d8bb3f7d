"""Subresources that are views of their object rather than parts of it: ``scale`` (``pods/log`` is ``podlogs``).

``scale`` (autoscaling/v1 ``Scale``) on Deployments, ReplicaSets and custom resources whose CRD declares a scale
subresource: GET reads ``spec.replicas``, ``status.replicas`` and the label selector; PUT and PATCH (merge, JSON,
strategic, apply) change the object's ``spec.replicas`` only, with the Scale's resourceVersion as precondition
(409 on a stale one), ``spec.replicas`` ≥ 0 (422 otherwise), as kube-apiserver's scale REST does.

"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.errors import ApiError, BadRequestError, new_invalid, new_not_found
from apis.fake.tracker.patch import decode_patch, json_patch, merge_patch, strategic_merge_patch
from apis.resources import CUSTOM_RESOURCE_DEFINITIONS, GroupVersionResource

from .endpoints import PATCH_TYPES, Headers, Response
from .options import dry_run
from .request import ResourceRequest, media_type, parse_json, parse_yaml

if TYPE_CHECKING:  # context.py imports the endpoints through eventsv1
    from .context import ServedTracker, ServingContext

__all__ = ["SERVED", "serve"]

SERVED = ("scale",)
SCALE_API_VERSION = "autoscaling/v1"


def serve(
    sandbox: ServingContext, method: str, req: ResourceRequest, query: dict[str, list[str]], body: bytes, headers: Headers
) -> Response:
    """Answer a request for a ``SERVED`` subresource of one object."""
    return _Scale(sandbox.tracker, req).serve(method, query, body, headers)


class _Scale:
    def __init__(self, tracker: ServedTracker, req: ResourceRequest) -> None:
        self.tracker, self.req = tracker, req
        self.paths = _scale_paths(tracker, req.gvr)

    def serve(self, method: str, query: dict[str, list[str]], body: bytes, headers: Headers) -> Response:
        req = self.req
        obj = self.tracker.get(req.gvr, req.namespace, req.name)
        current = self._scale_of(obj)
        if method in ("GET", "HEAD"):
            return Response(200, current)
        if method == "PUT":
            dry = dry_run(query.get("dryRun"), "UpdateOptions")
            wanted = self._decode(body, headers)
        elif method == "PATCH":
            dry = dry_run(query.get("dryRun"), "PatchOptions")
            wanted = self._patched(current, body, headers)
        else:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        return Response(200, self._write(obj, wanted, dry))

    def _scale_of(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        spec_path, status_path, selector_path = self.paths
        md = obj.get("metadata") or {}
        status: dict[str, Any] = {"replicas": _int(_get(obj, status_path))}
        selector = _get(obj, selector_path) if selector_path else None
        if selector_path is None:  # a built-in kind: its spec.selector, printed
            try:
                selector = str(meta.selector_from_label_selector((obj.get("spec") or {}).get("selector") or {}))
            except ValueError:
                selector = None
        if isinstance(selector, str) and selector:
            status["selector"] = selector
        replicas = _get(obj, spec_path)
        return {
            "kind": "Scale",
            "apiVersion": SCALE_API_VERSION,
            "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md},
            "spec": {"replicas": replicas if isinstance(replicas, int) else (1 if selector_path is None else 0)},
            "status": status,
        }

    def _decode(self, body: bytes, headers: Headers) -> dict[str, Any]:
        if not body.strip():
            raise BadRequestError("the request body is empty: expected a Scale object")
        media = media_type(headers.get("Content-Type"))
        scale = parse_yaml(body) if media in ("application/yaml", "application/x-yaml", "text/yaml") else parse_json(body)
        if not isinstance(scale, dict):
            raise BadRequestError("the request body must be a Scale object")
        return scale

    def _patched(self, current: dict[str, Any], body: bytes, headers: Headers) -> dict[str, Any]:
        patch_type = PATCH_TYPES.get(media_type(headers.get("Content-Type")))
        if patch_type is None:
            raise ApiError(
                415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types "
                "include: " + ", ".join(PATCH_TYPES)
            )
        doc = decode_patch(body, patch_type)
        if patch_type == "json":
            patched = json_patch(current, doc)
        elif patch_type == "strategic":
            patched = strategic_merge_patch(current, doc)
        elif isinstance(doc, dict):
            patched = merge_patch(current, doc)
        else:
            raise BadRequestError("a merge patch must be a JSON object")
        if not isinstance(patched, dict):
            raise BadRequestError("the patched object is not a JSON object")
        return patched

    def _write(self, obj: dict[str, Any], scale: Mapping[str, Any], dry: bool) -> dict[str, Any]:
        req = self.req
        if scale.get("kind") not in (None, "", "Scale"):
            raise BadRequestError(f"the kind in the data ({scale.get('kind')}) does not match the expected kind (Scale)")
        md = found if isinstance(found := scale.get("metadata"), dict) else {}
        if md.get("name") and md["name"] != req.name:
            raise BadRequestError(f"the name of the object ({md['name']}) does not match the name on the URL ({req.name})")
        replicas = spec.get("replicas") if isinstance(spec := scale.get("spec"), dict) else None
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            shown = replicas if isinstance(replicas, int) else 0
            cause = {"type": "FieldValueInvalid", "field": "spec.replicas",
                     "message": f"Invalid value: {shown}: must be greater than or equal to 0"}
            raise new_invalid("Scale", req.name, [cause], "autoscaling")
        updated = meta.deep_copy(obj)
        _set(updated, self.paths[0], replicas)
        updated["metadata"]["resourceVersion"] = md.get("resourceVersion") or meta.resource_version(obj)
        stored = self.tracker.update(req.gvr, updated, req.namespace, dry_run=dry)
        return self._scale_of(stored)


def _scale_paths(tracker: ServedTracker, gvr: GroupVersionResource) -> tuple[str, str, str | None]:
    """(specReplicasPath, statusReplicasPath, labelSelectorPath) of the resource; None selector path for built-ins."""
    if gvr.group in ("apps", "extensions"):
        return ".spec.replicas", ".status.replicas", None
    try:
        crd = tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{gvr.resource}.{gvr.group}")
    except ApiError:
        raise new_not_found(f"{gvr.resource}/scale", "", gvr.group) from None
    spec = crd.get("spec") or {}
    for version in spec.get("versions") or []:
        if version.get("name") == gvr.version:
            scale = ((version.get("subresources") or spec.get("subresources") or {}).get("scale")) or {}
            return (scale.get("specReplicasPath") or ".spec.replicas", scale.get("statusReplicasPath") or ".status.replicas",
                    scale.get("labelSelectorPath") or "")
    raise new_not_found(f"{gvr.resource}/scale", "", gvr.group)


def _parts(path: str) -> list[str]:
    return [p for p in path.split(".") if p]


def _get(obj: Mapping[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in _parts(path):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
    return cur


def _set(obj: dict[str, Any], path: str, value: object) -> None:
    parts = _parts(path)
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[parts[-1]] = value


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
