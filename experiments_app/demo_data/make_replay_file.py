"""Build the latency replay set from the demo catalog: realistic viewer comments.

    python experiments_app/demo_data/make_replay_file.py [--count 100] [--seed 2026] \
        [--out experiments_app/demo_data/replay_100.jsonl]

Each line is ``{"comment", "product_sku", "uv_id", "recent_comments"}``: the comment a viewer
typed, the product on screen when they typed it, who they are, and the comments just before
it. The mix follows what a live-commerce host is asked on air: price, size, stock, coupons,
shipping, returns, material and care, plus chit-chat and a few comments phrased the way
people actually type (lower case, abbreviations, no product named). Deterministic for a
seed, so the committed file can be rebuilt byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CATALOG = HERE.parent.parent / "harness_app" / "demo_data" / "products.csv"
DEFAULT_OUT = HERE / "replay_100.jsonl"

# (weight, templates). {title} / {short} / {size} / {color} / {price} / {is} come from the
# product; a template naming {size} or {color} is only used for products that have them, and
# a template ending in "|group" only for products in that group of categories.
CATEGORY_GROUPS: dict[str, set[str]] = {
    "clothes": {"knitwear", "outerwear", "dresses", "basics"},
    "sized": {"knitwear", "outerwear", "dresses", "basics", "denim", "footwear"},
    "textile": {"knitwear", "outerwear", "dresses"},
    "warm": {"knitwear", "outerwear", "dresses", "accessories"},
    "tops": {"knitwear", "outerwear", "basics"},
}
INTENTS: dict[str, tuple[int, list[str]]] = {
    "price": (
        18,
        [
            "How much {is} the {short}?",
            "what's the price on the {short}",
            "{Is} the {title} still {price}?",
            "price pls",
            "{Is} the {short} on sale today or full price?",
            "How much for two of the {short}?",
        ],
    ),
    "size": (
        16,
        [
            "I'm 165 cm and 55 kg, which size of the {short} should I get?|clothes",
            "Does the {short} run small? I'm usually a {size}|clothes",
            "is {size} available in {color}?",
            "What sizes {is} the {short} available in?|sized",
            "size chart for the {short}?|clothes",
            "my husband is 180cm 75kg, what size?|tops",
        ],
    ),
    "stock": (
        14,
        [
            "{Is} the {short} in stock in {size}?",
            "any {color} left??",
            "How much stock is left on the {short}?",
            "sold out in {size} already?",
            "when will {size} be restocked",
        ],
    ),
    "coupon": (
        12,
        [
            "Is there a coupon for the {short}?",
            "any discount code today?",
            "Does AUTUMN20 work on the {short}?",
            "how do I get the 20 off?",
            "can I stack coupons if I buy the {short} and something else?",
        ],
    ),
    "shipping": (
        10,
        [
            "How long does shipping take?",
            "do you ship to Canada?",
            "If I order the {short} now when does it arrive?",
            "is shipping free over a certain amount?",
        ],
    ),
    "returns": (
        10,
        [
            "Can I return the {short} if I don't like it?",
            "what's the return policy",
            "Who pays return shipping?",
            "can i exchange for a different size later?",
        ],
    ),
    "material": (
        8,
        [
            "What {is} the {short} made of?",
            "is it itchy? I have sensitive skin|textile",
            "How do I wash the {short}?",
            "{is} the {short} warm enough for winter?|warm",
        ],
    ),
    "chit_chat": (
        8,
        [
            "Hi everyone! Just joined 👋",
            "love your outfit today!",
            "the {color} one looks so good on you",
            "Greetings from Lisbon!",
            "first time watching, this is fun",
        ],
    ),
    "other_phrasing": (
        4,
        [
            "¿Cuánto cuesta el {short}?",
            "Combien coûte le {short} ?",
            "how much???? 😍😍",
            "link?",
            "u have M??|clothes",
        ],
    ),
}
CHATTER = [
    "hi!",
    "hello from Berlin",
    "love this stream",
    "👋👋",
    "so cute",
    "what's next?",
    "can you show the back?",
    "lighting is great today",
    "just bought one!",
    "nice",
]


def load_catalog(path: Path = CATALOG) -> list[dict[str, Any]]:
    products = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            attributes = json.loads(row["attributes"] or "{}")
            sizes = [s for s in attributes.get("sizes") or [] if s != "one size"]
            products.append(
                {
                    "sku": row["sku"],
                    "title": row["title"],
                    "price": row["price"],
                    "category": attributes.get("category") or row["sku"][:2].lower(),
                    "sizes": sizes,
                    "colors": attributes.get("colors") or [],
                }
            )
    return products


# Where the last word or two of the title is not what a viewer would say.
SHORT_NAMES = {"JN-3001": "straight jeans", "BT-9501": "serum", "BT-9502": "sunscreen"}


def short_name(title: str, sku: str = "") -> str:
    """What a viewer calls it: the last word or two ("sweater", "chelsea boots")."""
    if sku in SHORT_NAMES:
        return SHORT_NAMES[sku]
    words = [w for w in title.replace("(", " ").replace(")", " ").split() if w.isalpha()]
    tail = words[-2:] if len(words) >= 2 and len(words[-1]) <= 5 else words[-1:]
    return " ".join(tail).lower() or title.lower()


def verb_forms(short: str) -> dict[str, str]:
    plural = short.endswith("s") and not short.endswith("ss")
    return {"is": "are" if plural else "is", "Is": "Are" if plural else "Is"}


def usable(template: str, product: dict[str, Any]) -> bool:
    text, _, group = template.partition("|")
    if group and product["category"] not in CATEGORY_GROUPS[group]:
        return False
    return ("{size}" not in text or bool(product["sizes"])) and (
        "{color}" not in text or bool(product["colors"])
    )


def make_requests(count: int, seed: int, catalog: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    names = list(INTENTS)
    weights = [INTENTS[name][0] for name in names]
    requests = []
    for index in range(count):
        product = rng.choice(catalog)
        intent = rng.choices(names, weights)[0]
        templates = [t for t in INTENTS[intent][1] if usable(t, product)]
        if not templates:  # e.g. a size question about a serum: ask about the price instead
            templates = INTENTS["price"][1]
        short = short_name(product["title"], product["sku"])
        comment = (
            rng.choice(templates)
            .partition("|")[0]
            .format(
                title=product["title"],
                short=short,
                size=rng.choice(product["sizes"] or ["M"]),
                color=rng.choice(product["colors"] or ["black"]),
                price=f"${product['price']}",
                **verb_forms(short),
            )
        )
        recent = rng.sample(CHATTER, k=rng.randint(0, 3))
        requests.append(
            {
                "comment": comment,
                # chit-chat now and then arrives between product segments: nothing on screen
                "product_sku": ""
                if intent == "chit_chat" and rng.random() < 0.5
                else product["sku"],
                "uv_id": f"uv-{rng.randint(1, 60):04d}",
                "recent_comments": recent,
            }
        )
        del index
    return requests


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    lines = make_requests(args.count, args.seed, load_catalog())
    args.out.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), "utf-8"
    )
    print(f"wrote {len(lines)} requests to {args.out}")


if __name__ == "__main__":
    main()
