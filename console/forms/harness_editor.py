"""The harness editor: one formset per component of h = (S, T, P, K), and the raw-YAML form.

Forms here only parse what was typed (types, JSON syntax); every business rule (name patterns,
unknown tools, CEL type checks, template variables) belongs to ``harness/validation.py``.
Its ``FieldError`` paths (``skills[1].description``, ``tools[0].executor.url``,
``prompt.sections[2].template``) are mapped back onto the form field that produced them, so
the operator sees each message right at the field, and nothing is saved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.forms import BaseFormSet, formset_factory
from django.http import QueryDict

from console.forms.fields import JsonObjectField, TextBlockField, normalize_newlines
from harness_app.harness.errors import FieldError
from harness_app.harness.model import (
    CATALOG_OPERATIONS,
    CONDITION_KINDS,
    EXECUTOR_KINDS,
    FAIL_MODES,
    HOOK_ACTIONS,
    HOOK_EVENTS,
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)


def _choices(values: Iterable[str]) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


def _name_field(help_text: str = "") -> forms.CharField:
    return forms.CharField(
        max_length=200,
        required=False,
        help_text=help_text,
        widget=forms.TextInput(attrs={"class": "mono", "autocomplete": "off"}),
    )


# --------------------------------------------------------------------------- component forms


class SkillForm(forms.Form):
    name = _name_field("Lowercase words joined by '-', e.g. product-qa.")
    description = TextBlockField(rows=2, help_text="When the agent should pick this skill.")
    body = TextBlockField(rows=8, help_text="Instructions the agent loads when it picks the skill.")
    allowed_tools = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple(attrs={"class": "inline-choices"})
    )

    def __init__(self, *args: Any, tool_names: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Offer every tool the edit knows of, plus whatever was submitted, so that a reference
        # to a missing tool reaches validation (and its specific message) instead of Django's
        # generic "select a valid choice".
        names = list(dict.fromkeys([*tool_names, *self._submitted_tools()]))
        field = self.fields["allowed_tools"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = _choices(names)

    def _submitted_tools(self) -> list[str]:
        if not self.is_bound:
            return list(self.initial.get("allowed_tools") or [])
        key = self.add_prefix("allowed_tools")
        values = self.data.getlist(key) if isinstance(self.data, QueryDict) else self.data.get(key)
        return [str(v) for v in values or []]

    def clean_allowed_tools(self) -> tuple[str, ...]:
        # Keep the stored order of tools that stay, append new ones: an untouched skill must
        # round-trip to the identical content (same hash, no diff).
        chosen = list(self.cleaned_data["allowed_tools"])
        before = [t for t in (self.initial.get("allowed_tools") or []) if t in chosen]
        return tuple(before + [t for t in chosen if t not in before])

    def to_content(self, data: dict[str, Any] | None = None) -> Skill:
        d = self.cleaned_data if data is None else data
        return Skill(
            name=d["name"],
            description=d["description"],
            body=d["body"],
            allowed_tools=d["allowed_tools"],
        )

    @staticmethod
    def initial_from(skill: Skill) -> dict[str, Any]:
        return {
            "name": skill.name,
            "description": skill.description,
            "body": skill.body,
            "allowed_tools": list(skill.allowed_tools),
        }


class ToolForm(forms.Form):
    name = _name_field("snake_case, e.g. get_product.")
    description = TextBlockField(rows=2, help_text="What the tool does and when to call it.")
    input_schema = JsonObjectField(
        required=False,
        rows=8,
        help_text='JSON Schema (2020-12) of the arguments, e.g. {"type": "object", ...}.',
    )
    executor_kind = forms.ChoiceField(
        label="Executor", choices=_choices(EXECUTOR_KINDS), initial="catalog"
    )
    executor_operation = forms.CharField(
        label="Catalog operation",
        required=False,
        max_length=100,
        widget=forms.TextInput(attrs={"list": "catalog-operations", "class": "mono"}),
        help_text="For catalog tools: " + ", ".join(CATALOG_OPERATIONS) + ".",
    )
    executor_url = forms.CharField(
        label="Webhook URL",
        required=False,
        max_length=2000,
        help_text="For webhook tools: an https:// endpoint.",
    )
    executor_timeout_s = forms.FloatField(label="Timeout (s)", initial=5.0)
    executor_secret_ref = forms.CharField(
        label="Secret reference",
        required=False,
        max_length=200,
        help_text="The name of the signing secret (never the secret itself).",
    )
    read_only = forms.BooleanField(required=False, initial=True, help_text="Only reads data.")
    destructive = forms.BooleanField(
        required=False, help_text="Changes something that cannot be undone."
    )

    def clean_input_schema(self) -> dict[str, Any]:
        schema = self.cleaned_data["input_schema"]
        return schema if schema is not None else {"type": "object", "properties": {}}

    def to_content(self, data: dict[str, Any] | None = None) -> Tool:
        d = self.cleaned_data if data is None else data
        executor = ToolExecutor(
            kind=d["executor_kind"],
            operation=d["executor_operation"].strip(),
            url=d["executor_url"].strip(),
            timeout_s=float(d["executor_timeout_s"]),
            secret_ref=d["executor_secret_ref"].strip(),
        )
        return Tool(
            name=d["name"],
            description=d["description"],
            input_schema=d["input_schema"],
            executor=executor,
            read_only=d["read_only"],
            destructive=d["destructive"],
        )

    @staticmethod
    def initial_from(tool: Tool) -> dict[str, Any]:
        e = tool.executor
        return {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "executor_kind": e.kind,
            "executor_operation": e.operation,
            "executor_url": e.url,
            "executor_timeout_s": e.timeout_s,
            "executor_secret_ref": e.secret_ref,
            "read_only": tool.read_only,
            "destructive": tool.destructive,
        }


class PromptSectionForm(forms.Form):
    id = _name_field("Stable identifier, e.g. persona.")
    title = forms.CharField(max_length=200, required=False)
    template = TextBlockField(
        rows=6, help_text="Text with {variable} slots; write {{ and }} for literal braces."
    )

    def to_content(self, data: dict[str, Any] | None = None) -> PromptSection:
        d = self.cleaned_data if data is None else data
        return PromptSection(id=d["id"], title=d["title"], template=d["template"])

    @staticmethod
    def initial_from(section: PromptSection) -> dict[str, Any]:
        return {"id": section.id, "title": section.title, "template": section.template}


class HookForm(forms.Form):
    name = _name_field("e.g. price-compliance.")
    event = forms.ChoiceField(choices=_choices(HOOK_EVENTS), initial="pre_reply")
    matcher = forms.CharField(
        max_length=200,
        initial="*",
        required=False,
        widget=forms.TextInput(attrs={"class": "mono"}),
        help_text="Tool-name glob for tool events; * for all.",
    )
    condition_kind = forms.ChoiceField(
        label="Condition kind", choices=_choices(CONDITION_KINDS), initial="cel"
    )
    condition = TextBlockField(
        rows=3,
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono", "spellcheck": "false"}),
        help_text="CEL expression (true = fire) or an RE2 pattern (match = fire).",
    )
    action = forms.ChoiceField(choices=_choices(HOOK_ACTIONS), initial="retry_with_feedback")
    feedback = TextBlockField(rows=2, help_text="Told to the agent when the hook fires.")
    fallback_reply = TextBlockField(
        rows=2, label="Fallback reply", help_text="Sent instead when retries run out."
    )
    max_retries = forms.IntegerField(label="Max retries", initial=1)
    timeout_ms = forms.IntegerField(label="Timeout (ms)", initial=50)
    fail_mode = forms.ChoiceField(
        label="Fail mode",
        choices=_choices(FAIL_MODES),
        initial="open",
        help_text="open: allow on error; closed: block on error.",
    )

    def to_content(self, data: dict[str, Any] | None = None) -> Hook:
        d = self.cleaned_data if data is None else data
        return Hook(
            name=d["name"],
            event=d["event"],
            condition=d["condition"],
            condition_kind=d["condition_kind"],
            matcher=d["matcher"],
            action=d["action"],
            feedback=d["feedback"],
            fallback_reply=d["fallback_reply"],
            max_retries=d["max_retries"],
            timeout_ms=d["timeout_ms"],
            fail_mode=d["fail_mode"],
        )

    @staticmethod
    def initial_from(hook: Hook) -> dict[str, Any]:
        return {
            "name": hook.name,
            "event": hook.event,
            "matcher": hook.matcher,
            "condition_kind": hook.condition_kind,
            "condition": hook.condition,
            "action": hook.action,
            "feedback": hook.feedback,
            "fallback_reply": hook.fallback_reply,
            "max_retries": hook.max_retries,
            "timeout_ms": hook.timeout_ms,
            "fail_mode": hook.fail_mode,
        }


SkillFormSet = formset_factory(SkillForm, extra=0, can_delete=True)
ToolFormSet = formset_factory(ToolForm, extra=0, can_delete=True)
PromptSectionFormSet = formset_factory(PromptSectionForm, extra=0, can_delete=True, can_order=True)
HookFormSet = formset_factory(HookForm, extra=0, can_delete=True)


class EditMetaForm(forms.Form):
    """What every save carries besides the content."""

    base_version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    source_version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    message = forms.CharField(
        max_length=500,
        required=False,
        label="Change note",
        widget=forms.TextInput(attrs={"placeholder": "What changed and why (shown in history)"}),
    )


class YamlEditForm(forms.Form):
    content_yaml = TextBlockField(
        required=True,
        rows=36,
        label="Harness YAML",
        widget=forms.Textarea(
            attrs={"rows": 36, "class": "mono code-editor", "wrap": "off", "spellcheck": "false"}
        ),
    )

    def clean_content_yaml(self) -> str:
        return normalize_newlines(self.cleaned_data["content_yaml"])

    def fit_to(self, line_count: int, *, has_errors: bool) -> None:
        """One textarea row per line (plus room to type), so the line-number gutter beside it
        lines up without scrolling; errors make it invalid and described by the error list."""
        attrs = self.fields["content_yaml"].widget.attrs
        attrs["rows"] = max(36, line_count + 2)
        if has_errors:
            attrs["aria-invalid"] = "true"
            attrs["aria-describedby"] = "yaml-errors"


# --------------------------------------------------------------------------- the whole editor


@dataclass(frozen=True)
class Component:
    key: str  # formset prefix and anchor
    title: str
    item: str  # what one entry is called


COMPONENTS = (
    Component("skills", "Skills", "skill"),
    Component("tools", "Tools", "tool"),
    Component("sections", "Prompt sections", "section"),
    Component("hooks", "Hooks", "hook"),
)

# Validation paths use the content's names; some form fields are flattened.
_TOOL_FIELDS = {"executor": "executor_kind"}
_PATH = re.compile(
    r"^(?:(?P<component>skills|tools|hooks)|prompt\.(?P<sections>sections))"
    r"(?:\[(?P<index>\d+)\](?:\.(?P<field>\w+)(?P<rest>.*))?)?$"
)


class HarnessEditor:
    """The four formsets of one edit, bound to POST data or filled from a harness."""

    def __init__(self, data: Any = None, *, initial: Harness) -> None:
        self.initial = initial
        tool_names = [t.name for t in initial.tools]
        if data is not None:
            tool_names += [
                str(value)
                for key, value in data.items()
                if re.fullmatch(r"tools-\d+-name", key) and value
            ]
        self.skills: BaseFormSet = SkillFormSet(  # type: ignore[type-arg]
            data,
            prefix="skills",
            initial=[SkillForm.initial_from(s) for s in initial.skills],
            form_kwargs={"tool_names": list(dict.fromkeys(tool_names))},
        )
        self.tools: BaseFormSet = ToolFormSet(  # type: ignore[type-arg]
            data, prefix="tools", initial=[ToolForm.initial_from(t) for t in initial.tools]
        )
        self.sections: BaseFormSet = PromptSectionFormSet(  # type: ignore[type-arg]
            data,
            prefix="sections",
            initial=[PromptSectionForm.initial_from(s) for s in initial.prompt.sections],
        )
        self.hooks: BaseFormSet = HookFormSet(  # type: ignore[type-arg]
            data, prefix="hooks", initial=[HookForm.initial_from(k) for k in initial.hooks]
        )
        self.general_errors: list[str] = []
        self.general_warnings: list[str] = []
        # Which form produced the n-th entry of each component of the built content.
        self._placed: dict[str, list[Any]] = {}  # the component forms (each has to_content)

    def formsets(self) -> list[tuple[Component, BaseFormSet]]:  # type: ignore[type-arg]
        return [(c, getattr(self, c.key)) for c in COMPONENTS]

    def is_valid(self) -> bool:
        # Every formset is cleaned (no short circuit): its field errors are all reported.
        results = [fs.is_valid() for _c, fs in self.formsets()]
        return all(results)

    def error_count(self) -> int:
        fields = sum(
            len(form.errors) for _c, fs in self.formsets() for form in fs.forms if form.is_bound
        )
        nonform = sum(len(fs.non_form_errors()) for _c, fs in self.formsets() if fs.is_bound)
        return fields + nonform + len(self.general_errors)

    def place_unbound(self) -> None:
        """For a freshly loaded (unbound) editor, entry n of each component is form n."""
        for component, formset in self.formsets():
            self._placed[component.key] = list(formset.forms)

    def error_links(self) -> list[tuple[str, str, str]]:
        """(element id, "Skill 2 (promo-push) / Name", message) for every field error."""
        links: list[tuple[str, str, str]] = []
        for component, formset in self.formsets():
            if not formset.is_bound:
                continue
            for number, form in enumerate(formset.forms, start=1):
                name = form.data.get(
                    form.add_prefix("id" if component.key == "sections" else "name"), ""
                )
                where = f"{component.item.capitalize()} {number}" + (f" ({name})" if name else "")
                for field, messages in form.errors.items():
                    if field == "__all__":
                        target, label = form.prefix, where
                    else:
                        target = form[field].auto_id
                        label = f"{where} / {form.fields[field].label or field}"
                    links.extend((target, label, str(message)) for message in messages)
        return links

    def content(self, *, partial: bool = False) -> Harness:
        """The harness the forms describe, in the order the operator arranged.

        ``partial``: the forms have field errors (invalid JSON, a number that is not one);
        build the harness anyway, with each invalid field at its default, so that the rule
        checks can run in the same save and every problem is reported at once.
        """
        for component, formset in self.formsets():
            if component.key == "sections" and not partial:
                kept = list(formset.ordered_forms)
            else:
                kept = [
                    form
                    for i, form in enumerate(formset.forms)
                    if not _cleaned(form).get("DELETE")
                    and (i < formset.initial_form_count() or form.has_changed())
                ]
                if component.key == "sections":
                    kept = _in_chosen_order(kept)
            self._placed[component.key] = kept
        built = {
            key: tuple(f.to_content(_with_defaults(f) if partial else None) for f in forms_)
            for key, forms_ in self._placed.items()
        }
        return Harness(
            skills=built["skills"],
            tools=built["tools"],
            prompt=Prompt(sections=built["sections"]),
            hooks=built["hooks"],
        )

    def place_errors(self, errors: Iterable[FieldError]) -> None:
        """Show each validation error at the field it names (content() must have run).

        A field that already has an error of its own (e.g. JSON that does not parse) keeps
        only that one: a rule checked against its stand-in default would only confuse.
        """
        for error in errors:
            target = self._locate(error.path)
            if target is not None and target[1] is not None and target[1] in target[0].errors:
                continue
            self._place(error, warning=False)

    def place_warnings(self, warnings: Iterable[FieldError]) -> None:
        for warning in warnings:
            self._place(warning, warning=True)

    def _place(self, error: FieldError, *, warning: bool) -> None:
        target = self._locate(error.path)
        if target is None:
            general = self.general_warnings if warning else self.general_errors
            general.append(str(error))
            return
        form, field, detail = target
        message = f"{detail}: {error.message}" if detail else error.message
        if warning:
            # Stored on the form's own copy of the field, read by partials/field.html.
            bucket = form.fields[field] if field else form
            notes = getattr(bucket, "warnings", None)
            if notes is None:
                notes = []
                bucket.warnings = notes  # type: ignore[union-attr]
            notes.append(message)
        else:
            form.add_error(field, message)

    def _locate(self, path: str) -> tuple[forms.Form, str | None, str] | None:
        match = _PATH.match(path)
        if match is None:
            return None
        key = match["component"] or match["sections"]
        if match["index"] is None:
            return None
        placed = self._placed.get(key, [])
        index = int(match["index"])
        if index >= len(placed):
            return None
        form = placed[index]
        field = match["field"]
        rest = (match["rest"] or "").lstrip(".")
        if rest.startswith("["):  # "allowed_tools[0]": the message already names the item
            rest = ""
        if key == "tools" and field == "executor":
            sub = rest.split(".")[0].split("[")[0]
            field, rest = (f"executor_{sub}", "") if sub else ("executor_kind", rest)
        if field is None or field not in form.fields:
            return form, None, f"{field}{('.' + rest) if rest else ''}" if field else ""
        return form, field, rest


def _cleaned(form: forms.Form) -> dict[str, Any]:
    form.errors  # noqa: B018  (cleans the form if nothing has yet)
    return getattr(form, "cleaned_data", None) or {}


def _with_defaults(form: forms.Form) -> dict[str, Any]:
    """The form's cleaned data, with each field that failed to parse at its default."""
    data = dict(_cleaned(form))
    for name, field in form.fields.items():
        if name in data:
            continue
        if isinstance(field, JsonObjectField):
            data[name] = {"type": "object", "properties": {}}
        elif isinstance(field, forms.MultipleChoiceField):
            data[name] = ()
        elif field.initial is not None:
            data[name] = field.initial
        elif isinstance(field, forms.BooleanField):
            data[name] = False
        else:
            data[name] = ""
    return data


