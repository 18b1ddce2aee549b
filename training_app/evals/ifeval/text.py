# Copyright 2023 The Google Research Authors.
# Copyright 2026 HAT Console authors (modifications: see NOTICE).
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Text measurements the instructions check: words, sentences, word tokens, language.

Ported from ``instructions_util.py`` of Google's instruction_following_eval (as carried by
lm-eval 0.4.13). What differs, and why:

- Punkt's English model is read from the ``punkt_tab/english`` files shipped in this package
  (NLTK's own data, byte for byte: see ``punkt_tab/PROVENANCE.md``) instead of
  ``nltk.download("punkt_tab")`` at import, so nothing is fetched at run time. The tokenizer is
  NLTK's ``PunktSentenceTokenizer`` with those parameters, i.e. what
  ``nltk.data.load("tokenizers/punkt/english.pickle")`` and ``nltk.sent_tokenize`` build from
  the installed data.
- ``word_tokenize`` is NLTK's ``word_tokenize`` (Punkt sentences, then NLTK's Treebank word
  tokenizer) over that same Punkt model, so it never looks the model up through ``nltk.data``.
- Language detection seeds langdetect (seed 0, the way langdetect documents for reproducible
  results) on a detector factory of our own, so a verdict never changes between runs and the
  global ``langdetect.DetectorFactory`` is left alone.
- Results are memoised per text (the loose check asks the same question of the same text
  several times); ``clear_caches`` empties the memos.
- The random keyword list and ``split_into_sentences`` (used only by instructions the registry
  leaves out) are not ported.
"""

from __future__ import annotations

import functools
import threading
from importlib import resources
from types import MappingProxyType

from langdetect import DetectorFactory, LangDetectException
from langdetect.detector_factory import PROFILES_DIRECTORY
from nltk.tabdata import PunktDecoder
from nltk.tokenize import NLTKWordTokenizer, RegexpTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

__all__ = [
    "LANGUAGE_CODES",
    "LANGUAGE_DETECTION_SEED",
    "LanguageNotDetected",
    "clear_caches",
    "count_sentences",
    "count_words",
    "detect_language",
    "sentence_tokenizer",
    "word_tokenize",
]

# ISO 639-1 codes to language names (the reference's LANGUAGE_CODES).
LANGUAGE_CODES = MappingProxyType(
    {
        "en": "English",
        "es": "Spanish",
        "pt": "Portuguese",
        "ar": "Arabic",
        "hi": "Hindi",
        "fr": "French",
        "ru": "Russian",
        "de": "German",
        "ja": "Japanese",
        "it": "Italian",
        "bn": "Bengali",
        "uk": "Ukrainian",
        "th": "Thai",
        "ur": "Urdu",
        "ta": "Tamil",
        "te": "Telugu",
        "bg": "Bulgarian",
        "ko": "Korean",
        "pl": "Polish",
        "he": "Hebrew",
        "fa": "Persian",
        "vi": "Vietnamese",
        "ne": "Nepali",
        "sw": "Swahili",
        "kn": "Kannada",
        "mr": "Marathi",
        "gu": "Gujarati",
        "pa": "Punjabi",
        "ml": "Malayalam",
        "fi": "Finnish",
    }
)

LANGUAGE_DETECTION_SEED = 0
_MEMO_SIZE = 4096
_PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")

_word_counter = RegexpTokenizer(r"\w+")
_treebank = NLTKWordTokenizer()
_load_lock = threading.Lock()
_language_factory: DetectorFactory | None = None


class LanguageNotDetected(Exception):
    """langdetect found nothing to judge (e.g. no letters); the reference counts the
    instruction as followed then."""


@functools.cache
def sentence_tokenizer() -> PunktSentenceTokenizer:
    """NLTK's Punkt sentence tokenizer with the English model shipped in this package."""
    model = resources.files(__package__).joinpath("punkt_tab", "english")
    missing = [name for name in _PUNKT_FILES if not model.joinpath(name).is_file()]
    if missing:
        raise RuntimeError(f"the packaged Punkt model lacks {', '.join(missing)}")
    decoder = PunktDecoder()
    params = PunktParameters()
    # The same decoding, file by file, as nltk.tokenize.punkt.load_punkt_params.
    with model.joinpath("collocations.tab").open(encoding="utf-8") as f:
        params.collocations = set(decoder.tab2tups(f))
    with model.joinpath("sent_starters.txt").open(encoding="utf-8") as f:
        params.sent_starters = decoder.txt2set(f)
    with model.joinpath("abbrev_types.txt").open(encoding="utf-8") as f:
        params.abbrev_types = decoder.txt2set(f)
    with model.joinpath("ortho_context.tab").open(encoding="utf-8") as f:
        params.ortho_context = decoder.tab2intdict(f)
    return PunktSentenceTokenizer(params)


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(sentence_tokenizer().tokenize(text))


def count_words(text: str) -> int:
    """Counts the number of words (runs of ``\\w``), as the reference does."""
    return len(_word_counter.tokenize(text))


def count_sentences(text: str) -> int:
    """Counts the sentences Punkt finds."""
    return len(_sentences(text))


@functools.lru_cache(maxsize=_MEMO_SIZE)
def word_tokenize(text: str) -> tuple[str, ...]:
    """``nltk.word_tokenize(text)`` (English), over the packaged Punkt model."""
    return tuple(token for sentence in _sentences(text) for token in _treebank.tokenize(sentence))


def _factory() -> DetectorFactory:
    global _language_factory
    with _load_lock:
        if _language_factory is None:
            factory = DetectorFactory()
            factory.load_profile(PROFILES_DIRECTORY)
            # Detector copies factory.seed into its own random.Random: seeded, every
            # detection of a text gives the same answer.
            factory.seed = LANGUAGE_DETECTION_SEED
            _language_factory = factory
        return _language_factory


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _detect(text: str) -> str | None:
    detector = _factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def detect_language(text: str) -> str:
    """``langdetect.detect(text)`` with a fixed seed; raises ``LanguageNotDetected`` where
    langdetect raises ``LangDetectException``."""
    language = _detect(text)
    if language is None:
        raise LanguageNotDetected(text[:80])
    return language


def clear_caches() -> None:
    """Forget the memoised measurements (the loaded models stay)."""
    _sentences.cache_clear()
    word_tokenize.cache_clear()
    _detect.cache_clear()
