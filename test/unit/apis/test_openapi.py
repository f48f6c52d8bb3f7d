"""apis.openapi: pruning, defaulting and validation of custom resources against structural schemas."""

from __future__ import annotations

import copy

import pytest

from apis import openapi

OPERATORS = [">=", ">", "=", "==", "<=", "<", "!=", "ge", "gt", "eq", "le", "lt", "ne"]

SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["trainSpec"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "minimum": 0, "exclusiveMaximum": True, "maximum": 1},
                "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 8},
                "enabled": {"type": "boolean"},
                "port": {"x-kubernetes-int-or-string": True},
                "started": {"type": "string", "format": "date-time"},
                "note": {"type": "string", "nullable": True},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                },
                "trainSpec": {
                    "type": "object",
                    "required": ["trigger"],
                    "properties": {
                        "trigger": {
                            "type": "object",
                            "properties": {
                                "checkPeriodSeconds": {"type": "integer", "default": 60, "minimum": 1},
                                "condition": {
                                    "type": "object",
                                    "required": ["operator"],
                                    "properties": {
                                        "operator": {"type": "string", "enum": OPERATORS},
                                        "threshold": {"type": "number"},
                                        "metric": {"type": "string", "default": "num_of_samples"},
                                    },
                                },
                            },
                        }
                    },
                },
            },
        },
    },
}


def _obj(**spec):
    base = {"trainSpec": {"trigger": {"condition": {"operator": ">", "threshold": 500, "metric": "n"}}}}
    base.update(spec)
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob", "metadata": {"name": "j"}, "spec": base}


def _fields(causes):
    return [(c["type"], c["field"]) for c in causes]


# --------------------------------------------------------------------------------------------- prune


def test_prune_drops_unknown_fields_and_reports_paths():
    obj = _obj(bogus=1, labels={"a": "b"})
    obj["spec"]["trainSpec"]["trigger"]["condition"]["extra"] = True
    obj["status"] = {"x": 1}
    pruned: list[str] = []
    openapi.prune(SCHEMA, obj, pruned=pruned)
    assert "bogus" not in obj["spec"]
    assert "extra" not in obj["spec"]["trainSpec"]["trigger"]["condition"]
    assert "status" not in obj
    assert obj["spec"]["labels"] == {"a": "b"}
    assert sorted(pruned) == ["spec.bogus", "spec.trainSpec.trigger.condition.extra", "status"]


def test_prune_keeps_root_resource_fields_even_without_properties():
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {}, "x": 1}
    openapi.prune(schema, obj)
    assert obj == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {}}
    openapi.prune(SCHEMA, obj)  # a metadata schema at the root does not prune ObjectMeta
    assert obj == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {}}


def test_prune_does_not_keep_resource_fields_below_root_unless_embedded():
    obj = _obj(embedded={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1, "y": 2}, "z": 3})
    obj["spec"]["kind"] = "nope"
    openapi.prune(SCHEMA, obj)
    assert obj["spec"]["embedded"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}
    assert "kind" not in obj["spec"]


def test_prune_preserve_unknown_fields_keeps_everything():
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    obj = _obj(template=copy.deepcopy(template))
    openapi.prune(SCHEMA, obj)
    assert obj["spec"]["template"] == template


def test_prune_preserve_with_properties_recurses_into_known_ones():
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    obj = {"free": {"x": 1}, "known": {"a": "x", "b": "y"}}
    openapi.prune(schema, obj)
    assert obj == {"free": {"x": 1}, "known": {"a": "x"}}


def test_prune_additional_properties_schema_and_bool():
    schema = {
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "integer"}}}},
            "t": {"type": "object", "additionalProperties": True},
        },
    }
    obj = {"m": {"k": {"a": 1, "b": 2}}, "t": {"anything": [1]}, "x": 1}
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert obj == {"m": {"k": {"a": 1}}, "t": {"anything": [1]}}
    assert pruned == ["m.k.b", "x"]


def test_prune_array_items():
    schema = {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}
    obj = [{"a": "x", "b": 1}, {"c": 2}]
    openapi.prune(schema, obj)
    assert obj == [{"a": "x"}, {}]


# ------------------------------------------------------------------------------------------- defaults


def test_defaults_fill_missing_fields_recursively():
    obj = _obj()
    del obj["spec"]["trainSpec"]["trigger"]["condition"]["metric"]
    openapi.apply_defaults(SCHEMA, obj)
    trigger = obj["spec"]["trainSpec"]["trigger"]
    assert trigger["checkPeriodSeconds"] == 60
    assert trigger["condition"]["metric"] == "num_of_samples"


