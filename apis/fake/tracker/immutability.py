"""What an update may not change, per kind, as kube-apiserver's ``ValidateXUpdate`` functions say it (1.30–1.32):

- Pod ``spec``: only ``containers[*].image``, ``initContainers[*].image``, ``activeDeadlineSeconds`` (set, or
  lowered), ``tolerations`` (additions; ``tolerationSeconds`` of existing ones), ``schedulingGates`` (removals) and
  ``terminationGracePeriodSeconds`` (to 1 when it was negative) may change; containers may not be added or removed.
  ``spec.nodeName`` is set through binding (``ObjectTracker.bind``), never by an update.
- Service ``spec.clusterIP``/``clusterIPs`` once set (unless the type is or becomes ExternalName).
- Deployment and ReplicaSet ``spec.selector`` (apps/v1); Job ``spec.selector`` and ``spec.template``.
- ConfigMap and Secret ``data``/``binaryData`` (and ``immutable`` itself) once ``immutable: true``.

Comparisons follow ``apiequality.Semantic.DeepEqual``: a null, an empty list and an empty object equal an absent
field. ``validate_update`` returns causes for a 422 Invalid; it never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...resources import ResourceInfo
from .validation import Cause, forbidden, invalid, required

__all__ = ["UPDATABLE_POD_SPEC_FIELDS", "normalized", "validate_update"]

UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
FIELD_IMMUTABLE = "field is immutable"
_MAX_INT32 = 2**31 - 1
_IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"


def normalized(value: object) -> Any:
    """``value`` with nulls, empty lists and empty objects dropped from objects (Go's zero values)."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            item = normalized(item)
            if item is None or item == [] or item == {}:
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def _containers(spec: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    return [dict(c) if isinstance(c, Mapping) else {} for c in spec.get(field) or []]


def _diff(old: object, new: object, path: str, out: list[str]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            _diff(old.get(key), new.get(key), f"{path}.{key}" if path else key, out)
    elif old != new:
        if old is not None:
            out.append(f"- \t{path}: {_show(old)},")
        if new is not None:
            out.append(f"+ \t{path}: {_show(new)},")


def _show(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode()


def _validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_spec, old_spec = normalized(_spec(new)), normalized(_spec(old))
    causes: list[Cause] = []
    for field in ("containers", "initContainers"):
        new_cs, old_cs = _containers(new_spec, field), _containers(old_spec, field)
        if len(new_cs) != len(old_cs):
            return [*causes, forbidden(f"spec.{field}", "pod updates may not add or remove containers")]
        for i, c in enumerate(new_cs):
            image = c.get("image") or ""
            if not image:
                causes.append(required(f"spec.{field}[{i}].image"))
            elif image.strip() != image:
                causes.append(invalid(f"spec.{field}[{i}].image", image, "must not have leading or trailing whitespace"))
    new_ads, old_ads = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new_ads is not None:
        if not 0 <= new_ads <= _MAX_INT32:
            return [*causes, invalid("spec.activeDeadlineSeconds", new_ads, f"must be between 0 and {_MAX_INT32}, inclusive")]
        if old_ads is not None and old_ads < new_ads:
            return [*causes, invalid("spec.activeDeadlineSeconds", new_ads, "must be less than or equal to previous value")]
    elif old_ads is not None:
        causes.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    new_tolerations = new_spec.get("tolerations") or []
    for old_t in old_spec.get("tolerations") or []:
        # an existing toleration must still be there; only its tolerationSeconds may differ
        if not any(normalized({**old_t, "tolerationSeconds": t.get("tolerationSeconds")}) == t for t in new_tolerations):
            causes.append(forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"))
            break
    old_gates = [g.get("name") for g in old_spec.get("schedulingGates") or []]
    for gate in new_spec.get("schedulingGates") or []:
        if gate.get("name") not in old_gates:
            why = f"only deletion is allowed, but found new scheduling gate '{gate.get('name')}'"
            causes.append(forbidden("spec.schedulingGates", why))
    if new_spec == old_spec:
        return causes
    munged = dict(new_spec)
    for field in ("containers", "initContainers"):
        if field in munged:
            olds = _containers(old_spec, field)
            munged[field] = normalized([{**c, "image": olds[i].get("image")} for i, c in enumerate(_containers(munged, field))])
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged.pop(field, None)
        if field in old_spec:
            munged[field] = old_spec[field]
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if old_grace is not None and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    munged = normalized(munged)
    if munged != old_spec:
        lines: list[str] = []
        _diff(old_spec, munged, "", lines)
        detail = "pod updates may not change fields other than " + ",".join(UPDATABLE_POD_SPEC_FIELDS)
        causes.append(forbidden("spec", detail + "\n  core.PodSpec{\n" + "\n".join(lines) + "\n  }\n"))
    return causes


def _selector_text(selector: object) -> str:
    """A LabelSelector as Go's %#v prints it in an immutable-field error."""
    if not isinstance(selector, Mapping):
        return "nil"
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    if labels:
        items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        labels_text = "map[string]string{" + items + "}"
    else:
        labels_text = "map[string]string(nil)"
    if exprs:
        parts = []
        for e in exprs:
            values = e.get("values")
            values_text = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}" if values else "[]string(nil)"
            parts.append(f'v1.LabelSelectorRequirement{{Key:"{e.get("key", "")}", Operator:"{e.get("operator", "")}", Values:{values_text}}}')
        exprs_text = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    else:
        exprs_text = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{exprs_text}}}"


def _immutable(field: str, shown: str) -> Cause:
    return {"type": "FieldValueInvalid", "field": field, "message": f"Invalid value: {shown}: {FIELD_IMMUTABLE}"}


def _validate_selector_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_sel, old_sel = normalized(_spec(new).get("selector")), normalized(_spec(old).get("selector"))
    if (new_sel or None) != (old_sel or None):
        return [_immutable("spec.selector", _selector_text(new_sel))]
    return []


def _validate_job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    causes = _validate_selector_update(new, old)
    new_template, old_template = normalized(_spec(new).get("template")), normalized(_spec(old).get("template"))
    if (new_template or None) != (old_template or None):
        causes.append(_immutable("spec.template", _show(new_template) if new_template else "nil"))
    return causes


def _validate_service_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_spec, old_spec = _spec(new), _spec(old)
    external = "ExternalName"
    old_ip = old_spec.get("clusterIP") or ""
    if new_spec.get("type") == external or old_spec.get("type") == external or not old_ip:
        return []
    new_ips = new_spec.get("clusterIPs") or ([new_spec["clusterIP"]] if new_spec.get("clusterIP") else [])
    if not new_ips:
        return [{"type": "FieldValueRequired", "field": "spec.clusterIPs", "message": "Required value: primary clusterIP can not be unset"}]
    if new_ips[0] != old_ip:
        shown = "[]string{" + ", ".join(f'"{ip}"' for ip in new_ips) + "}"
        return [{"type": "FieldValueInvalid", "field": "spec.clusterIPs[0]", "message": f"Invalid value: {shown}: may not change once set"}]
    return []


def _validate_immutable_data(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    if old.get("immutable") is not True:
        return []
    causes = []
    if new.get("immutable") is not True:
        causes.append(forbidden("immutable", _IMMUTABLE_WHEN_SET))
    for field in ("data", "binaryData"):
        if (normalized(new.get(field)) or None) != (normalized(old.get(field)) or None):
            causes.append(forbidden(field, _IMMUTABLE_WHEN_SET))
    return causes


_RULES: dict[tuple[str, str], Callable[[Mapping[str, Any], Mapping[str, Any]], list[Cause]]] = {
    ("", "pods"): _validate_pod_update,
    ("", "services"): _validate_service_update,
    ("", "configmaps"): _validate_immutable_data,
    ("", "secrets"): _validate_immutable_data,
    ("apps", "deployments"): _validate_selector_update,
    ("apps", "replicasets"): _validate_selector_update,
    ("batch", "jobs"): _validate_job_update,
}


def validate_update(info: ResourceInfo, new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The causes for what ``new`` changes of ``old`` that its kind does not allow (none for other kinds)."""
    rule = _RULES.get((info.gvr.group, info.gvr.resource))
    return rule(new, old) if rule is not None else []
