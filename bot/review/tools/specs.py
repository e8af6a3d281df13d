"""What the model is told about the repository tools: OpenAI function specs.

The descriptions are part of the cached prompt prefix, so they are fixed text (only the
limits are filled in) and stay in one order.
"""

from __future__ import annotations

from typing import Any

#: Each tool's arguments: name -> (Python type, required), in the order they are listed.
ARGUMENTS: dict[str, dict[str, tuple[type, bool]]] = {
    "read_file": {"path": (str, True), "start_line": (int, False), "end_line": (int, False)},
    "search": {"pattern": (str, True), "path_glob": (str, False), "regex": (bool, False)},
    "list_dir": {"path": (str, False)},
    "find_definition": {"symbol": (str, True)},
    "find_references": {"symbol": (str, True)},
}

_PATH = (
    "Path relative to the repository root, with '/' separators (for example "
    "'src/app.py'). Absolute paths, '..' above the root, .git and submodules are refused."
)


def _function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    required = [key for key, (_, needed) in ARGUMENTS[name].items() if needed]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def tool_definitions(max_lines: int, max_matches: int) -> list[dict[str, Any]]:
    return [
        _function(
            "read_file",
            "Read a file of the reviewed version of the repository (not the diff), with "
            f"line numbers. At most {max_lines:,} lines per call: use start_line/end_line "
            "to page through a long file. Secrets are shown as [REDACTED:<kind>].",
            {
                "path": {"type": "string", "description": _PATH},
                "start_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to show (1-based). Default 1.",
                },
                "end_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Last line to show (inclusive). Default: the end.",
                },
            },
        ),
        _function(
            "search",
            "Search the files of the reviewed version like `git grep`: one "
            f"'path:line: text' row per matching line, at most {max_matches:,} rows. "
            "Use it to find callers, usages and tests of what the diff changes.",
            {
                "pattern": {
                    "type": "string",
                    "description": "Text to find (case-sensitive), or a regular expression "
                    "if regex is true. Matches within one line.",
                },
                "path_glob": {
                    "type": "string",
                    "description": "Limit the search: a directory or file ('src'), a file "
                    "name glob in any directory ('*.py'), or a path glob where ** spans "
                    "directories ('src/**/*.ts').",
                },
                "regex": {
                    "type": "boolean",
                    "description": "Treat pattern as a regular expression. Default false.",
                },
            },
        ),
        _function(
            "list_dir",
            "List the entries of a directory of the reviewed version: subdirectories end "
            "with '/', files show their size, symlinks their target.",
            {"path": {"type": "string", "description": _PATH + " Default: the root."}},
        ),
        _function(
            "find_definition",
            "Find where a function, class, method, type, struct, interface or constant is "
            "defined, across languages (def, class, func, fn, function, type, struct, "
            "interface, const …). Returns 'path:line: text' rows.",
            {
                "symbol": {
                    "type": "string",
                    "description": "The name, such as 'parse_config'; for 'Config.load' the "
                    "last part is looked up.",
                }
            },
        ),
        _function(
            "find_references",
            "Find who uses a function, method, class or type: the lines that call it, name "
            "it as a type or import it, each with the function or class it stands in. "
            "Returns 'path:line: text  (in kind name)' rows.",
            {
                "symbol": {
                    "type": "string",
                    "description": "The name, such as 'parse_config'; for 'Config.load' the "
                    "last part is looked up.",
                }
            },
        ),
    ]