def test_defaults_do_not_override_and_are_copied():
    schema = {"type": "object", "properties": {"a": {"type": "object", "default": {"x": [1]}}, "b": {"type": "integer", "default": 1}}}
    one, two = {"b": 5}, {}
    openapi.apply_defaults(schema, one)
    openapi.apply_defaults(schema, two)
    assert one == {"a": {"x": [1]}, "b": 5}
    one["a"]["x"].append(2)
    assert two["a"] == {"x": [1]}
    assert schema["properties"]["a"]["default"] == {"x": [1]}


def test_defaults_apply_inside_a_default_value():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "default": {}, "properties": {"b": {"type": "integer", "default": 7}}}},
    }
    obj: dict = {}
    openapi.apply_defaults(schema, obj)
    assert obj == {"a": {"b": 7}}


def test_defaults_handle_nulls_like_the_api_server():
    schema = {
        "type": "object",
        "properties": {
            "withDefault": {"type": "integer", "default": 3},
            "plain": {"type": "string"},
            "nullable": {"type": "string", "nullable": True, "default": "d"},
        },
    }
    obj = {"withDefault": None, "plain": None, "nullable": None}
    openapi.apply_defaults(schema, obj)
    assert obj == {"withDefault": 3, "nullable": None}


def test_defaults_in_arrays_and_additional_properties():
    item = {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}}
    schema = {"type": "object", "properties": {"l": {"type": "array", "items": item}, "m": {"type": "object", "additionalProperties": item}}}
    obj = {"l": [{}, {"n": 2}], "m": {"k": {}}}
    openapi.apply_defaults(schema, obj)
    assert obj == {"l": [{"n": 0}, {"n": 2}], "m": {"k": {"n": 0}}}


# ------------------------------------------------------------------------------------------ validation


def test_valid_object_has_no_causes():
    obj = _obj(
        replicas=3, ratio=0.5, name="abc", enabled=True, port="http", started="2026-01-02T03:04:05Z", note=None,
        tags=["a"], labels={"k": "v"}, template={"x": None},
    )
    assert openapi.validate(SCHEMA, obj) == []
    assert openapi.validate(SCHEMA, _obj(port=8080, ratio=0)) == []


def test_required_value():
    obj = _obj()
    del obj["spec"]["trainSpec"]["trigger"]["condition"]["operator"]
    del obj["spec"]["trainSpec"]["trigger"]["condition"]["threshold"]
    assert openapi.validate(SCHEMA, obj) == [
        {"type": "FieldValueRequired", "message": "Required value", "field": "spec.trainSpec.trigger.condition.operator"}
    ]


def test_enum_unsupported_value():
    obj = _obj()
    obj["spec"]["trainSpec"]["trigger"]["condition"]["operator"] = "~"
    [c] = openapi.validate(SCHEMA, obj)
    assert c["type"] == "FieldValueNotSupported"
    assert c["field"] == "spec.trainSpec.trigger.condition.operator"
    assert c["message"] == 'Unsupported value: "~": supported values: ' + ", ".join(f'"{o}"' for o in OPERATORS)


@pytest.mark.parametrize(
    "field, value, expected, actual",
    [
        ("replicas", "string", "integer", "string"),
        ("replicas", 1.5, "integer", "number"),
        ("replicas", True, "integer", "boolean"),
        ("ratio", "x", "number", "string"),
        ("name", 5, "string", "integer"),
        ("enabled", "true", "boolean", "string"),
        ("tags", "a", "array", "string"),
        ("labels", ["a"], "object", "array"),
        ("name", None, "string", "null"),
        ("port", 1.5, "integer,string", "number"),
    ],
)
def test_type_invalid(field, value, expected, actual):
    [c] = openapi.validate(SCHEMA, _obj(**{field: value}))
    assert c == {
        "type": "FieldValueTypeInvalid",
        "field": f"spec.{field}",
        "message": f'Invalid value: "{actual}": spec.{field} in body must be of type {expected}: "{actual}"',
    }


def test_integer_accepts_integral_float_and_number_accepts_int():
    assert openapi.validate(SCHEMA, _obj(replicas=2.0, ratio=0)) == []


def test_minimum_maximum_and_exclusive():
    causes = openapi.validate(SCHEMA, _obj(replicas=0))
    assert causes == [
        {"type": "FieldValueInvalid", "field": "spec.replicas",
         "message": "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"}
    ]
    [c] = openapi.validate(SCHEMA, _obj(replicas=11))
    assert c["message"].endswith("should be less than or equal to 10")
    [c] = openapi.validate(SCHEMA, _obj(ratio=1))
    assert c["message"] == "Invalid value: 1: spec.ratio in body should be less than 1"
    [c] = openapi.validate(SCHEMA, _obj(ratio=-0.5))
    assert c["message"] == "Invalid value: -0.5: spec.ratio in body should be greater than or equal to 0"
    schema = {"type": "integer", "minimum": 0, "exclusiveMinimum": True}
    assert openapi.validate(schema, 0, "x")[0]["message"] == "Invalid value: 0: x in body should be greater than 0"


