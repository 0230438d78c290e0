"""Field conversions between CSV cells and record values, as a table of small named
functions that the registry's CSV layouts refer to by name."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from paperpool.files.yamlio import calendar_day


class ConvertError(ValueError):
    """A cell that cannot become a field value; the message says what was expected."""


def _text_in(cell: str):
    cell = cell.strip()
    return cell or None


def _text_out(value) -> str:
    return "" if value is None else str(value)


def _integer_in(cell: str):
    cell = cell.strip()
    if not cell:
        return None
    try:
        return int(cell)
    except ValueError:
        raise ConvertError(f"'{cell}' is not a whole number") from None


def _first_author_in(cell: str):
    cell = cell.strip()
    return [cell] if cell else []


def _first_author_out(value) -> str:
    return value[0] if value else ""


def _unknown_as_null_in(cell: str):
    cell = cell.strip()
    return None if cell in ("", "unknown") else cell


def _unknown_as_null_out(value) -> str:
    return "unknown" if value is None else str(value)


URL_SEPARATOR = " ; "


def _listed(value) -> list:
    """A list field's items, as text; a text (the unknown marker `add` writes, TODO) is one
    item, not its letters (T and O and D and O), and so is any other single value (a
    registry may type the field otherwise than the CSV column's converter expects)."""
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return [] if value is None else [str(value)]


def _url_list_in(cell: str):
    return [part.strip() for part in cell.split(";") if part.strip()]


def _url_list_out(value) -> str:
    return URL_SEPARATOR.join(_listed(value))


def _author_list_in(cell: str):
    return [part.strip() for part in cell.split(" and ") if part.strip()]


def _author_list_out(value) -> str:
    return " and ".join(_listed(value))


def _boolean_in(cell: str):
    cell = cell.strip().lower()
    if not cell:
        return None
    if cell in ("true", "yes", "1"):
        return True
    if cell in ("false", "no", "0"):
        return False
    raise ConvertError(f"'{cell}' is not true or false")


def _boolean_out(value) -> str:
    return "" if value is None else str(bool(value)).lower()


def _value_list_in(cell: str):
    return [part.strip() for part in cell.split(";") if part.strip()]


def _value_list_out(value) -> str:
    return ";".join(_listed(value))


def _value_map_in(cell: str):
    result = {}
    for part in _value_list_in(cell):
        name, sep, value = part.partition(":")
        if not sep:
            raise ConvertError(f"'{part}' should be name:value")
        if name.strip() in result:
            raise ConvertError(f"'{name.strip()}' is given twice; give each name once")
        result[name.strip()] = value.strip()
    return result


def _value_map_out(value) -> str:
    return ";".join(f"{k}:{v}" for k, v in (value or {}).items())


def _slug_in(cell: str):
    """A record id such as E001 becomes the file-safe key e001."""
    slug = re.sub(r"[^a-z0-9]+", "-", cell.strip().lower()).strip("-")
    return slug or None


def _date_in(cell: str):
    cell = cell.strip()
    if not cell:
        return None
    day = calendar_day(cell)
    if day is None:
        raise ConvertError(f"'{cell}' is not a date like 2026-04-26")
    return day


def _date_out(value) -> str:
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Converter:
    read: Callable[[str], object]
    write: Callable[[object], str]


TEXT = Converter(_text_in, _text_out)

CONVERTERS: dict[str, Converter] = {
    "integer": Converter(_integer_in, _text_out),
    "first_author": Converter(_first_author_in, _first_author_out),
    "unknown_as_null": Converter(_unknown_as_null_in, _unknown_as_null_out),
    "url_list": Converter(_url_list_in, _url_list_out),
    "author_list": Converter(_author_list_in, _author_list_out),
    "boolean": Converter(_boolean_in, _boolean_out),
    "value_list": Converter(_value_list_in, _value_list_out),
    "value_map": Converter(_value_map_in, _value_map_out),
    "date": Converter(_date_in, _date_out),
    "slug": Converter(_slug_in, _text_out),
}


def converter(name: str | None) -> Converter:
    return CONVERTERS[name] if name else TEXT
