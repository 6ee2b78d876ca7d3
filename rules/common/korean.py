"""Korean text helpers: particle (조사) selection, won amounts and a politeness check.

Standard library only.

Final-consonant (받침) reading rules
-----------------------------------
The particle after a word depends on how its last syllable is *pronounced*:

* Hangul syllables (U+AC00..U+D7A3): final index ``(code - 0xAC00) % 28``; 0 means no final.
* Hangul compatibility jamo: consonants are read by their names (ㄱ 기역, ㄹ 리을, ...), all of
  which end in a consonant; vowels (ㅏ, ㅗ, ...) have none.
* Numbers are read in Sino-Korean. An integer is read by its last non-zero place: the digit
  itself when it is the ones digit (…8 → 팔), otherwise the place unit (10 십, 100 백,
  1000 천, 10⁴ 만, 10⁸ 억, 10¹² 조, 10¹⁶ 경, 10²⁰ 해, 10²⁴ 자); 0 is 영. Thousands separators
  are ignored. Digits after a decimal point are read one by one, so the last one counts,
  zero included (2.5 → 오, 2.50 → 영).
* ``%`` is read 퍼센트 (no final).
* Latin letters (documented heuristic, not a pronunciation dictionary):

  - a single letter, or a run with no lowercase letter (an acronym such as ``URL``, ``VW``),
    is read letter by letter, so the last letter's Korean name decides: only
    L 엘 (ㄹ), M 엠 (ㅁ), N 엔 (ㄴ) and R 알 (ㄹ) end in a consonant;
  - any other run is read as an English word: it ends in a consonant when it ends in
    ``ng`` (ㅇ), ``m``/``me`` (ㅁ), ``n``/``ne`` (ㄴ) or ``l``/``le`` (ㄹ) — game 게임,
    phone 폰, email 이메일, Google 구글. Every other ending counts as a vowel, because
    loanwords mostly add 으 after other consonants (test 테스트, desk 데스크, user 유저).

* Trailing characters that are not pronounced are skipped: whitespace, punctuation
  (closing brackets and quotes, ``.``, ``!``, ``-``, ``~``), symbols such as emoji, and
  combining/format marks (variation selectors, zero-width joiners).
* Anything else (Hanja, other scripts, ``+``, ``$``...) is unreadable and gives ``None``,
  as does a word with nothing pronounced in it.

Particle fallback
-----------------
When the final consonant is unknown, :func:`josa` writes both forms: the consonant form with
the vowel form in parentheses — ``이(가)``, ``을(를)``, ``은(는)``, ``과(와)``, ``아(야)``,
``이에요(예요)`` — except that when the vowel form is the tail of the consonant form only the
extra part is bracketed, as Korean writing does: ``(으)로``, ``(이)나``, ``(이)라``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "PARTICLE_PAIRS",
    "POLITE_ENDINGS",
    "final_consonant",
    "final_is_rieul",
    "has_final_consonant",
    "is_polite",
    "josa",
    "polite_violations",
    "split_sentences",
    "won",
]

_SYLLABLE_FIRST = 0xAC00
_SYLLABLE_LAST = 0xD7A3

# Index = (code - 0xAC00) % 28, as compatibility jamo; "" = no final consonant.
_FINALS = (
    "", "ㄱ", "ㄲ", "ㄳ", "ㄴ", "ㄵ", "ㄶ", "ㄷ", "ㄹ", "ㄺ", "ㄻ", "ㄼ", "ㄽ", "ㄾ",
    "ㄿ", "ㅀ", "ㅁ", "ㅂ", "ㅄ", "ㅅ", "ㅆ", "ㅇ", "ㅈ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ",
)

# Final sound of each consonant letter's name (기역, 쌍기역, 기역시옷, 니은, ...).
_JAMO_CONSONANT_FINAL = {
    "ㄱ": "ㄱ", "ㄲ": "ㄱ", "ㄳ": "ㅅ", "ㄴ": "ㄴ", "ㄵ": "ㅈ", "ㄶ": "ㅎ", "ㄷ": "ㄷ",
    "ㄸ": "ㄷ", "ㄹ": "ㄹ", "ㄺ": "ㄱ", "ㄻ": "ㅁ", "ㄼ": "ㅂ", "ㄽ": "ㅅ", "ㄾ": "ㅌ",
    "ㄿ": "ㅍ", "ㅀ": "ㅎ", "ㅁ": "ㅁ", "ㅂ": "ㅂ", "ㅃ": "ㅂ", "ㅄ": "ㅅ", "ㅅ": "ㅅ",
    "ㅆ": "ㅅ", "ㅇ": "ㅇ", "ㅈ": "ㅈ", "ㅉ": "ㅈ", "ㅊ": "ㅊ", "ㅋ": "ㅋ", "ㅌ": "ㅌ",
    "ㅍ": "ㅍ", "ㅎ": "ㅎ",
}
_JAMO_VOWELS = frozenset(chr(c) for c in range(0x314F, 0x3164))

# 영 일 이 삼 사 오 육 칠 팔 구
_DIGIT_FINAL = ("ㅇ", "ㄹ", "", "ㅁ", "", "", "ㄱ", "ㄹ", "ㄹ", "")
# Place units within a group of four: (ones), 십, 백, 천.
_SMALL_UNIT_FINAL = ("", "ㅂ", "ㄱ", "ㄴ")
# Myriad units: (none), 만, 억, 조, 경, 해, 자.
_LARGE_UNIT_FINAL = ("", "ㄴ", "ㄱ", "", "ㅇ", "", "")

# Korean names of Latin letters that end in a consonant: 엘, 엠, 엔, 알.
_LETTER_NAME_FINAL = {"l": "ㄹ", "m": "ㅁ", "n": "ㄴ", "r": "ㄹ"}
# English word endings read with a final consonant, longest first.
_WORD_ENDING_FINAL = (
    ("ng", "ㅇ"), ("me", "ㅁ"), ("ne", "ㄴ"), ("le", "ㄹ"), ("m", "ㅁ"), ("n", "ㄴ"), ("l", "ㄹ"),
)

# Not in a punctuation/symbol category but still silent after a word.
_SILENT_EXTRA = frozenset("~")


_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
"""Full-width ASCII (ＶＷ１２) reads like ASCII; NFKC is avoided because it would turn
compatibility jamo into conjoining jamo."""


def _is_silent(ch: str) -> bool:
    if ch == "%":
        return False  # punctuation by category, but read aloud (퍼센트)
    if ch.isspace() or ch in _SILENT_EXTRA:
        return True
    category = unicodedata.category(ch)
    # P*: punctuation incl. brackets/quotes; So/Sk: emoji and modifier symbols;
    # Mn/Me/Cf: variation selectors, ZWJ and other marks that decorate emoji.
    return category[0] == "P" or category in {"So", "Sk", "Mn", "Me", "Cf"}


def _is_latin(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def _number_final(run: str) -> str | None:
    digits = run.replace(",", "")
    if "." in digits:
        fraction = digits.rsplit(".", 1)[1]
        # Digits after the point are read one by one.
        return _DIGIT_FINAL[int(fraction[-1])]
    stripped = digits.rstrip("0")
    if not stripped:
        return _DIGIT_FINAL[0]  # 영
    zeros = len(digits) - len(stripped)
    if zeros == 0:
        return _DIGIT_FINAL[int(stripped[-1])]
    small, large = zeros % 4, zeros // 4
    if small:
        return _SMALL_UNIT_FINAL[small]
    if large < len(_LARGE_UNIT_FINAL):
        return _LARGE_UNIT_FINAL[large]
    return None  # beyond 자 (10^24): no common reading


def _latin_final(run: str) -> str:
    if len(run) == 1 or not any(c.islower() for c in run):
        return _LETTER_NAME_FINAL.get(run[-1].lower(), "")
    lowered = run.lower()
    for ending, final in _WORD_ENDING_FINAL:
        if lowered.endswith(ending):
            return final
    return ""


@lru_cache(maxsize=65536)  # the same ids, names and quoted requests recur across a run's rows
def final_consonant(word: str) -> str | None:
    """Final consonant of the last pronounced syllable of ``word``.

    Returns a compatibility jamo (``"ㄹ"``, ``"ㅂ"``, ...), ``""`` when that syllable ends in a
    vowel, or ``None`` when the word is empty or ends in something unreadable. See the module
    docstring for how digits, jamo and Latin letters are read.
    """
    chars = unicodedata.normalize("NFC", word).translate(_FULL_WIDTH)
    i = len(chars) - 1
    while i >= 0 and _is_silent(chars[i]):
        i -= 1
    if i < 0:
        return None
    ch = chars[i]
    code = ord(ch)
    if _SYLLABLE_FIRST <= code <= _SYLLABLE_LAST:
        return _FINALS[(code - _SYLLABLE_FIRST) % 28]
    if ch in _JAMO_CONSONANT_FINAL:
        return _JAMO_CONSONANT_FINAL[ch]
    if ch in _JAMO_VOWELS:
        return ""
    if ch == "%":
        return ""  # 퍼센트
    if ch.isascii() and ch.isdigit():
        start = i
        while start > 0 and (
            (chars[start - 1].isascii() and chars[start - 1].isdigit())
            or (chars[start - 1] in ".," and start > 1
                and chars[start - 2].isascii() and chars[start - 2].isdigit())
        ):
            start -= 1
        return _number_final(chars[start:i + 1])
    if _is_latin(ch):
        start = i
        while start > 0 and _is_latin(chars[start - 1]):
            start -= 1
        return _latin_final(chars[start:i + 1])
    return None


def has_final_consonant(word: str) -> bool | None:
    """Whether the last pronounced syllable of ``word`` has a final consonant (받침).

    ``None`` when the word is empty, only silent characters, or ends in something unreadable.
    """
    final = final_consonant(word)
    return None if final is None else final != ""


def final_is_rieul(word: str) -> bool:
    """Whether the last pronounced syllable ends in ㄹ (which takes 로, not 으로).

    Clusters such as ㄺ (닭) do not count: they take 으로. Unknown words give ``False``.
    """
    return final_consonant(word) == "ㄹ"


# pair -> (form after a final consonant, form after a vowel)
PARTICLE_PAIRS: dict[str, tuple[str, str]] = {
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "은/는": ("은", "는"),
    "과/와": ("과", "와"),
    "으로/로": ("으로", "로"),
    "이나/나": ("이나", "나"),
    "이라/라": ("이라", "라"),
    "이에요/예요": ("이에요", "예요"),
    "아/야": ("아", "야"),
}


def _fallback(consonant_form: str, vowel_form: str) -> str:
    if consonant_form.endswith(vowel_form):
        return f"({consonant_form[: -len(vowel_form)]}){vowel_form}"
    return f"{consonant_form}({vowel_form})"


def josa(word: str, pair: str) -> str:
    """Return ``word`` followed by the particle from ``pair`` that fits its last syllable.

    ``pair`` is one of :data:`PARTICLE_PAIRS` (e.g. ``"이/가"``). The first form follows a
    final consonant; for ``"으로/로"`` a final ㄹ also takes ``로``. When the reading is
    unknown both forms are written (``이(가)``, ``을(를)``, ``(으)로``...; see module docstring).

    >>> josa("VW-1298", "을/를")
    'VW-1298을'
    """
    try:
        consonant_form, vowel_form = PARTICLE_PAIRS[pair]
    except KeyError:
        raise ValueError(f"unknown particle pair {pair!r}; expected one of {sorted(PARTICLE_PAIRS)}") from None
    final = final_consonant(word)
    if final is None:
        return word + _fallback(consonant_form, vowel_form)
    if final == "" or (pair == "으로/로" and final == "ㄹ"):
        return word + vowel_form
    return word + consonant_form


def won(amount: int) -> str:
    """Format an integer amount of won with thousands separators: ``5,000원``."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"amount must be an int, got {type(amount).__name__}")
    return f"{amount:,}원"


