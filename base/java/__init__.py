"""Java semantics in one place: what a faithful re-implementation of Pulsar, RocketMQ or Storm needs to decide
exactly as the JVM does. Everything is exported flat (``from clusteremu.base.java import java_order, int_add``).

* :mod:`.lang` — ``java.lang``: ``int``/``long`` wrap-around, casts and division, ``double`` division by zero,
  ``Math.max``/``min``/``sqrt``, the strict ``max(double...)`` loop, ``String.hashCode``/``compareTo``/
  ``equalsIgnoreCase``, ``Double.compare``;
* :mod:`.floats` — ``float`` (float32) arithmetic: the ``(float)`` cast, ``/`` and ``*``, the ``max(float...)`` loop;
* :mod:`.text` — ``String.format("%.nf")`` (HALF_UP), ``Double.toString`` and Jackson's JSON doubles (``"NaN"``,
  ``"Infinity"``);
* :mod:`.collections` — ``HashMap``/``HashSet``/``ConcurrentHashMap`` iteration orders for string keys, and the
  hash spreading and table sizing behind them for keys of other types;
* :mod:`.commons` — Apache commons-lang3's ``StringUtils.isEmpty``/``isBlank``.
"""
from __future__ import annotations

from .collections import (
    JavaHashMapOrder,
    MapKind,
    capacity_after_puts,
    capacity_copy_collection,
    capacity_putall_into_empty,
    hash_order,
    hash_set_order,
    hash_spread,
    java_list_sort,
    java_order,
    table_size_for,
)
from .commons import is_blank, is_empty
from .floats import float_divide, float_multiply, strict_max_float, to_float
from .lang import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    double_compare_key,
    double_divide,
    double_to_int,
    double_to_long,
    equals_ignore_case,
    int_add,
    int_sub,
    is_whitespace,
    long_divide,
    math_max,
    math_min,
    math_sqrt,
    strict_max,
    string_compare_key,
    string_compare_to,
    string_hash_code,
    string_split,
    to_int,
    utf8_bytes,
)
from .text import JACKSON_SPECIAL_DOUBLES, double_to_string, format_fixed, jackson_double_in, jackson_double_out

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "JACKSON_SPECIAL_DOUBLES",
    "JavaHashMapOrder",
    "LONG_MAX",
    "LONG_MIN",
    "MapKind",
    "capacity_after_puts",
    "capacity_copy_collection",
    "capacity_putall_into_empty",
    "double_compare_key",
    "double_divide",
    "double_to_string",
    "double_to_int",
    "double_to_long",
    "equals_ignore_case",
    "float_divide",
    "float_multiply",
    "format_fixed",
    "hash_order",
    "hash_set_order",
    "hash_spread",
    "int_add",
    "int_sub",
    "is_blank",
    "is_empty",
    "is_whitespace",
    "jackson_double_in",
    "jackson_double_out",
    "java_list_sort",
    "java_order",
    "long_divide",
    "math_max",
    "math_min",
    "math_sqrt",
    "strict_max",
    "strict_max_float",
    "string_compare_key",
    "string_compare_to",
    "string_hash_code",
    "string_split",
    "table_size_for",
    "to_float",
    "to_int",
    "utf8_bytes",
]
