"""What counts as a unit, a definition and a reference in each grammar.

Per language: the node types that are **units** (functions, methods, classes, structs,
impls, modules …) with their kind, and one tree-sitter query for the **references**
(calls, type uses, imports; capture ``ref.call``, ``ref.type`` or ``ref.import``) and
the **definitions** that are not units (type aliases, C typedefs and macros; capture
``def.<kind>``). The queries are in the spirit of the grammars' own ``tags.scm`` (GitHub's
code navigation, Aider's repository map), written here because those capture a C
function's declarator rather than the function, and some grammars ship none.

Anonymous functions (closures, lambdas, arrow functions) are units of kind ``closure``:
a change inside a long callback is best shown with that callback.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CLASS_KINDS", "EXTRA_UNITS", "QUERIES", "UNITS"]

_C_UNITS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
}
_JS_UNITS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_expression": "closure",
    "arrow_function": "closure",
    "class_declaration": "class",
    "class": "class",
    "method_definition": "method",
}
_TS_UNITS = {
    **_JS_UNITS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "internal_module": "module",
    "module": "module",
}

#: Language → node type → kind of unit.
UNITS: Final[dict[str, dict[str, str]]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": _JS_UNITS,
    "typescript": _TS_UNITS,
    "tsx": _TS_UNITS,
    "go": {
        "function_declaration": "function",
        "method_declaration": "method",
        "func_literal": "closure",
        "type_spec": "type",
    },
    "java": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "annotation_type_declaration": "interface",
        "method_declaration": "method",
        "constructor_declaration": "constructor",
        "compact_constructor_declaration": "constructor",
        "lambda_expression": "closure",
    },
    "kotlin": {
        "class_declaration": "class",
        "object_declaration": "object",
        "companion_object": "object",
        "function_declaration": "function",
        "secondary_constructor": "constructor",
        "anonymous_function": "closure",
        "lambda_literal": "closure",
    },
    "rust": {
        "function_item": "function",
        "impl_item": "impl",
        "struct_item": "struct",
        "enum_item": "enum",
        "union_item": "union",
        "trait_item": "trait",
        "mod_item": "module",
        "macro_definition": "macro",
        "closure_expression": "closure",
    },
    "c": _C_UNITS,
    "cpp": {
        **_C_UNITS,
        "class_specifier": "class",
        "namespace_definition": "namespace",
        "lambda_expression": "closure",
    },
    "csharp": {
        "class_declaration": "class",
        "struct_declaration": "struct",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "namespace_declaration": "namespace",
        "method_declaration": "method",
        "constructor_declaration": "constructor",
        "local_function_statement": "function",
        "lambda_expression": "closure",
    },
    "ruby": {
        "method": "method",
        "singleton_method": "method",
        "class": "class",
        "singleton_class": "class",
        "module": "module",
    },
    "php": {
        "function_definition": "function",
        "method_declaration": "method",
        "class_declaration": "class",
        "interface_declaration": "interface",
        "trait_declaration": "trait",
        "enum_declaration": "enum",
        "anonymous_function": "closure",
        "arrow_function": "closure",
    },
    "swift": {
        "class_declaration": "class",
        "protocol_declaration": "protocol",
        "function_declaration": "function",
        "init_declaration": "constructor",
        "lambda_literal": "closure",
    },
    "scala": {
        "class_definition": "class",
        "object_definition": "object",
        "trait_definition": "trait",
        "enum_definition": "enum",
        "function_definition": "function",
        "lambda_expression": "closure",
    },
    "bash": {"function_definition": "function"},
}
for _language in ("c", "cpp"):
    UNITS[_language]["compound_statement"] = "function"

#: Units no node type names, as query patterns capturing ``unit``: a C function declared
#: by a macro (``TEST(group, name) { … }``) reads as a call missing its ";" followed by a
#: block at the top level; the block is the unit, named by the call.
EXTRA_UNITS: Final[dict[str, str]] = {
    "c": "(translation_unit (compound_statement) @unit)",
    "cpp": "(translation_unit (compound_statement) @unit)",
}

#: Kinds whose functions are methods, and whose names a type reference may mean.
CLASS_KINDS: Final = frozenset(
    {"class", "struct", "interface", "enum", "record", "trait", "impl", "object", "union"}
    | {"protocol", "type"}
)

_C_REFS = """
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(type_identifier) @ref.type
(preproc_include path: (_) @ref.import)
(type_definition declarator: (type_identifier) @def.type)
(preproc_def name: (identifier) @def.macro)
(preproc_function_def name: (identifier) @def.macro)
"""
_JS_REFS = """
(call_expression function: (identifier) @ref.call)
(call_expression function: (member_expression property: (property_identifier) @ref.call))
(new_expression constructor: (identifier) @ref.type)
(import_specifier name: (identifier) @ref.import)
(import_clause (identifier) @ref.import)
"""
_TS_REFS = (
    _JS_REFS
    + """
