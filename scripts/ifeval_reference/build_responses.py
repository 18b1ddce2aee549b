# ruff: noqa: RUF001  (the language samples are written in their own scripts)
"""Build the responses whose reference verdicts are recorded (any Python 3.11; imports nothing
of the project).

    python scripts/ifeval_reference/build_responses.py \
        --gpt4 var/ifeval-reference/input_response_data_gpt4_20231107_145030.jsonl \
        --out var/ifeval-reference/responses.jsonl

Three sources, each line ``{"case", "source", "prompt", "response", ...}``:

- ``hand``: for EVERY instruction of every one of the 541 prompts, one response written to
  follow it and one written not to (``target``: the instruction's index, ``instruction_id``,
  ``intent``: true/false), from its own arguments, so every argument value in the data is
  exercised in both directions. The other instructions of the prompt are judged too.
- ``gpt4``: the GPT-4 responses that Google published with instruction_following_eval
  (``data/input_response_data_gpt4_20231107_145030.jsonl``, Apache-2.0): real model output.
  One of them answers an earlier wording of prompt 2785 ("at least one placeholder"); it is
  paired with the current wording of that prompt.
- ``gpt4-<edit>``: each GPT-4 response once more under one of eight edits, in turn (a chatty
  first line, a sign-off line, a bold heading, all lower case, all upper case, commas
  removed, only the first half, asterisks removed), which move the loose variants and the
  case, comma and length checks.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_INPUT = ROOT / "training_app" / "evals" / "ifeval" / "data" / "input_data.jsonl"

SENTENCES = (
    "The morning market opened early and the stalls filled with fresh fruit.",
    "Our team reviewed the plan and agreed on the next steps.",
    "A light rain fell over the hills while the river kept moving.",
    "The library stays open late during the exam season.",
    "Good design starts with a clear understanding of the problem.",
    "Travelers often remember the small moments more than the big sights.",
    "The recipe needs two cups of flour and a little patience.",
    "Every project benefits from honest feedback and steady work.",
    "The old bridge still carries traffic across the valley.",
    "Children played football in the park until sunset.",
    "The museum added a new room for modern sculpture.",
    "Fresh bread smells best when it comes straight from the oven.",
    "The train was quiet and most passengers were reading.",
    "Our neighbors planted tomatoes along the back fence.",
    "The committee will publish its findings next month.",
    "Mountain air feels colder than most visitors expect.",
)
VOCABULARY = tuple(
    " ".join(
        (
            "river stone cloud music garden bright quick paper window silver orange forest",
            "happy yellow simple candle market planet ocean summer winter coffee bridge pocket",
            "little jump dry fox up by sky myth lynx gym hut mist tulip iron sun corn wind hill",
            "road lamp bus top pump cup dusk gust plum bulb husk drum fun mud rust hush",
        )
    ).split()
)
CAPITAL_WORDS = ("IMPORTANT", "NOTE", "ALWAYS", "NEVER", "KEY", "FAST", "SAFE", "FREE", "NOW")
PLACEHOLDERS = ("name", "address", "date", "company", "phone", "city", "email", "title")
LANGUAGE_TEXTS = {
    "kn": "ಬೆಂಗಳೂರು ಕರ್ನಾಟಕದ ರಾಜಧಾನಿ. ಇಲ್ಲಿ ಅನೇಕ ಸುಂದರ ಉದ್ಯಾನಗಳು ಮತ್ತು ಕೆರೆಗಳಿವೆ. ಜನರು ಸ್ನೇಹಪರರಾಗಿದ್ದಾರೆ.",
    "pa": "ਪੰਜਾਬ ਇੱਕ ਸੁੰਦਰ ਧਰਤੀ ਹੈ। ਇੱਥੇ ਦੇ ਲੋਕ ਬਹੁਤ ਮਿਹਨਤੀ ਅਤੇ ਪਿਆਰ ਕਰਨ ਵਾਲੇ ਹਨ। ਖੇਤਾਂ ਵਿੱਚ ਕਣਕ ਉੱਗਦੀ ਹੈ।",
    "mr": "महाराष्ट्र हे भारतातील एक मोठे राज्य आहे. मुंबई ही त्याची राजधानी आहे. येथील लोक मराठी "
    "भाषा बोलतात आणि सण उत्साहाने साजरे करतात.",
    "fa": "تهران پایتخت ایران است. مردم این شهر بسیار مهمان‌نواز هستند و غذاهای خوشمزه‌ای می‌پزند.",
    "vi": "Hà Nội là thủ đô của Việt Nam. Thành phố có nhiều hồ nước đẹp và những con phố cổ "
    "nhộn nhịp.",
    "ko": "서울은 대한민국의 수도입니다. 이 도시에는 아름다운 궁궐과 현대적인 건물이 "
    "함께 있습니다.",
    "sw": "Nairobi ni mji mkuu wa Kenya. Watu wengi hufanya kazi katika mji huu na hupenda kula "
    "chakula kitamu pamoja na familia zao.",
    "ru": "Москва является столицей России. В этом городе много музеев, парков и красивых старых "
    "улиц.",
    "hi": "भारत एक विशाल देश है। यहाँ अनेक भाषाएँ बोली जाती हैं और लोग अपने त्योहार बड़े उत्साह से मनाते हैं।",
    "bg": "София е столицата на България. Градът се намира в подножието на планината Витоша и има "
    "много паркове.",
    "pt": "Lisboa é a capital de Portugal. A cidade tem muitas colinas, ruas estreitas e uma luz "
    "muito bonita ao entardecer.",
    "gu": "ગુજરાત ભારતનું એક સુંદર રાજ્ય છે. અહીંના લોકો વેપારમાં ખૂબ કુશળ છે અને તહેવારો ઉત્સાહથી ઉજવે છે.",
    "te": "హైదరాబాద్ తెలంగాణ రాష్ట్ర రాజధాని. ఈ నగరం బిర్యానీకి మరియు చారిత్రక కట్టడాలకు ప్రసిద్ధి చెందింది.",
    "it": "Roma è la capitale d'Italia. La città è piena di monumenti antichi, piazze affollate e "
    "ottimi ristoranti.",
    "ar": "القاهرة هي عاصمة مصر. تقع المدينة على ضفاف نهر النيل ويعيش فيها ملايين الناس.",
    "ta": "சென்னை தமிழ்நாட்டின் தலைநகரம் ஆகும். இந்த நகரம் அழகான கடற்கரைக்கும் சுவையான உணவுக்கும் பெயர் பெற்றது.",
    "de": "Berlin ist die Hauptstadt von Deutschland. Die Stadt hat viele Museen, Parks und eine "
    "lebendige Kulturszene.",
    "fi": "Helsinki on Suomen pääkaupunki. Kaupungissa on paljon puistoja, museoita ja kauniita "
    "rantoja meren äärellä.",
    "ur": "کراچی پاکستان کا سب سے بڑا شہر ہے۔ یہاں کے لوگ بہت محنتی ہیں اور سمندر کے کنارے "
    "سیر کرنا پسند کرتے ہیں۔",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย เมืองนี้มีวัดที่สวยงามและอาหารริมทางที่อร่อยมาก",
    "ne": "काठमाडौं नेपालको राजधानी हो। यहाँका मानिसहरू धेरै मिलनसार छन् र हिमालको दृश्य अत्यन्त सुन्दर देखिन्छ।",
    "bn": "ঢাকা বাংলাদেশের রাজধানী। এই শহরে অনেক মানুষ বাস করে এবং এখানে সুস্বাদু খাবার পাওয়া যায়।",
}


def sentences(rng: random.Random, count: int, avoid: tuple[str, ...] = ()) -> list[str]:
    """``count`` filler sentences (repeating the pool if needed) that contain none of
    ``avoid`` (case-insensitive substrings)."""
    pool = [s for s in SENTENCES if not any(a.lower() in s.lower() for a in avoid)]
    return [pool[rng.randrange(len(pool))] for _ in range(count)]


def prose(rng: random.Random, count: int = 3, avoid: tuple[str, ...] = ()) -> str:
    return " ".join(sentences(rng, count, avoid))


def words(rng: random.Random, count: int) -> str:
    """Exactly ``count`` \\w+ words, in sentences of about ten."""
    out, pending = [], []
    for index in range(count):
        pending.append(VOCABULARY[rng.randrange(len(VOCABULARY))])
        if len(pending) == 10 or index == count - 1:
            out.append(" ".join(pending).capitalize() + ".")
            pending = []
    return " ".join(out)


def relation_counts(threshold: int, relation: str) -> tuple[int | None, int | None]:
    """(count that follows, count that does not) for "at least"/"less than" a threshold;
    None where no count works (e.g. fewer than 1 sentence)."""
    if relation == "at least":
        return threshold, threshold - 1 if threshold - 1 >= 0 else None
    return (threshold - 1 if threshold - 1 >= 0 else None), threshold


Builder = Callable[[random.Random, dict[str, Any], dict[str, Any]], tuple[str | None, str | None]]


def keywords_existence(rng, kw, example):  # type: ignore[no-untyped-def]
    keywords = tuple(kw["keywords"])
    base = prose(rng, 2, avoid=keywords)
    mention = " ".join(f"We also discussed {k} at length." for k in keywords)
    partial = " ".join(f"We also discussed {k.upper()} at length." for k in keywords[:-1])
    return f"{base} {mention}", f"{base} {partial}".strip()


def keywords_frequency(rng, kw, example):  # type: ignore[no-untyped-def]
    keyword = kw["keyword"]
    follow, miss = relation_counts(kw["frequency"], kw["relation"])

    def text(n: int | None) -> str | None:
        if n is None:
            return None
        uses = [f"{keyword.capitalize() if i % 2 else keyword} matters here." for i in range(n)]
        return " ".join([prose(rng, 2, avoid=(keyword,)), *uses])

    return text(follow), text(miss)


def forbidden_words(rng, kw, example):  # type: ignore[no-untyped-def]
    forbidden = tuple(kw["forbidden_words"])
    base = prose(rng, 3, avoid=forbidden)
    return base, f"{forbidden[-1].capitalize()} came up once. {base}"


def letter_frequency(rng, kw, example):  # type: ignore[no-untyped-def]
    letter = kw["letter"].lower()
    follow, miss = relation_counts(kw["let_frequency"], kw["let_relation"])
    without = [w for w in VOCABULARY if letter not in w]
    once = [w for w in VOCABULARY if w.count(letter) == 1] or [f"x{letter}"]

    def text(n: int | None) -> str | None:
        if n is None:
            return None
        chosen = [without[rng.randrange(len(without))] for _ in range(12)]
        chosen += [once[rng.randrange(len(once))] for _ in range(n)]
        rng.shuffle(chosen)
        return " ".join(chosen).capitalize() + "."

    return text(follow), text(miss)


def response_language(rng, kw, example):  # type: ignore[no-untyped-def]
    language = kw["language"]
    other = "de" if language != "de" else "it"
    fail = prose(rng, 3) if example["key"] % 2 else LANGUAGE_TEXTS[other]
    return LANGUAGE_TEXTS[language], fail


def number_sentences(rng, kw, example):  # type: ignore[no-untyped-def]
    follow, miss = relation_counts(kw["num_sentences"], kw["relation"])

    def text(n: int | None) -> str | None:
        if not n:
            return None
        parts = sentences(rng, n)
        if n >= 2 and example["key"] % 3 == 0:
            parts[0] = "Dr. Brown met Mr. Green at the station."
        return " ".join(parts)

    return text(follow), text(miss)


def number_paragraphs(rng, kw, example):  # type: ignore[no-untyped-def]
    n = kw["num_paragraphs"]
    paragraphs = [prose(rng, 2) for _ in range(n + 1)]
    follow = "\n\n***\n\n".join(paragraphs[:n])
    if example["key"] % 2:
        miss = "\n\n***\n\n".join(paragraphs)
    else:  # an empty paragraph between two dividers
        miss = "\n\n***\n\n".join([*paragraphs[: n - 1], "", paragraphs[n - 1]])
    return follow, miss


def number_words(rng, kw, example):  # type: ignore[no-untyped-def]
    follow, miss = relation_counts(kw["num_words"], kw["relation"])
    return (
        words(rng, follow) if follow else None,
        words(rng, miss) if miss else None,
    )


def nth_paragraph_first_word(rng, kw, example):  # type: ignore[no-untyped-def]
    n, nth, first = kw["num_paragraphs"], kw["nth_paragraph"], kw["first_word"]
    paragraphs = [prose(rng, 2, avoid=(first,)) for _ in range(n + 1)]
    opener = f'"{first.capitalize()}," she said.' if example["key"] % 2 else first.capitalize()
    good = list(paragraphs[:n])
    good[nth - 1] = f"{opener} {good[nth - 1]}"
    if example["key"] % 2:
        bad = [*good, paragraphs[n]]
    else:
        bad = list(paragraphs[:n])
        bad[nth - 1] = "Meanwhile " + bad[nth - 1]
    return "\n\n".join(good), "\n\n".join(bad)


def number_placeholders(rng, kw, example):  # type: ignore[no-untyped-def]
    n = kw["num_placeholders"]

    def text(count: int) -> str:
        slots = " ".join(f"[{PLACEHOLDERS[i % len(PLACEHOLDERS)]}]" for i in range(count))
        return f"{prose(rng, 2)} {slots}".strip()

    return text(n), text(n - 1)


def postscript(rng, kw, example):  # type: ignore[no-untyped-def]
    marker = kw["postscript_marker"]
    body = prose(rng, 3)
    bad_marker = "PS" if example["key"] % 2 else ""
    miss = f"{body}\n\n{bad_marker} See you soon.".rstrip()
    return f"{body}\n\n{marker} See you soon.", miss


def number_bullet_lists(rng, kw, example):  # type: ignore[no-untyped-def]
    n = kw["num_bullets"]
    mark = "-" if example["key"] % 2 else "*"
    items = [f"{mark} {s}" for s in sentences(rng, n + 1)]
    intro = "Here are the points."
    return "\n".join([intro, *items[:n]]), "\n".join([intro, *items])


def constrained_response(rng, kw, example):  # type: ignore[no-untyped-def]
    options = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
    chosen = options[example["key"] % 3]
    return f"{chosen} {prose(rng, 1)}", f"{chosen[:-1]} {prose(rng, 1)}"


def number_highlighted_sections(rng, kw, example):  # type: ignore[no-untyped-def]
    n = kw["num_highlights"]

    def text(count: int) -> str:
        spans = [
            f"**part {i + 1} of the plan**" if i % 2 else f"*part {i + 1} of the plan*"
            for i in range(count)
        ]
        return f"{prose(rng, 2)} {' '.join(spans)}".strip()

    return text(n), text(n - 1)


def multiple_sections(rng, kw, example):  # type: ignore[no-untyped-def]
    splitter, n = kw["section_spliter"], kw["num_sections"]

    def text(count: int) -> str:
        return "\n\n".join(f"{splitter} {i + 1}\n{prose(rng, 2)}" for i in range(count))

    return text(n), text(n - 1) if n > 1 else prose(rng, 2)


def json_format(rng, kw, example):  # type: ignore[no-untyped-def]
    payload = json.dumps({"summary": prose(rng, 1), "points": sentences(rng, 2)}, indent=2)
    follow = f"```json\n{payload}\n```" if example["key"] % 2 else payload
    return follow, f"Here is the JSON you asked for:\n{payload}"


def title(rng, kw, example):  # type: ignore[no-untyped-def]
    body = prose(rng, 3)
    miss = f"<< >>\n\n{body}" if example["key"] % 2 else body
    return f"<<A Short Report>>\n\n{body}", miss


def two_responses(rng, kw, example):  # type: ignore[no-untyped-def]
    first, second = prose(rng, 2), prose(rng, 2, avoid=("market",)) + " A second take."
    miss = f"{first}\n******\n{first}" if example["key"] % 2 else first
    return f"{first}\n******\n{second}", miss


def repeat_prompt(rng, kw, example):  # type: ignore[no-untyped-def]
    request = kw["prompt_to_repeat"]
    return f"{request}\n\n{prose(rng, 2)}", f"Sure. {request}\n\n{prose(rng, 2)}"


def end_checker(rng, kw, example):  # type: ignore[no-untyped-def]
    phrase = kw["end_phrase"]
    body = prose(rng, 3)
    follow = f'"{body} {phrase}"  ' if example["key"] % 2 else f"{body} {phrase}"
    return follow, f"{body} {phrase} Thank you."


def capital_word_frequency(rng, kw, example):  # type: ignore[no-untyped-def]
    follow, miss = relation_counts(kw["capital_frequency"], kw["capital_relation"])

    def text(n: int | None) -> str | None:
        if n is None:
            return None
        caps = [CAPITAL_WORDS[i % len(CAPITAL_WORDS)] for i in range(n)]
        # No filler sentence that opens with "A": word_tokenize makes it a capital word.
        body = prose(rng, 2, avoid=("A light",))
        return f"{body} These words matter: {' '.join(caps)}.".replace(": .", ".")

    return text(follow), text(miss)


def english_capital(rng, kw, example):  # type: ignore[no-untyped-def]
    body = prose(rng, 3)
    return body.upper(), body


def english_lowercase(rng, kw, example):  # type: ignore[no-untyped-def]
    body = prose(rng, 3)
    return body.lower(), body


def no_comma(rng, kw, example):  # type: ignore[no-untyped-def]
    body = prose(rng, 3)
    return body, body.replace(" and ", ", and ", 1) if " and " in body else body + " Yes, indeed."


def quotation(rng, kw, example):  # type: ignore[no-untyped-def]
    body = prose(rng, 3)
    return f'"{body}"', (f'"{body}' if example["key"] % 2 else body)


BUILDERS: dict[str, Builder] = {
    "keywords:existence": keywords_existence,
    "keywords:frequency": keywords_frequency,
    "keywords:forbidden_words": forbidden_words,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_words": number_words,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:json_format": json_format,
    "detectable_format:title": title,
    "combination:two_responses": two_responses,
    "combination:repeat_prompt": repeat_prompt,
    "startend:end_checker": end_checker,
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "punctuation:no_comma": no_comma,
    "startend:quotation": quotation,
}


def hand_built(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cases = []
    for example in examples:
        for index, instruction_id in enumerate(example["instruction_id_list"]):
            rng = random.Random(f"{example['key']}:{index}")
            follow, miss = BUILDERS[instruction_id](rng, example["kwargs"][index], example)
            for intent, response in ((True, follow), (False, miss)):
                if response is None or not response.strip():
                    continue  # no such response exists (e.g. "at least 1 sentence" failed)
                cases.append(
                    {
                        "case": f"hand:{example['key']}:{index}:{'pass' if intent else 'fail'}",
                        "source": "hand",
                        "prompt": example["prompt"],
                        "response": response,
                        "target": index,
                        "instruction_id": instruction_id,
                        "intent": intent,
                    }
                )
    return cases


EDITS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("preface", lambda r: "Sure! Here is my answer.\n" + r),
    ("signoff", lambda r: r + "\nLet me know if you need anything else!"),
    ("bold-heading", lambda r: "**Answer**\n" + r),
    ("lower", str.lower),
    ("upper", str.upper),
    ("no-commas", lambda r: r.replace(",", "")),
    ("first-half", lambda r: r[: len(r) // 2]),
    ("no-asterisks", lambda r: r.replace("*", "")),
)


def gpt4_cases(examples: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    prompts = [e["prompt"] for e in examples]
    by_prompt = {e["prompt"]: e for e in examples}
    cases = []
    for line in path.open(encoding="utf-8"):
        record = json.loads(line)
        prompt = record["prompt"]
        note = None
        if prompt not in by_prompt:
            (closest,) = difflib.get_close_matches(prompt, prompts, n=1, cutoff=0.9)
            prompt, note = closest, "answers an earlier wording of this prompt"
        key = by_prompt[prompt]["key"]
        case = {"case": f"gpt4:{key}", "source": "gpt4", "prompt": prompt}
        cases.append({**case, "response": record["response"], **({"note": note} if note else {})})
        name, edit = EDITS[len(cases) % len(EDITS)]
        cases.append(
            {
                "case": f"gpt4-{name}:{key}",
                "source": f"gpt4-{name}",
                "prompt": prompt,
                "response": edit(record["response"]),
            }
        )
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--input-data", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--gpt4", type=Path, required=True, help="Google's GPT-4 responses")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    examples = [json.loads(line) for line in args.input_data.open(encoding="utf-8")]
    cases = hand_built(examples) + gpt4_cases(examples, args.gpt4)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    by_source: dict[str, int] = {}
    for case in cases:
        source = "gpt4-edit" if case["source"].startswith("gpt4-") else case["source"]
        by_source[source] = by_source.get(source, 0) + 1
    print(json.dumps(by_source))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
