"""apis.openapi against kube-apiserver 1.32 behaviour (apiextensions-apiserver pruning/defaulting, kube-openapi
validate, apimachinery field errors): cases where a simpler reading of the OpenAPI spec gives a different answer."""

from __future__ import annotations

import pytest

from apis import openapi

# --------------------------------------------------------------------------------------------- prune


def test_prune_additional_properties_true_keeps_keys_but_empties_nested_objects():
    # StructuralOrBool{Bool: true} with no schema: pruning recurses with a nil schema, which drops every map field.
    schema = {"type": "object", "properties": {"t": {"type": "object", "additionalProperties": True}}}
    obj = {"t": {"scalar": 1, "obj": {"x": 1}, "list": [{"y": 2}, 3]}}
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert obj == {"t": {"scalar": 1, "obj": {}, "list": [{}, 3]}}
    assert pruned == ["t.list[0].y", "t.obj.x"]


def test_prune_additional_properties_false_keeps_scalar_keys_and_validation_forbids_them():
    schema = {"type": "object", "properties": {"f": {"type": "object", "additionalProperties": False}}}
    obj = {"f": {"a": 1, "c": {"a": 1, "apiVersion": "x"}}}
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert obj == {"f": {"a": 1, "c": {}}}
    assert pruned == ["f.c.a", "f.c.apiVersion"]
    causes = openapi.validate(schema, obj)
    assert sorted(c["message"] for c in causes) == [
        'Invalid value: "a": f.a in body is a forbidden property',
        'Invalid value: "c": f.c in body is a forbidden property',
    ]
    assert {c["field"] for c in causes} == {"f"}


def test_prune_paths_of_additional_properties_use_dots_and_are_sorted():
    schema = {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    }}
    obj = {"z": 1, "m": {"k": {"a": 1, "b": 2}}}
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert pruned == ["m.k.b", "z"]


def test_preserve_unknown_fields_propagates_through_array_items():
    # skipPrune recurses into items with skipPrune: unknown fields of array elements are kept too.
    schema = {"type": "object", "properties": {"l": {
        "type": "array", "x-kubernetes-preserve-unknown-fields": True,
        "items": {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}},
    }}}
    obj = {"l": [{"free": 1, "a": {"b": "x", "c": "pruned"}}]}
    openapi.prune(schema, obj)
    assert obj == {"l": [{"free": 1, "a": {"b": "x"}}]}


def test_preserve_unknown_fields_with_additional_properties_still_prunes_values():
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}}
    obj = {"k": {"a": "x", "b": "y"}}
    openapi.prune(schema, obj)
    assert obj == {"k": {"a": "x"}}


def test_root_metadata_keeps_only_object_meta_fields():
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    obj = {
        "apiVersion": "g/v1", "kind": "K", "spec": {},
        "metadata": {
            "name": "n", "labels": {"a": "b"}, "bogus": 1,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "extra": True}],
        },
    }
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert obj["metadata"] == {
        "name": "n", "labels": {"a": "b"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}],
    }
    assert pruned == ["metadata.bogus", "metadata.ownerReferences[0].extra"]


def test_embedded_resource_metadata_is_pruned_to_object_meta():
    schema = {"type": "object", "properties": {"e": {
        "type": "object", "x-kubernetes-embedded-resource": True,
        "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }}}
    obj = {"e": {"apiVersion": "v1", "kind": "Pod", "unspecified": 1,
                 "metadata": {"name": "p", "unspecified": "bar", "creationTimestamp": None}, "spec": {"x": 1, "y": 2}}}
    openapi.prune(schema, obj)
    assert obj == {"e": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}}


# ------------------------------------------------------------------------------------------- defaults


def test_defaults_replace_null_array_items_and_map_values():
    schema = {"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "integer", "default": 5}},
        "m": {"type": "object", "additionalProperties": {"type": "string", "default": "d"}},
    }}
    obj = {"l": [1, None], "m": {"a": None, "b": "x"}}
    openapi.apply_defaults(schema, obj)
    assert obj == {"l": [1, 5], "m": {"a": "d", "b": "x"}}


def test_non_nullable_null_map_values_without_default_are_dropped_but_array_nulls_stay():
    schema = {"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
    }}
    obj = {"l": ["a", None], "m": {"a": None, "b": "x"}}
    openapi.apply_defaults(schema, obj)
    assert obj == {"l": ["a", None], "m": {"b": "x"}}
    [c] = openapi.validate(schema, obj)
    assert c == {"type": "FieldValueTypeInvalid", "field": "l[1]",
                 "message": 'Invalid value: "null": l[1] in body must be of type string: "null"'}


