"""Pure-Python harness package: h = (S, T, P, K) as dataclasses, plus everything that reads,
checks, renders, compares and exchanges them. Never imports Django (see DESIGN.md)."""

from harness_app.harness.archive import export_harness_zip, import_harness_zip
from harness_app.harness.bfcl import (
    BfclImportReport,
    import_bfcl_file,
    normalise_bfcl_schema,
    tool_from_bfcl,
)
from harness_app.harness.conditions import (
    EVENT_VARIABLES,
    CompiledCondition,
    ConditionError,
    ConditionRuntimeError,
    compile_condition,
    inspected_text,
    matcher_matches,
    sample_activation,
)
from harness_app.harness.diff import Change, semantic_diff
from harness_app.harness.errors import ArchiveError, FieldError, HarnessValidationError
from harness_app.harness.model import (
    CATALOG_OPERATIONS,
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.openai_tools import from_openai_tools, to_openai_tools
from harness_app.harness.prompt import (
    PROMPT_VARIABLES,
    PromptContext,
    TemplateError,
    assemble_prompt,
    template_variables,
)
from harness_app.harness.serialization import (
    canonical_json,
    component_hashes,
    harness_from_dict,
    harness_from_yaml,
    harness_to_dict,
    harness_to_yaml,
)
from harness_app.harness.skill_md import parse_skill_md, render_skill_md
from harness_app.harness.validation import ensure_valid, harness_warnings, validate_harness

__all__ = [
    "CATALOG_OPERATIONS",
    "EVENT_VARIABLES",
    "PROMPT_VARIABLES",
    "ArchiveError",
    "BfclImportReport",
    "Change",
    "CompiledCondition",
    "ConditionError",
    "ConditionRuntimeError",
    "FieldError",
    "Harness",
    "HarnessValidationError",
    "Hook",
    "Prompt",
    "PromptContext",
    "PromptSection",
    "Skill",
    "TemplateError",
    "Tool",
    "ToolExecutor",
    "assemble_prompt",
    "canonical_json",
    "compile_condition",
    "component_hashes",
    "ensure_valid",
    "export_harness_zip",
    "from_openai_tools",
    "harness_from_dict",
    "harness_from_yaml",
    "harness_to_dict",
    "harness_to_yaml",
    "harness_warnings",
    "import_bfcl_file",
    "import_harness_zip",
    "inspected_text",
    "matcher_matches",
    "normalise_bfcl_schema",
    "parse_skill_md",
    "render_skill_md",
    "sample_activation",
    "semantic_diff",
    "template_variables",
    "to_openai_tools",
    "tool_from_bfcl",
    "validate_harness",
]