def test_string_pattern_and_lengths():
    [c] = openapi.validate(SCHEMA, _obj(name="ABC"))
    assert c == {"type": "FieldValueInvalid", "field": "spec.name",
                 "message": "Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"}
    [c] = openapi.validate(SCHEMA, _obj(name="abcdefghij"))
    assert c == {"type": "FieldValueTooLong", "field": "spec.name", "message": "Too long: may not be more than 8 bytes"}
    [c] = openapi.validate(SCHEMA, _obj(name="a"))
    assert c["message"] == 'Invalid value: "a": spec.name in body should be at least 2 chars long'


def test_array_items_min_and_max():
    [c] = openapi.validate(SCHEMA, _obj(tags=[]))
    assert c["type"] == "FieldValueInvalid" and c["message"].endswith("spec.tags in body should have at least 1 items")
    [c] = openapi.validate(SCHEMA, _obj(tags=["a", "b", "c"]))
    assert c == {"type": "FieldValueTooMany", "field": "spec.tags", "message": "Too many: 3: must have at most 2 items"}
    [c] = openapi.validate(SCHEMA, _obj(tags=["a", 1]))
    assert c["field"] == "spec.tags[1]" and c["type"] == "FieldValueTypeInvalid"


def test_additional_properties_schema_validates_values():
    [c] = openapi.validate(SCHEMA, _obj(labels={"k": 1}))
    assert c["field"] == "spec.labels.k" and c["type"] == "FieldValueTypeInvalid"


def test_additional_properties_false_rejects_unknown_keys():
    schema = {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "integer"}}}
    [c] = openapi.validate(schema, {"a": 1, "b": 2}, "spec")
    assert c == {"type": "FieldValueInvalid", "field": "spec",
                 "message": 'Invalid value: "b": spec.b in body is a forbidden property'}


def test_nullable_and_preserved_nulls():
    assert openapi.validate(SCHEMA, _obj(note=None)) == []
    assert openapi.validate({"x-kubernetes-preserve-unknown-fields": True}, None) == []


def test_date_time_format_is_checked_like_strfmt():
    for ok in ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123456+02:00", "2026-01-02t03:04:05z"):
        assert openapi.validate(SCHEMA, _obj(started=ok)) == [], ok
    [c] = openapi.validate(SCHEMA, _obj(started="yesterday"))
    assert c["type"] == "FieldValueTypeInvalid"
    assert c["message"] == 'Invalid value: "yesterday": spec.started in body must be of type date-time: "yesterday"'


def test_preserve_unknown_fields_accepts_any_content():
    assert openapi.validate(SCHEMA, _obj(template={"a": [1, {"b": None}], "c": "d"})) == []


def test_many_causes_are_all_reported():
    obj = _obj(replicas="x", name="BAD")
    del obj["spec"]["trainSpec"]
    assert sorted(_fields(openapi.validate(SCHEMA, obj))) == [
        ("FieldValueInvalid", "spec.name"),
        ("FieldValueRequired", "spec.trainSpec"),
        ("FieldValueTypeInvalid", "spec.replicas"),
    ]


def test_combinators():
    schema = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert openapi.validate(schema, 1) == [] and openapi.validate(schema, "a") == []
    c, detail = openapi.validate(schema, [1], "f")
    assert c == {"type": "FieldValueInvalid", "field": "<nil>",
                 "message": 'Invalid value: "": "f" must validate at least one schema (anyOf)'}
    assert detail["field"] == "f" and detail["type"] == "FieldValueTypeInvalid"
    one = {"oneOf": [{"type": "integer"}, {"minimum": 0}]}
    assert openapi.validate(one, -1) == []
    assert openapi.validate(one, 1)[0]["message"].endswith("must validate one and only one schema (oneOf). Found 2 valid alternatives")
    assert openapi.validate({"not": {"type": "string"}}, "a")


def test_validate_then_defaults_pipeline_on_the_same_object():
    obj = _obj(bogus=True)
    del obj["spec"]["trainSpec"]["trigger"]["condition"]["metric"]
    openapi.prune(SCHEMA, obj)
    openapi.apply_defaults(SCHEMA, obj)
    assert openapi.validate(SCHEMA, obj) == []
    assert obj["spec"]["trainSpec"]["trigger"] == {
        "checkPeriodSeconds": 60, "condition": {"operator": ">", "threshold": 500, "metric": "num_of_samples"}
    }


def test_schema_is_not_modified():
    snapshot = copy.deepcopy(SCHEMA)
    obj = _obj(bogus=1)
    openapi.prune(SCHEMA, obj)
    openapi.apply_defaults(SCHEMA, obj)
    openapi.validate(SCHEMA, obj)
    assert SCHEMA == snapshot