def duration(seconds: float) -> str:
    """A span of time as people read it: ``45초``, ``4분 23초``, ``2시간 5분``, ``3일 4시간``, ``88일``.

    Under a minute in whole seconds (under ten, one decimal: ``0.4초``); then the two largest units,
    a zero second unit left out; from ten days on, days alone. A negative span is written with ``-``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
    if seconds < 0:
        return "-" + duration(-seconds)
    if seconds < 10 and seconds != int(seconds):
        return f"{seconds:.1f}초"
    s = int(round(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days >= 10:
        return f"{days:,}일"
    for big, big_unit, small, small_unit in ((days, "일", hours, "시간"), (hours, "시간", minutes, "분"),
                                             (minutes, "분", secs, "초")):
        if big:
            return f"{big}{big_unit}" + (f" {small}{small_unit}" if small else "")
    return f"{secs}초"


# --- politeness ---------------------------------------------------------------------------

# Human-readable list of the accepted sentence endings (the check itself is in
# _sentence_is_polite, because -ㅂ니다 means "any syllable with final ㅂ" + 니다).
POLITE_ENDINGS: tuple[str, ...] = ("-습니다.", "-ㅂ니다.", "-요.", "-요?", "-습니까?", "-ㅂ니까?")

_CLOSERS = "\"')]}»”’」』》〉】〕"
# Terminator run (plus closing quotes/brackets) before whitespace or the end of the line.
_SENTENCE_END = re.compile(rf"[.?!]+[{re.escape(_CLOSERS)}]*(?=\s|$)")


_QUOTE_OPEN, _QUOTE_CLOSE = "「", "」"


def inline(value: object) -> str:
    """A value from the data, safe to embed in a template sentence.

    Whitespace runs (line breaks included) become one space; a value holding sentence
    punctuation (``연애?``) is wrapped in 「」, inside which no sentence ends.
    """
    text = " ".join(str(value).split())
    if any(c in text for c in ".?!") and not (text.startswith(_QUOTE_OPEN) and text.endswith(_QUOTE_CLOSE)):
        return _QUOTE_OPEN + text.replace(_QUOTE_OPEN, "").replace(_QUOTE_CLOSE, "") + _QUOTE_CLOSE
    return text


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, each stripped, empty ones dropped.

    A sentence ends after a ``.``, ``?`` or ``!`` (optionally followed by closing quotes or
    brackets) that is followed by whitespace or the end of the text, so ``2.5`` and ``1,000``
    never split. Two or more periods in a row are an ellipsis and do not end a sentence, and
    neither does a terminator inside 「」 (a quoted value, see :func:`inline`).
    A line break also ends a sentence, so an unterminated chat line is not hidden inside the
    next one.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _SENTENCE_END.finditer(line):
            run = match.group().rstrip(_CLOSERS)
            if len(run) >= 2 and set(run) == {"."}:
                continue  # ellipsis
            before = line[: match.start()]
            if before.count(_QUOTE_OPEN) > before.count(_QUOTE_CLOSE):
                continue  # inside a quoted value: see inline()
            sentences.append(line[start:match.end()].strip())
            start = match.end()
        sentences.append(line[start:].strip())
    return [s for s in sentences if s]


def _has_final_bieup(ch: str) -> bool:
    code = ord(ch)
    return _SYLLABLE_FIRST <= code <= _SYLLABLE_LAST and _FINALS[(code - _SYLLABLE_FIRST) % 28] == "ㅂ"


@lru_cache(maxsize=65536)  # generated sentences repeat across rows
def _sentence_is_polite(sentence: str) -> bool:
    body = sentence.rstrip().rstrip(_CLOSERS)
    if len(body) < 2:
        return False
    mark, stem = body[-1], body[:-1]
    if stem.endswith((".", "?", "!")):
        return False  # "요?!", "요.." — exactly one terminator
    if stem.endswith("요"):
        return mark in ".?"
    if len(stem) >= 3 and _has_final_bieup(stem[-3]):
        if stem.endswith("니다"):
            return mark == "."
        if stem.endswith("니까"):
            return mark == "?"
    return False


def _contains_hangul(text: str) -> bool:
    return any(_SYLLABLE_FIRST <= ord(c) <= _SYLLABLE_LAST for c in text)


def polite_violations(text: str) -> list[str]:
    """Sentences of ``text`` (see :func:`split_sentences`) that do not end politely."""
    return [s for s in split_sentences(text) if not _sentence_is_polite(s)]


def is_polite(text: str) -> bool:
    """Whether every sentence of ``text`` ends in a polite (존댓말) ending with its mark.

    Rule: the text is not blank, contains at least one Hangul syllable, and every sentence
    from :func:`split_sentences`, ignoring closing quotes/brackets, ends in exactly one of

    * ``<syllable with final ㅂ>니다.`` — covers -습니다 and -ㅂ니다 (합니다, 됩니다, 갑니다);
    * ``요.`` or ``요?`` — -요, -에요, -예요, -세요, -나요? ... (the contraction 죠 is not accepted);
    * ``<syllable with final ㅂ>니까?`` — -습니까?, -ㅂ니까?.

    The mark is required: ``했습니다`` without ``.`` fails, as do ``!``, ``?!`` and ``..``.
    Plain-speech questions such as ``할까?`` fail because only 니까 before ``?`` is polite.

    Remembered per text with its ASCII digits read as 0, which no part of the rule tells apart:
    generated sentences differ mostly in their numbers.
    """
    return _is_polite(text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO))


# On the UTF-8 bytes: no other character's encoding holds an ASCII byte, and bytes translate
# an order of magnitude faster than text outside ASCII.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


@lru_cache(maxsize=16384)
def _is_polite(encoded: bytes) -> bool:
    text = encoded.decode("utf-8", "surrogatepass")
    if not text.strip() or not _contains_hangul(text):
        return False
    return not polite_violations(text)