def test_defaults_apply_to_known_properties_under_preserve_unknown_fields():
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"a": {"type": "integer", "default": 1}}}
    obj = {"free": {"b": None}}
    openapi.apply_defaults(schema, obj)
    assert obj == {"free": {"b": None}, "a": 1}


# ------------------------------------------------------------------------------------------ validation


def test_too_long_is_worded_like_apimachinery_1_32():
    [c] = openapi.validate({"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"}, "ABCDE", "spec.s")
    # the string validator stops at the first failing check: no pattern error after TooLong
    assert c == {"type": "FieldValueTooLong", "field": "spec.s", "message": "Too long: may not be more than 3 bytes"}


def test_min_items_and_min_properties_report_the_size_and_duplicates_report_an_empty_value():
    [c] = openapi.validate({"type": "array", "items": {"type": "string"}, "minItems": 2}, ["a"], "spec.l")
    assert c["message"] == "Invalid value: 1: spec.l in body should have at least 2 items"
    [c] = openapi.validate({"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}}, {"a": "b"}, "spec.m")
    assert c == {"type": "FieldValueInvalid", "field": "spec.m",
                 "message": "Invalid value: 1: spec.m in body should have at least 2 properties"}
    [c] = openapi.validate({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", "a"], "spec.l")
    assert c["message"] == 'Invalid value: "": spec.l in body shouldn\'t contain duplicates'


def test_max_properties_is_too_many():
    [c] = openapi.validate({"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
                           {"a": "b", "c": "d"}, "spec.m")
    assert c == {"type": "FieldValueTooMany", "field": "spec.m", "message": "Too many: 2: must have at most 1 items"}


def test_additional_properties_errors_use_dotted_paths():
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    [c] = openapi.validate(schema, {"k": 1}, "spec.labels")
    assert c == {"type": "FieldValueTypeInvalid", "field": "spec.labels.k",
                 "message": 'Invalid value: "integer": spec.labels.k in body must be of type string: "integer"'}


def test_numbers_follow_go_formatting_and_int64_truncation():
    [c] = openapi.validate({"type": "number", "minimum": 1000000}, 0.5, "x")
    assert c["message"] == "Invalid value: 0.5: x in body should be greater than or equal to 1e+06"
    [c] = openapi.validate({"type": "integer", "minimum": 1000000}, 5, "x")
    assert c["message"] == "Invalid value: 5: x in body should be greater than or equal to 1000000"
    [c] = openapi.validate({"type": "number", "maximum": 1}, 12345678.5, "x")
    assert c["message"] == "Invalid value: 1.23456785e+07: x in body should be less than or equal to 1"
    # an integer is compared with int64(minimum): 1 passes minimum 1.5, as in kube-openapi
    assert openapi.validate({"type": "integer", "minimum": 1.5}, 1, "x") == []


def test_number_checks_run_multiple_of_then_minimum_then_maximum():
    schema = {"type": "integer", "multipleOf": 2, "minimum": 10}
    assert [c["message"] for c in openapi.validate(schema, 3, "x")] == [
        "Invalid value: 3: x in body should be a multiple of 2",
        "Invalid value: 3: x in body should be greater than or equal to 10",
    ]


def test_type_error_does_not_stop_the_enum_check():
    schema = {"type": "integer", "enum": [1, 2]}
    causes = openapi.validate(schema, "a", "x")
    assert [c["type"] for c in causes] == ["FieldValueTypeInvalid", "FieldValueNotSupported"]
    assert causes[1]["message"] == 'Unsupported value: "a": supported values: "1", "2"'


def test_enum_with_non_string_values_and_null():
    [c] = openapi.validate({"type": "number", "enum": [1.5, 2]}, 3, "x")
    assert c["message"] == 'Unsupported value: 3: supported values: "1.5", "2"'
    [c] = openapi.validate({"type": "object", "enum": [{"b": 1, "a": "<"}]}, {"a": 1}, "x")
    assert c["message"] == r'Unsupported value: {"a":1}: supported values: "{\"a\":\"\\u003c\",\"b\":1}"'
    # a nullable null is still checked against the enum (reflect.ValueOf(nil) never matches)
    [c] = openapi.validate({"type": "string", "nullable": True, "enum": ["a"]}, None, "x")
    assert c == {"type": "FieldValueNotSupported", "field": "x", "message": 'Unsupported value: null: supported values: "a"'}


def test_formats_supported_by_the_api_server_are_checked_and_others_ignored():
    def errs(fmt, value, typ="string"):
        return openapi.validate({"type": typ, "format": fmt}, value, "x")

    assert errs("date-time", "2026-01-02T03:04:05Z") == []
    assert errs("date-time", "2026-01-02T03:04:05.5+02:00") == []
    for bad in ("2026-01-02", "2026-01-02 03:04:05Z", "2026-02-30T03:04:05Z", "2026-01-02T25:00:00Z"):
        [c] = errs("date-time", bad)
        assert c["message"] == f'Invalid value: "{bad}": x in body must be of type date-time: "{bad}"', bad
    assert errs("date", "2026-01-02") == [] and errs("date", "2026-13-02")
    assert errs("uuid", "123e4567-e89b-12d3-a456-426614174000") == [] and errs("uuid", "nope")
    assert errs("ipv4", "10.0.0.1") == [] and errs("ipv4", "10.0.0.256")
    assert errs("ipv6", "::1") == [] and errs("ipv6", "10.0.0.1")
    assert errs("cidr", "10.0.0.0/8") == [] and errs("cidr", "10.0.0.0")
    assert errs("byte", "aGk=") == [] and errs("byte", "a")
    assert errs("something-custom", "anything") == []
    assert errs("int32", 5, "integer") == []


def test_combinator_errors_are_reported_on_a_nil_field_path():
    schema = {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]}
    causes = openapi.validate(schema, 5, "spec.x")
    assert causes[0] == {"type": "FieldValueInvalid", "field": "<nil>",
                         "message": 'Invalid value: "": "spec.x" must validate at least one schema (anyOf)'}
    assert causes[1]["field"] == "spec.x"  # the closest alternative's own failure follows
    one = {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]}
    [c] = openapi.validate(one, 5, "spec.x")
    assert c["message"] == 'Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives'
    every = {"type": "integer", "allOf": [{"minimum": 10}, {"maximum": 20}]}
    assert [c["message"] for c in openapi.validate(every, 5, "spec.x")] == [
        "Invalid value: 5: spec.x in body should be greater than or equal to 10",
        'Invalid value: "": "spec.x" must validate all the schemas (allOf)',
    ]
    [c] = openapi.validate({"type": "string", "not": {"pattern": "^a"}}, "abc", "spec.x")
    assert c["message"] == 'Invalid value: "": "spec.x" must not validate the schema (not)'


def test_integral_float_is_an_integer_but_a_fraction_is_not():
    assert openapi.validate({"type": "integer"}, 2.0, "x") == []
    [c] = openapi.validate({"type": "integer"}, 2.5, "x")
    assert c["message"] == 'Invalid value: "number": x in body must be of type integer: "number"'


@pytest.mark.parametrize("value", [None, "x"])
def test_int_or_string_accepts_strings_and_rejects_null(value):
    causes = openapi.validate({"x-kubernetes-int-or-string": True}, value, "x")
    if value is None:
        assert causes[0]["message"] == 'Invalid value: "null": x in body must be of type integer,string: "null"'
    else:
        assert causes == []