(type_identifier) @ref.type
(type_alias_declaration name: (type_identifier) @def.type)
"""
)

#: Language → query of references and of definitions that are not units.
QUERIES: Final[dict[str, str]] = {
    "python": """
(call function: (identifier) @ref.call)
(call function: (attribute attribute: (identifier) @ref.call))
(type (identifier) @ref.type)
(class_definition superclasses: (argument_list (identifier) @ref.type))
(import_from_statement name: (dotted_name (identifier) @ref.import))
(aliased_import name: (dotted_name (identifier) @ref.import))
""",
    "javascript": _JS_REFS + "(class_heritage (identifier) @ref.type)\n",
    "typescript": _TS_REFS,
    "tsx": _TS_REFS,
    "go": """
(call_expression function: (identifier) @ref.call)
(call_expression function: (selector_expression field: (field_identifier) @ref.call))
(type_identifier) @ref.type
(qualified_type name: (type_identifier) @ref.type)
(import_spec path: (_) @ref.import)
(const_spec name: (identifier) @def.constant)
""",
    "java": """
(method_invocation name: (identifier) @ref.call)
(object_creation_expression type: (type_identifier) @ref.type)
(type_identifier) @ref.type
(import_declaration (scoped_identifier name: (identifier) @ref.import))
""",
    "kotlin": """
(call_expression (identifier) @ref.call)
(call_expression (navigation_expression (identifier) @ref.call .))
(user_type (identifier) @ref.type)
(import (qualified_identifier (identifier) @ref.import .))
""",
    "rust": """
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(call_expression function: (scoped_identifier name: (identifier) @ref.call))
(macro_invocation macro: (identifier) @ref.call)
(type_identifier) @ref.type
(use_declaration argument: (_) @ref.import)
(type_item name: (type_identifier) @def.type)
(const_item name: (identifier) @def.constant)
(static_item name: (identifier) @def.constant)
""",
    "c": _C_REFS,
    "cpp": _C_REFS
    + """
(call_expression function: (qualified_identifier name: (identifier) @ref.call))
(alias_declaration name: (type_identifier) @def.type)
""",
    "csharp": """
(invocation_expression function: (identifier) @ref.call)
(invocation_expression function: (member_access_expression name: (identifier) @ref.call))
(object_creation_expression type: (identifier) @ref.type)
(base_list (identifier) @ref.type)
(generic_name (identifier) @ref.type)
(parameter type: (identifier) @ref.type)
(variable_declaration type: (identifier) @ref.type)
(method_declaration returns: (identifier) @ref.type)
(using_directive (identifier) @ref.import)
(using_directive (qualified_name) @ref.import)
""",
    "ruby": """
(call method: (identifier) @ref.call)
(constant) @ref.type
""",
    "php": """
(function_call_expression function: (name) @ref.call)
(member_call_expression name: (name) @ref.call)
(scoped_call_expression name: (name) @ref.call)
(object_creation_expression (name) @ref.type)
(named_type (name) @ref.type)
(base_clause (name) @ref.type)
(class_interface_clause (name) @ref.type)
(namespace_use_clause (qualified_name) @ref.import)
""",
    # A subscript (``entries[key]``) is a call_expression too, its arguments in "[ ]".
    "swift": """
(call_expression
  (simple_identifier) @ref.call
  (call_suffix [(value_arguments "(") (lambda_literal)]))
(call_expression
  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @ref.call))
  (call_suffix [(value_arguments "(") (lambda_literal)]))
(user_type (type_identifier) @ref.type)
(import_declaration (identifier) @ref.import)
""",
    "scala": """
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (identifier) @ref.call))
(call_expression function: (generic_function function: (identifier) @ref.call))
(type_identifier) @ref.type
(import_declaration (identifier) @ref.import .)
(import_declaration (namespace_selectors (identifier) @ref.import))
""",
    "bash": """
(command name: (command_name (word) @ref.call))
""",
}
