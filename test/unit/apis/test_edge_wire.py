"""apis.edge: the frames exactly as Go Sedna's ``model.Message`` marshals and unmarshals them."""

from __future__ import annotations

import base64
import json

import pytest

from apis.edge import (
    Frame,
    FrameError,
    Header,
    decode_frame,
    encode_frame,
    hello_frame,
    is_legacy_hello,
    object_frame,
    parse_features,
)


def go_frame(header: dict, content: bytes | None) -> str:
    """What Go's ``json.Marshal(&Message{...})`` writes: ``[]byte`` as standard base64, nil as null."""
    return json.dumps({"header": header, "content": base64.b64encode(content).decode() if content is not None else None})


def test_decodes_a_go_status_frame_and_lowercase_is_left_to_the_caller():
    text = go_frame({"namespace": "default", "resourceKind": "Dataset", "resourceName": "d1", "operation": "status"},
                    b'{"numberOfSamples":12}')
    frame = decode_frame(text)
    assert frame.header == Header("default", "Dataset", "d1", "status")
    assert frame.json() == {"numberOfSamples": 12}


def test_encodes_like_go_and_go_can_read_it_back():
    obj = {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"namespace": "ns", "name": "d"}}
    wire = json.loads(encode_frame(object_frame("insert", obj)))
    assert wire["header"] == {"namespace": "ns", "resourceKind": "dataset", "resourceName": "d", "operation": "insert"}
    assert json.loads(base64.b64decode(wire["content"], validate=True)) == obj


def test_id_travels_as_an_extra_header_field_only_when_set():
    plain = json.loads(encode_frame(Frame(Header("ns", "dataset", "d", "status"), b"{}")))
    assert "id" not in plain["header"]
    with_id = json.loads(encode_frame(Frame(Header("ns", "dataset", "d", "status", "e1-7"), b"{}")))
    assert with_id["header"]["id"] == "e1-7"
    assert decode_frame(json.dumps(with_id)).header.id == "e1-7"


def test_go_lc_greeting_is_a_bare_empty_header():
    greeting = json.dumps({"namespace": "", "resourceKind": "", "resourceName": "", "operation": ""})
    frame = decode_frame(greeting)
    assert is_legacy_hello(frame)
    assert not is_legacy_hello(decode_frame(go_frame({"operation": "status"}, None)))


def test_null_content_is_empty_and_unknown_fields_are_ignored():
    frame = decode_frame(json.dumps({"header": {"operation": "delete", "x": 1}, "content": None, "extra": True}))
    assert frame.content == b"" and frame.json() is None and frame.header.operation == "delete"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("not json", "not_json"),
        ("[1, 2]", "bad_shape"),
        ('{"header": "x"}', "bad_shape"),
        ('{"header": {"operation": 5}}', "bad_shape"),
        ('{"header": {}, "content": 12}', "bad_shape"),
        ('{"header": {}, "content": "***"}', "bad_base64"),
    ],
)
def test_malformed_frames_name_their_reason(data, reason):
    with pytest.raises(FrameError) as info:
        decode_frame(data)
    assert info.value.reason == reason


def test_content_that_is_not_json_is_bad_content():
    frame = decode_frame(go_frame({"operation": "status"}, b"{oops"))
    with pytest.raises(FrameError) as info:
        frame.json()
    assert info.value.reason == "bad_content"


def test_hello_round_trip_and_malformed_hello():
    assert parse_features(decode_frame(encode_frame(hello_frame(["ack", "resync"])))) == ["ack", "resync"]
    with pytest.raises(FrameError):
        parse_features(decode_frame(go_frame({"operation": "hello"}, b'{"features": "ack"}')))