def _in_chosen_order(section_forms: list[forms.Form]) -> list[forms.Form]:
    """Sections by their ORDER field (as ``ordered_forms`` does), unordered ones last."""

    def position(item: tuple[int, forms.Form]) -> tuple[int, int, int]:
        index, form = item
        order = _cleaned(form).get("ORDER")
        return (0, order, index) if isinstance(order, int) else (1, 0, index)

    return [form for _i, form in sorted(enumerate(section_forms), key=position)]


def data_with_new_entry(data: Any, key: str) -> Any:
    """POST data plus one blank entry of component ``key`` filled with the field defaults.

    The no-JavaScript path of "Add skill" etc.: the new form arrives bound but unchanged, so
    it shows no "required" errors and is dropped again if the operator leaves it empty.
    """
    form_class: Any = {
        "skills": SkillForm,
        "tools": ToolForm,
        "sections": PromptSectionForm,
        "hooks": HookForm,
    }[key]
    data = data.copy()
    total = int(data.get(f"{key}-TOTAL_FORMS") or 0)
    blank = form_class(prefix=f"{key}-{total}")
    for name, field in blank.fields.items():
        value = blank[name].value()
        if isinstance(field, forms.BooleanField):
            if value:
                data[blank.add_prefix(name)] = "on"
        elif value not in (None, "") and not isinstance(value, list | tuple):
            data[blank.add_prefix(name)] = str(value)
    data[f"{key}-TOTAL_FORMS"] = str(total + 1)
    return data
