"""Java strings (split, UTF-8 bytes, compareTo), commons-lang's isBlank/isEmpty, int subtraction and HashSet order
of items with given hash codes."""
import pytest

from clusteremu.base import java as _java


@pytest.mark.parametrize("text, parts", [
    ("room1@broker-a", ["room1", "broker-a"]),
    ("room1@", ["room1"]),            # trailing empty part dropped
    ("@broker", ["", "broker"]),      # leading empty part kept
    ("@", []),                        # only empty parts: nothing left
    ("", [""]),                       # no match: the input itself
    ("a@b@", ["a", "b"]),
    ("a@@b", ["a", "", "b"]),
    ("plain", ["plain"]),
])
def test_split_on_char_drops_trailing_empty_parts_like_java(text, parts):
    assert _java.string_split(text, "@") == parts


def test_split_on_char_takes_one_character():
    with pytest.raises(ValueError):
        _java.string_split("a@@b", "@@")


@pytest.mark.parametrize("text, blank", [
    (None, True), ("", True), (" ", True), ("\t\n\r\u000b\f", True), ("\u001c\u001f", True),
    ("\u2003", True),                 # em space: a Unicode space separator
    ("\u2028\u2029", True),           # line / paragraph separators
    ("\u00a0", False), ("\u2007", False), ("\u202f", False),  # non-breaking spaces are not whitespace in Java
    ("\u0085", False),                # NEL: whitespace for Python, not for Character.isWhitespace
    ("\x00", False), (" a ", False),
])
def test_is_blank_follows_character_is_whitespace(text, blank):
    assert _java.is_blank(text) is blank


def test_is_empty_is_null_or_zero_length():
    assert _java.is_empty(None) and _java.is_empty("")
    assert not _java.is_empty(" ")


def test_utf8_bytes_pairs_surrogates_and_replaces_lone_ones():
    assert _java.utf8_bytes("é中") == "é中".encode("utf-8")
    assert _java.utf8_bytes("\U0001d11e") == b"\xf0\x9d\x84\x9e"
    assert _java.utf8_bytes("\ud834\udd1e") == b"\xf0\x9d\x84\x9e"  # a pair written as two code points
    assert _java.utf8_bytes("a\ud800b") == b"a?b"


@pytest.mark.parametrize("a, b", [("CID_10", "CID_2"), ("B", "a"), ("a", "ab"), ("\uffff", "\U0001f600"),
                                  ("same", "same"), ("", "x")])
def test_string_compare_to_sign_and_value(a, b):
    result = _java.string_compare_to(a, b)
    ka, kb = _java.string_compare_key(a), _java.string_compare_key(b)
    expected_sign = (ka > kb) - (ka < kb)
    assert (result > 0) - (result < 0) == expected_sign
    assert _java.string_compare_to(b, a) == -result


def test_string_compare_to_returns_java_values():
    assert _java.string_compare_to("CID_10", "CID_2") == ord("1") - ord("2")
    assert _java.string_compare_to("a", "abc") == -2
    # U+FFFF is above the high surrogate that starts an astral character in UTF-16
    assert _java.string_compare_to("\uffff", "\U0001f600") == 0xFFFF - 0xD83D


def test_compare_key_orders_by_utf16_code_units_and_accepts_lone_surrogates():
    words = ["b", "B", "CID_2", "CID_10", "\U0001f600", "\uffff", "é"]
    assert sorted(words, key=_java.string_compare_key) == ["B", "CID_10", "CID_2", "b", "é", "\U0001f600", "\uffff"]
    assert _java.string_compare_key("\ud800") < _java.string_compare_key("\ue000")


def test_string_hash_code_known_values():
    assert _java.string_hash_code("hello") == 99162322
    assert _java.string_hash_code("polygenelubricants") == -2**31  # a well-known Integer.MIN_VALUE hash


def test_int32_sub_wraps():
    assert _java.int_sub(5, 3) == 2
    assert _java.int_sub(-2**31, 1) == 2**31 - 1
    assert _java.int_sub(2**31 - 1, -1) == -2**31


def test_hash_set_order_groups_by_bucket_and_keeps_insertion_order_in_a_bucket():
    # capacity 16: bucket = (h ^ h>>>16) & 15
    assert _java.hash_set_order(["x", "y", "z"], [3, 1, 2]) == ["y", "z", "x"]
    assert _java.hash_set_order(["p", "q"], [17, 1]) == ["p", "q"]  # same bucket 1: insertion order
    # 13 items exceed 12 = 0.75 * 16: the table doubles to 32, so 17 and 1 land in different buckets
    items = list(range(13))
    hashes = [17, 1] + [100 + i for i in range(11)]
    order = _java.hash_set_order(items, hashes)
    assert order.index(1) < order.index(0)
    with pytest.raises(ValueError):
        _java.hash_set_order([1], [])


def test_hash_set_resizes_only_above_three_quarters_full():
    # 12 items fit a table of 16: hash 16 shares bucket 0 with hash 0; a 13th item moves it to bucket 16 of 32
    hashes = list(range(11)) + [16]
    assert _java.hash_set_order(hashes, hashes) == [0, 16] + list(range(1, 11))
    hashes13 = hashes + [11]
    assert _java.hash_set_order(hashes13, hashes13) == list(range(12)) + [16]
